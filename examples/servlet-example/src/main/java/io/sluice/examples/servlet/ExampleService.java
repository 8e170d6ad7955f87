package io.sluice.examples.servlet;

import io.sluice.http.RateLimitFilter;
import io.sluice.http.RateLimitFilterConfig;
import io.sluice.node.Limit;
import io.sluice.node.Mode;
import io.sluice.node.RequestLimiter;
import io.sluice.node.Rule;
import io.sluice.node.Rules;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A small API rate limited by {@link RateLimitFilter}: every limit of a real service in one place.
 * <ul>
 *   <li>{@code per-ip}: 100 requests a minute per client address (behind the proxies listed in
 *       {@code TRUSTED_PROXIES}, the address they forwarded);</li>
 *   <li>{@code free} / {@code pro}: 10 or 100 a minute per API key, by the key's plan;</li>
 *   <li>{@code login}: 5 {@code POST /login} per 15 minutes per address;</li>
 *   <li>{@code search-dry-run}: a shadow limit on {@code /api/search/**}, recorded, never enforced.</li>
 * </ul>
 * Run: {@code examples/servlet-example/run.sh} then {@code curl -i -H 'X-API-Key: free-1' localhost:8081/api/hello}.
 * With {@code SLUICE_REDIS=redis://127.0.0.1:6379} every limit is shared through that Redis
 * ({@link SyncedLimiter}): start the service twice, on two ports, and both instances enforce one limit.
 */
public final class ExampleService implements AutoCloseable {
  /** The service's accounts: API key to plan (a database in a real service). */
  static final Map<String, String> PLANS = Map.of("free-1", "free", "free-2", "free", "pro-1", "pro");

  private final Server server;
  private final ServerConnector connector;
  private final RequestLimiter limiter;
  private final RedisCounterStore store;

  private ExampleService(Server server, ServerConnector connector, RequestLimiter limiter, RedisCounterStore store) {
    this.server = server;
    this.connector = connector;
    this.limiter = limiter;
    this.store = store;
  }

  /** The service's rules; with a store, each limit is shared by every instance that uses that store. */
  static RequestLimiter limiter(RedisCounterStore store) {
    Limit perIp = Limit.slidingWindowCounter("per-ip").limit(100).window(Duration.ofMinutes(1)).build();
    Limit free = Limit.slidingWindowCounter("free").limit(10).window(Duration.ofMinutes(1)).build();
    Limit pro = Limit.slidingWindowCounter("pro").limit(100).window(Duration.ofMinutes(1)).build();
    Limit login = Limit.fixedWindow("login").limit(5).window(Duration.ofMinutes(15)).build();
    Limit searchDryRun = Limit.slidingWindowCounter("search-dry-run").limit(2).window(Duration.ofMinutes(1))
        .mode(Mode.SHADOW).build();
    RequestLimiter.Builder builder = RequestLimiter.builder(Rules.builder()
        .always(Rule.of(perIp, RateLimitFilter.IP))
        .plan("free", Rule.of(free, RateLimitFilter.API_KEY))
        .plan("pro", Rule.of(pro, RateLimitFilter.API_KEY))
        .defaultPlan("free")
        .endpoint("POST", "/login", Rule.of(login, RateLimitFilter.IP))
        .endpoint("GET", "/api/search/**", Rule.of(searchDryRun, RateLimitFilter.CLIENT))
        .build());
    if (store != null) {
      builder.limiters(limit -> SyncedLimiter.builder(limit, store).build());
    }
    return builder.build();
  }

  /** Starts on loopback with limits of its own; port 0 picks a free one. */
  public static ExampleService start(int port, String... trustedProxies) throws Exception {
    return start(port, null, trustedProxies);
  }

  /** Starts on loopback; with a Redis URI (else null) its limits are shared with every instance using it. */
  public static ExampleService start(int port, String redisUri, String... trustedProxies) throws Exception {
    RedisCounterStore store = redisUri == null ? null
        : RedisCounterStore.connect(RedisStoreConfig.builder(redisUri).build());
    RequestLimiter limiter;
    try {
      limiter = limiter(store);
    } catch (RuntimeException e) {
      if (store != null) {
        store.close();
      }
      throw e;
    }
    RateLimitFilter filter = new RateLimitFilter(RateLimitFilterConfig.builder(limiter)
        .apiKeyHeader("X-API-Key")
        .trustedProxies(trustedProxies)
        .planResolver(request -> {
          String key = request.getHeader("X-API-Key");
          return key == null ? null : PLANS.get(key); // unknown or no key: the default plan
        })
        .build());

    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(port);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.setContextPath("/");
    context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
    context.addServlet(new ServletHolder(new JsonServlet("{\"hello\":\"world\"}")), "/api/*");
    context.addServlet(new ServletHolder(new JsonServlet("{\"session\":\"welcome\"}")), "/login");
    server.setHandler(context);
    try {
      server.start();
    } catch (Exception e) {
      limiter.close();
      if (store != null) {
        store.close();
      }
      throw e;
    }
    return new ExampleService(server, connector, limiter, store);
  }

  public URI uri() {
    return URI.create("http://127.0.0.1:" + connector.getLocalPort());
  }

  RequestLimiter requestLimiter() {
    return limiter;
  }

  @Override
  public void close() throws Exception {
    server.stop();
    limiter.close(); // (shared limits: flushes what this instance admitted)
    if (store != null) {
      store.close();
    }
  }

  public static void main(String[] args) throws Exception {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 8081;
    String proxies = System.getenv().getOrDefault("TRUSTED_PROXIES", "");
    String redis = System.getenv("SLUICE_REDIS");
    ExampleService service = start(port, redis == null || redis.isBlank() ? null : redis,
        proxies.isBlank() ? new String[0] : proxies.split("\\s*,\\s*"));
    System.out.println("example service on " + service.uri() + (service.store != null ? " (limits shared through "
        + redis + ")" : "") + " — try: curl -i -H 'X-API-Key: free-1' " + service.uri() + "/api/hello");
    service.server.join();
  }

  private static final class JsonServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final String body;

    JsonServlet(String body) {
      this.body = body;
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      resp.setContentType("application/json");
      resp.getWriter().write(body);
    }
  }
}
