package io.sluice.spring;

import io.sluice.http.ClientAddresses;
import io.sluice.http.RateLimitFilter;
import io.sluice.http.RateLimitResponses;
import io.sluice.node.Decision;
import io.sluice.node.RateLimitHeaders;
import io.sluice.node.RequestContext;
import io.sluice.node.RequestLimiter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The WebFlux counterpart of {@link RateLimitFilter}: every request checked against the rules of a
 * {@link RequestLimiter} through its non-blocking form ({@link RequestLimiter#checkIfAnyAppliesAsync}),
 * so that no event-loop thread waits for the store. The same identities ({@code api-key} from the API
 * key header, {@code user} from the exchange's principal, {@code ip} behind trusted proxies, {@code
 * client}, and the identity headers), the same plan header, the same answers: {@code 429} with {@code
 * Retry-After}, {@code RateLimit-Policy}, {@code RateLimit} and {@code X-RateLimit-*} and the same JSON
 * body; an allowed request carries the same fields but {@code Retry-After}; {@code 400} for an identity
 * longer than the maximum. A leaky-bucket shaper's delay is a timer, not a sleeping thread.
 *
 * <p>A decision that needs no store call is made on the event loop as the request arrives; one that
 * waits for the store completes on another thread (see {@code SyncedLimiter.acquireAsync}), and the
 * request goes on on Reactor's parallel scheduler, not on the store client's I/O thread. The endpoint
 * is the method and the path within the application (after {@code spring.webflux.base-path}), its
 * segments decoded.
 *
 * <p>Registered by {@link SluiceAutoConfiguration} on reactive web applications ({@code sluice.filter.*};
 * a {@code PlanResolver} or {@code SluiceFilterCustomizer} bean is for the servlet filter only).
 */
public final class SluiceWebFilter implements WebFilter, Ordered {
  /** How a request's context is decided: the request limiter's async check (a test swaps in others). */
  @FunctionalInterface
  interface Decider {
    CompletionStage<Decision> decide(RequestContext request, long cost);
  }

  private static final String FORWARDED_FOR = "X-Forwarded-For";
  private static final MediaType JSON = new MediaType("application", "json", StandardCharsets.UTF_8);

  private final Decider decider;
  private final String apiKeyHeader;
  private final ClientAddresses addresses;
  private final int maxKeyLength;
  private final String planHeader;
  private final Map<String, String> identityHeaders;
  private final List<String> urlPatterns;
  private final int order;

  SluiceWebFilter(RequestLimiter limiter, SluiceProperties.Filter settings) {
    this(limiter::checkIfAnyAppliesAsync, settings);
  }

  SluiceWebFilter(Decider decider, SluiceProperties.Filter settings) {
    this.decider = decider;
    this.apiKeyHeader = settings.getApiKeyHeader();
    this.addresses = ClientAddresses.of(settings.getTrustedProxies(), settings.getIpv6PrefixLength());
    this.maxKeyLength = settings.getMaxKeyLength();
    this.planHeader = settings.getPlanHeader();
    this.identityHeaders = Map.copyOf(settings.getIdentityHeaders());
    this.urlPatterns = List.copyOf(settings.getUrlPatterns());
    this.order = settings.getOrder();
  }

  @Override
  public int getOrder() {
    return order;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    ServerHttpRequest req = exchange.getRequest();
    String path = pathOf(req);
    if (!applies(path)) {
      return chain.filter(exchange);
    }
    String apiKey = apiKeyHeader == null ? null : req.getHeaders().getFirst(apiKeyHeader);
    if (tooLong(apiKey)) {
      return reject(exchange, 400, RateLimitResponses.tooLong(apiKeyHeader, maxKeyLength));
    }
    return exchange.getPrincipal().map(Principal::getName).map(Optional::of).defaultIfEmpty(Optional.empty())
        .flatMap(user -> check(exchange, chain, path, apiKey, user.orElse(null)));
  }

  private Mono<Void> check(ServerWebExchange exchange, WebFilterChain chain, String path, String apiKey, String user) {
    if (tooLong(user)) {
      return reject(exchange, 400, RateLimitResponses.userNameTooLong(maxKeyLength));
    }
    ServerHttpRequest req = exchange.getRequest();
    InetSocketAddress peer = req.getRemoteAddress();
    String remote = peer == null ? null : peer.getAddress() != null ? peer.getAddress().getHostAddress() : peer.getHostString();
    String ip = remote == null ? null : addresses.clientKey(remote, req.getHeaders().getOrEmpty(FORWARDED_FOR));
    RequestContext.Builder b = RequestContext.builder()
        .plan(planHeader == null ? null : req.getHeaders().getFirst(planHeader))
        .endpoint(req.getMethod().name(), path)
        .identity(RateLimitFilter.API_KEY, apiKey)
        .identity(RateLimitFilter.USER, user)
        .identity(RateLimitFilter.IP, ip)
        .identity(RateLimitFilter.CLIENT, firstOf(apiKey, user, ip));
    for (Map.Entry<String, String> e : identityHeaders.entrySet()) {
      String value = req.getHeaders().getFirst(e.getValue());
      if (tooLong(value)) {
        return reject(exchange, 400, RateLimitResponses.tooLong(e.getKey(), maxKeyLength));
      }
      b.identity(e.getKey(), value);
    }
    CompletableFuture<Decision> decision;
    try {
      decision = decider.decide(b.build(), 1).toCompletableFuture();
    } catch (IllegalArgumentException refused) {
      // the plan header named a plan the rules do not have, and there is no default: a deployment error
      return Mono.error(new IllegalStateException("sluice: " + refused.getMessage(), refused));
    }
    if (decision.isDone()) {
      // decided on this thread, without the store: no hop
      return answer(exchange, chain, decision.join());
    }
    // decided on the store's thread (or a waiting one): the request goes on on a parallel worker, so
    // that the application's handler never runs on the store client's I/O thread
    return Mono.fromFuture(decision.thenApply(Optional::ofNullable)).publishOn(Schedulers.parallel())
        .flatMap(d -> answer(exchange, chain, d.orElse(null)));
  }

  private Mono<Void> answer(ServerWebExchange exchange, WebFilterChain chain, Decision decision) {
    if (decision == null) {
      return chain.filter(exchange); // no limit applies to this request
    }
    ServerHttpResponse res = exchange.getResponse();
    RateLimitHeaders.of(decision).forEach(res.getHeaders()::set);
    if (!decision.allowed()) {
      return reject(exchange, RateLimitFilter.TOO_MANY_REQUESTS, RateLimitResponses.denied(decision));
    }
    if (decision.delayNanos() > 0) {
      // a shaper: the request is held on a timer to keep the rate
      return Mono.delay(Duration.ofNanos(decision.delayNanos())).then(chain.filter(exchange));
    }
    return chain.filter(exchange);
  }

  private static Mono<Void> reject(ServerWebExchange exchange, int status, String json) {
    ServerHttpResponse res = exchange.getResponse();
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    res.setStatusCode(HttpStatusCode.valueOf(status));
    res.getHeaders().setContentType(JSON);
    res.getHeaders().setContentLength(body.length);
    return res.writeWith(Mono.just(res.bufferFactory().wrap(body)));
  }

  /** The path within the application, each segment decoded (path parameters left out). */
  static String pathOf(ServerHttpRequest req) {
    StringBuilder b = new StringBuilder();
    for (PathContainer.Element e : req.getPath().pathWithinApplication().elements()) {
      b.append(e instanceof PathContainer.PathSegment s ? s.valueToMatch() : e.value());
    }
    return b.length() == 0 || b.charAt(0) != '/' ? "/" + b : b.toString();
  }

  /** Whether one of the URL patterns ({@code sluice.filter.url-patterns}, servlet mapping syntax) holds for the path. */
  private boolean applies(String path) {
    for (String p : urlPatterns) {
      if (p.equals("/*") || p.equals("/")) {
        return true;
      }
      if (p.endsWith("/*")) {
        String prefix = p.substring(0, p.length() - 2);
        if (path.equals(prefix) || path.startsWith(prefix + "/")) {
          return true;
        }
      } else if (p.startsWith("*.")) {
        if (path.endsWith(p.substring(1))) {
          return true;
        }
      } else if (path.equals(p)) {
        return true;
      }
    }
    return false;
  }

  private boolean tooLong(String identity) {
    return identity != null && identity.length() > maxKeyLength;
  }

  private static String firstOf(String a, String b, String c) {
    if (a != null && !a.isEmpty()) {
      return a;
    }
    if (b != null && !b.isEmpty()) {
      return b;
    }
    return c;
  }
}
