package io.sluice.sidecar;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.micrometer.registry.otlp.OtlpConfig;
import io.micrometer.registry.otlp.OtlpMeterRegistry;
import io.sluice.node.Limit;
import io.sluice.sync.SyncConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.SyncedLimiterMetrics;
import io.sluice.sync.hazelcast.HazelcastCounterStore;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.CounterStore;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The check sidecar ({@code sluice serve}): an HTTP server on Jetty 12 that decides for services in
 * any language, through limiter-sync, against Redis or an embedded Hazelcast member.
 *
 * <ul>
 *   <li>{@code POST /check} with {@code {"key":"user-1","cost":1,"limit":"api"}} ({@code cost}
 *       defaults to 1; {@code limit} may be left out when only one is configured), or with a rules
 *       file {@code {"identities":{"ip":"..."},"plan":"pro","method":"POST","path":"/login"}}: 200 when allowed,
 *       429 when denied, with a JSON decision ({@code allowed, outcome, limit, remaining, resetSeconds,
 *       retryAfterSeconds}) and the {@code RateLimit-Policy}, {@code RateLimit}, {@code Retry-After}
 *       and {@code X-RateLimit-*} fields a 429 of the calling service would carry;</li>
 *   <li>{@code GET /health}: {@code UP}, or {@code DEGRADED} while a limit's store breaker is open
 *       (still 200: the fallback policy keeps deciding);</li>
 *   <li>{@code GET /metrics}: Prometheus text ({@code sluice.decisions}, {@code sluice.sync.*},
 *       {@code http.server.requests}, Micrometer's standard name, with a percentile histogram, JVM).</li>
 * </ul>
 * With an OTLP endpoint ({@link ServeConfig#otlpEndpoint()}) the same meters are also pushed over
 * OTLP/HTTP to an OpenTelemetry collector every {@link ServeConfig#otlpStep()}.
 * Bad input (malformed JSON, a missing or too long key, an unknown limit or field, a bad cost, a body
 * over the cap, a wrong method or path) is answered 4xx with {@code {"error": "...", "field": ...}};
 * the server keeps serving.
 *
 * <pre>{@code
 * try (SluiceServer server = SluiceServer.start(ServeConfig.builder()
 *     .limit(LimitSpec.parse("api=1000/1m")).redis("redis://127.0.0.1:6379").port(8080).build())) {
 *   server.join();
 * }
 * }</pre>
 */
public final class SluiceServer implements AutoCloseable {
  private final ServeConfig config;
  private final List<CounterStore> stores;
  private final Map<String, SyncedLimiter> limiters;
  private final PrometheusMeterRegistry registry;
  /** Null without an OTLP endpoint. */
  private final OtlpMeterRegistry otlp;
  private final JvmGcMetrics gcMetrics;
  private final Server server;
  private final ServerConnector connector;

  private SluiceServer(ServeConfig config, List<CounterStore> stores, Map<String, SyncedLimiter> limiters,
      PrometheusMeterRegistry registry, OtlpMeterRegistry otlp, JvmGcMetrics gcMetrics, Server server,
      ServerConnector connector) {
    this.config = config;
    this.stores = stores;
    this.limiters = limiters;
    this.registry = registry;
    this.otlp = otlp;
    this.gcMetrics = gcMetrics;
    this.server = server;
    this.connector = connector;
  }

  /** Connects the store, builds the limiters and starts listening; fails with the cause if any step does. */
  public static SluiceServer start(ServeConfig config) {
    if (config == null) {
      throw new IllegalArgumentException("config: must not be null");
    }
    List<CounterStore> stores = new ArrayList<>();
    Map<String, SyncedLimiter> limiters = new LinkedHashMap<>();
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    OtlpMeterRegistry otlp = null;
    JvmGcMetrics gc = new JvmGcMetrics();
    Server server = null;
    try {
      // the meters go to Prometheus alone, or to a composite of it and the OTLP registry: one set of
      // meters, each recorded in both (the composite costs a little per record, only when asked for)
      MeterRegistry meters = registry;
      if (config.otlpEndpoint().isPresent()) {
        otlp = otlp(config.otlpEndpoint().get(), config.otlpStep());
        meters = new CompositeMeterRegistry(Clock.SYSTEM, List.of(registry, otlp));
      }
      // one store and one node id for every limit: the store keeps each limit's flush sequence apart
      // (node/limit) and counts this process once in its node registry
      // (unset: the deployment's name for the process, else random; see SyncConfig.Builder#nodeId)
      String nodeId = config.nodeId() != null ? config.nodeId() : config.sync().nodeId();
      CounterStore store = connect(config);
      stores.add(store);
      // one config for every limit: its batch size applies to the window limits, its bucket batch size
      // to the buckets (1 by default: exact, one store script per check; logs always are)
      SyncConfig shared = config.sync().toBuilder().nodeId(nodeId).build();
      for (Limit limit : config.limits()) {
        limiters.put(limit.name(), SyncedLimiter.of(limit, store, shared));
      }
      bindMeters(limiters, gc, meters);

      server = jetty(config.maxThreads(), config.host(), config.port());
      ServerConnector connector = (ServerConnector) server.getConnectors()[0];
      server.setHandler(handler(config, limiters, registry, meters));
      server.setErrorHandler(new JsonErrorHandler());
      server.setStopTimeout(2_000);
      server.start();
      return new SluiceServer(config, stores, limiters, registry, otlp, gc, server, connector);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      closeAll(server, limiters, stores, registry, otlp, gc);
      if (e instanceof IllegalArgumentException) {
        throw (IllegalArgumentException) e;
      }
      throw new IllegalStateException("cannot start on " + config.host() + ":" + config.port()
          + ": " + e.getMessage(), e);
    }
  }

  /** The one store of every limit: Redis when the config names one, else an embedded Hazelcast member. */
  private static CounterStore connect(ServeConfig config) throws InterruptedException {
    if (config.redisUri() != null) {
      return RedisCounterStore.connect(RedisStoreConfig.builder(config.redisUri())
          .keyPrefix(config.keyPrefix()).cluster(config.redisCluster())
          .commandTimeout(config.redisTimeout()).evictionCheck(config.redisEvictionCheck()).build(),
          CONNECT_PATIENCE);
    }
    return HazelcastCounterStore.embedded(HazelcastCounterStore.Settings.builder()
        .clusterName(config.hazelcastCluster()).mapPrefix(config.keyPrefix()).build());
  }

  /** The limiters' meters and the JVM's, in {@code meters}. */
  private static void bindMeters(Map<String, SyncedLimiter> limiters, JvmGcMetrics gc, MeterRegistry meters) {
    new SyncedLimiterMetrics(new ArrayList<>(limiters.values())).bindTo(meters);
    new JvmMemoryMetrics().bindTo(meters);
    new JvmThreadMetrics().bindTo(meters);
    new ProcessorMetrics().bindTo(meters);
    new UptimeMetrics().bindTo(meters);
    gc.bindTo(meters);
  }

  /** The handler of {@code /check}, {@code /health} and {@code /metrics}. */
  private static CheckHandler handler(ServeConfig config, Map<String, SyncedLimiter> limiters,
      PrometheusMeterRegistry registry, MeterRegistry meters) {
    return new CheckHandler(limiters, config.rules().orElse(null), config.identities(), config.maxBodyBytes(),
        config.maxKeyLength(), config.bodyTimeout().toMillis(), registry, meters,
        config.redisUri() != null ? "redis" : "hazelcast");
  }

  /**
   * The Jetty server and its one HTTP/1.1 connector, not started and without a handler: the thread
   * pool, connector and HTTP settings of the sidecar in one place, so that the load benchmark's empty
   * handler runs on exactly the same ones.
   */
  static Server jetty(int maxThreads, String host, int port) {
    QueuedThreadPool threads = new QueuedThreadPool(maxThreads, Math.min(8, maxThreads));
    threads.setName("sluice-serve");
    Server server = new Server(threads);
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setSendXPoweredBy(false);
    ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
    connector.setHost(host);
    connector.setPort(port);
    server.addConnector(connector);
    return server;
  }

  /**
   * The OTLP registry: Micrometer's, pushing protobuf over HTTP to {@code url} every {@code step} on
   * a daemon thread of its own. Its other settings are Micrometer's defaults (cumulative temporality,
   * explicit-bucket histograms), and it reads the OpenTelemetry SDK's environment variables (
   * {@code OTEL_SERVICE_NAME}, {@code OTEL_RESOURCE_ATTRIBUTES}, {@code OTEL_EXPORTER_OTLP_HEADERS}) as
   * Micrometer does.
   */
  static OtlpMeterRegistry otlp(String url, Duration step) {
    String stepText = step.toString();
    OtlpConfig config = key -> switch (key) {
      case "otlp.url" -> url;
      case "otlp.step" -> stepText;
      default -> null;
    };
    return new OtlpMeterRegistry(config, Clock.SYSTEM);
  }

  /** How long start-up keeps trying to reach Redis: it often starts alongside its Redis. */
  static final Duration CONNECT_PATIENCE = Duration.ofSeconds(15);

  /** The port listened on (the one picked when the config said 0). */
  public int port() {
    return connector.getLocalPort();
  }

  /** {@code http://host:port} of this server. */
  public URI uri() {
    String host = config.host().contains(":") ? "[" + config.host() + "]" : config.host();
    return URI.create("http://" + host + ":" + port());
  }

  public ServeConfig config() {
    return config;
  }

  /** The limiter of each limit, by name (for tools and tests). */
  public Map<String, SyncedLimiter> limiters() {
    return Map.copyOf(limiters);
  }

  /** The Prometheus registry {@code GET /metrics} scrapes (every meter of the sidecar is there). */
  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** Blocks until the server stops. */
  public void join() throws InterruptedException {
    server.join();
  }

  /** Stops listening, flushes every limiter's unsent permits to the store, and disconnects. */
  @Override
  public void close() {
    closeAll(server, limiters, stores, registry, otlp, gcMetrics);
  }

  private static void closeAll(Server server, Map<String, SyncedLimiter> limiters, List<CounterStore> stores,
      PrometheusMeterRegistry registry, OtlpMeterRegistry otlp, JvmGcMetrics gc) {
    if (server != null) {
      try {
        server.stop();
      } catch (Exception ignored) {
        // stopping anyway: the limiters below still flush
      }
    }
    for (SyncedLimiter l : limiters.values()) {
      l.close();
    }
    for (CounterStore store : stores) {
      try {
        store.close();
      } catch (Exception ignored) {
        // best effort on the way out
      }
    }
    gc.close();
    if (otlp != null) {
      otlp.close(); // (pushes what the last step gathered: the limiters' final flushes above included)
    }
    registry.close();
  }
}
