package io.sluice.http;

import io.sluice.node.Decision;
import io.sluice.node.RateLimitHeaders;
import io.sluice.node.RequestContext;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * A Jakarta Servlet filter (Servlet 6.0 and later) that checks every request against the rules of a
 * {@link io.sluice.node.RequestLimiter}:
 * <ul>
 *   <li>identities: {@value #API_KEY} (the API key header), {@value #USER} (the authenticated user,
 *       {@code getUserPrincipal()}), {@value #IP} (the client address, see
 *       {@link RateLimitFilterConfig.Builder#trustedProxies}), {@value #CLIENT} (the API key, else the
 *       user, else the address), and any the config adds;</li>
 *   <li>plan from the config's {@link PlanResolver}; endpoint from the method and the path within
 *       the application (servlet path plus path info, as the container decoded and normalised it, so
 *       that {@code /%6Cogin} meets the rules of {@code /login});</li>
 *   <li>a denied request is answered {@code 429} with {@code Retry-After}, {@code RateLimit-Policy},
 *       {@code RateLimit} and {@code X-RateLimit-*} and a small JSON body, and goes no further; an
 *       allowed one carries the same fields (but {@code Retry-After}). Shadow limits never deny and
 *       never show; soft limits allow. A leaky-bucket shaper's delay is waited out here.</li>
 * </ul>
 * A request to which no limit applies (no rule matches, or none of its keys resolves) passes
 * untouched. An API key or user name longer than the configured maximum is answered {@code 400}.
 *
 * <p>The API key is taken as sent: pair a per-key limit with a per-IP one, or validate keys before
 * this filter, or a client can mint fresh budgets by inventing keys.
 *
 * <pre>{@code
 * servletContext.addFilter("sluice", new RateLimitFilter(config)).addMappingForUrlPatterns(null, false, "/*");
 * }</pre>
 */
public final class RateLimitFilter implements Filter {
  public static final String API_KEY = "api-key";
  public static final String USER = "user";
  public static final String IP = "ip";
  public static final String CLIENT = "client";
  public static final int TOO_MANY_REQUESTS = 429;

  private final RateLimitFilterConfig config;

  public RateLimitFilter(RateLimitFilterConfig config) {
    if (config == null) {
      throw new IllegalArgumentException("config: must not be null");
    }
    this.config = config;
  }

  public RateLimitFilterConfig config() {
    return config;
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (!(request instanceof HttpServletRequest) || !(response instanceof HttpServletResponse)) {
      chain.doFilter(request, response);
      return;
    }
    HttpServletRequest req = (HttpServletRequest) request;
    HttpServletResponse res = (HttpServletResponse) response;
    RequestContext context = contextOf(req, res);
    if (context == null) {
      return; // answered 400: an identity longer than the maximum
    }
    Decision decision;
    try {
      decision = config.limiter().checkIfAnyApplies(context, 1);
    } catch (IllegalArgumentException refused) {
      // the plan resolver named a plan the rules do not have, and there is no default (or a resolver
      // gave an empty key): a deployment error
      throw new ServletException("sluice: " + refused.getMessage(), refused);
    }
    if (decision == null) {
      chain.doFilter(request, response); // no limit applies to this request
      return;
    }
    for (Map.Entry<String, String> field : RateLimitHeaders.of(decision).entrySet()) {
      res.setHeader(field.getKey(), field.getValue());
    }
    if (!decision.allowed()) {
      reject(res, TOO_MANY_REQUESTS, RateLimitResponses.denied(decision));
      return;
    }
    if (decision.delayNanos() > 0) {
      LockSupport.parkNanos(decision.delayNanos()); // a shaper: hold the request to keep the rate
    }
    chain.doFilter(request, response);
  }

  /**
   * The request's plan, endpoint and identities; null when an identity is longer than the configured
   * maximum, after answering 400.
   */
  private RequestContext contextOf(HttpServletRequest req, HttpServletResponse res) throws IOException {
    String apiKey = config.apiKeyHeader() == null ? null : req.getHeader(config.apiKeyHeader());
    if (tooLong(apiKey)) {
      reject(res, 400, RateLimitResponses.tooLong(config.apiKeyHeader(), config.maxKeyLength()));
      return null;
    }
    Principal principal = req.getUserPrincipal();
    String user = principal == null ? null : principal.getName();
    if (tooLong(user)) {
      reject(res, 400, RateLimitResponses.userNameTooLong(config.maxKeyLength()));
      return null;
    }
    String ip = IpAddresses.clientKey(
        config.proxies().clientAddress(req.getRemoteAddr(), req.getHeaders(config.forwardedForHeader())),
        config.ipv6PrefixLength());

    RequestContext.Builder b = RequestContext.builder()
        .plan(config.planResolver().plan(req))
        .endpoint(req.getMethod(), pathOf(req))
        .identity(API_KEY, apiKey)
        .identity(USER, user)
        .identity(IP, ip)
        .identity(CLIENT, firstOf(apiKey, user, ip));
    for (Map.Entry<String, Function<HttpServletRequest, String>> e : config.identities().entrySet()) {
      String value = e.getValue().apply(req);
      if (tooLong(value)) {
        reject(res, 400, RateLimitResponses.tooLong(e.getKey(), config.maxKeyLength()));
        return null;
      }
      b.identity(e.getKey(), value);
    }
    return b.build();
  }

  /** The path within the application, decoded and normalised by the container. */
  static String pathOf(HttpServletRequest req) {
    String servletPath = req.getServletPath();
    String pathInfo = req.getPathInfo();
    String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
    return path.startsWith("/") ? path : "/" + path;
  }

  private boolean tooLong(String identity) {
    return identity != null && identity.length() > config.maxKeyLength();
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

  private static void reject(HttpServletResponse res, int status, String json) throws IOException {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    res.setStatus(status);
    res.setContentType("application/json");
    res.setCharacterEncoding("UTF-8");
    res.setContentLength(body.length);
    res.getOutputStream().write(body);
  }
}
