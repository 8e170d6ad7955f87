package io.sluice.envoy;

import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaServiceGrpc;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.sluice.node.Durations;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.hazelcast.HazelcastCounterStore;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.LeaseStore;
import io.sluice.sync.spi.StoreUnavailableException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Envoy's rate limit service ({@code sluice envoy}): a gRPC server answering
 * {@code envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit} ({@link RlsService}) from
 * envoyproxy/ratelimit's configuration files and, when given an RLQS configuration, the quota service
 * {@code envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas}
 * ({@link RlqsService}) on the same port and store, with the standard health service
 * ({@code grpc.health.v1.Health}, {@code SERVING} for "" and each service it runs) and server
 * reflection (v1 and v1alpha, for grpcurl and the like). Decisions go through one
 * {@link SyncedLimiter} per distinct limit over Redis, or an embedded Hazelcast member when no Redis
 * is given, so any number of these servers share their limits through the store.
 *
 * <pre>{@code
 * try (RlsServer server = RlsServer.start(RlsServer.Settings.builder()
 *     .config(Path.of("ratelimit.yaml")).redis("redis://127.0.0.1:6379").port(8081).build())) {
 *   server.awaitTermination();
 * }
 * }</pre>
 */
public final class RlsServer implements AutoCloseable {
  private final Settings settings;
  private final CounterStore store;
  private final RlsLimiters limiters;
  private final RlsService service;
  private final ThreadPoolExecutor executor;
  private final HealthStatusManager health;
  private final Server server;
  private final ConfigWatcher<RlsConfig> watcher;
  /** Reloads the RLQS rules file (null: no RLQS, or reloading off). */
  private final ConfigWatcher<RlqsConfig> quotaWatcher;
  private final RlqsService quotas;

  private RlsServer(Settings settings, CounterStore store, RlsLimiters limiters, RlsService service,
      ThreadPoolExecutor executor, HealthStatusManager health, Server server, ConfigWatcher<RlsConfig> watcher,
      RlqsService quotas, ConfigWatcher<RlqsConfig> quotaWatcher) {
    this.watcher = watcher;
    this.quotaWatcher = quotaWatcher;
    this.quotas = quotas;
    this.settings = settings;
    this.store = store;
    this.limiters = limiters;
    this.service = service;
    this.executor = executor;
    this.health = health;
    this.server = server;
  }

  /**
   * Loads the configuration (its errors first, before any connection), connects the store and
   * starts listening.
   *
   * @throws IllegalArgumentException for a bad configuration file or setting, naming it
   * @throws StoreUnavailableException when Redis cannot be reached
   * @throws IllegalStateException when the server cannot start (the port is taken)
   */
  public static RlsServer start(Settings settings) {
    // no RLS files (an RLQS-only server): no domains, every descriptor OK
    java.util.Map<String, String> texts = settings.configPaths.isEmpty() ? java.util.Map.of()
        : RlsConfig.read(settings.configPaths);
    RlsConfig config = RlsConfig.parse(texts);
    java.util.Map<String, String> quotaTexts = settings.rlqsConfig == null ? null
        : RlqsConfig.read(List.of(settings.rlqsConfig));
    RlqsConfig quotaConfig = quotaTexts == null ? null : RlqsConfig.parse(quotaTexts);
    String tooMany = tooManyLimits(config, settings.maxLimits);
    if (tooMany != null) {
      throw new IllegalArgumentException(tooMany);
    }
    CounterStore store = null;
    RlsLimiters limiters = null;
    ThreadPoolExecutor executor = null;
    RlqsService quotas = null;
    try {
      store = connect(settings);
      limiters = new RlsLimiters(store, settings.sync, settings.maxLimits);
      executor = RlsService.boundedExecutor(settings.threads, settings.queue);
      RlsService service = new RlsService(config, limiters, executor, settings.responseHeaders,
          System::currentTimeMillis);
      HealthStatusManager health = new HealthStatusManager();
      NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress(settings.host, settings.port))
          .directExecutor() // gRPC's callbacks only hand the call to the bounded executor, or (RLQS) start store calls
          .maxInboundMessageSize(settings.maxMessageBytes)
          .addService(service);
      if (quotaConfig != null) {
        quotas = quotaService(settings, quotaConfig, store);
        builder.addService(quotas);
      }
      Server server = builder
          .addService(health.getHealthService())
          .addService(ProtoReflectionServiceV1.newInstance())
          .addService(legacyReflection())
          .build()
          .start();
      serving(health, quotas != null);
      return new RlsServer(settings, store, limiters, service, executor, health, server,
          watcher(settings, texts, service), quotas, quotaWatcher(settings, quotaTexts, quotas));
    } catch (IOException | RuntimeException | InterruptedException e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      if (quotas != null) {
        quotas.close();
      }
      closeAll(null, executor, limiters, store);
      if (e instanceof IllegalArgumentException || e instanceof StoreUnavailableException) {
        throw (RuntimeException) e;
      }
      throw new IllegalStateException("cannot start on " + settings.host + ":" + settings.port + ": " + e.getMessage(), e);
    }
  }

  /** The store: Redis when the settings name one, else an embedded Hazelcast member. */
  private static CounterStore connect(Settings settings) throws InterruptedException {
    if (settings.redisUri != null) {
      return RedisCounterStore.connect(RedisStoreConfig.builder(settings.redisUri).keyPrefix(settings.keyPrefix)
          .commandTimeout(settings.redisTimeout).build(), CONNECT_PATIENCE);
    }
    return HazelcastCounterStore.embedded(HazelcastCounterStore.Settings.builder()
        .clusterName(settings.hazelcastCluster).mapPrefix(settings.keyPrefix).build());
  }

  /** The quota service (RLQS) over the store, which must lease budget. */
  private static RlqsService quotaService(Settings settings, RlqsConfig quotaConfig, CounterStore store) {
    if (!(store instanceof LeaseStore)) {
      throw new IllegalArgumentException("rlqsConfig: the store " + store.getClass().getSimpleName()
          + " cannot lease budget");
    }
    return new RlqsService(quotaConfig, (LeaseStore) store, System::currentTimeMillis, settings.rlqsMaxStreams,
        RlqsService.DEFAULT_MAX_BUCKETS_PER_STREAM, RlqsService.newTicker());
  }

  /** Says SERVING for "" and each service the server runs. */
  private static void serving(HealthStatusManager health, boolean withQuotas) {
    health.setStatus("", ServingStatus.SERVING);
    health.setStatus(RateLimitServiceGrpc.SERVICE_NAME, ServingStatus.SERVING);
    if (withQuotas) {
      health.setStatus(RateLimitQuotaServiceGrpc.SERVICE_NAME, ServingStatus.SERVING);
    }
  }

  /** Reloads the RLS files into the service (null: reloading off, or no RLS files). */
  private static ConfigWatcher<RlsConfig> watcher(Settings settings, java.util.Map<String, String> texts,
      RlsService service) {
    return settings.reloadInterval.isZero() || settings.configPaths.isEmpty() ? null
        : new ConfigWatcher<>("configuration", settings.configPaths, texts, settings.reloadInterval.toMillis(),
            RlsConfig::read, RlsConfig::parse, service::config, next -> tooManyLimits(next, settings.maxLimits));
  }

  /** Reloads the RLQS file into the quota service (null: reloading off, or no RLQS). */
  private static ConfigWatcher<RlqsConfig> quotaWatcher(Settings settings, java.util.Map<String, String> quotaTexts,
      RlqsService quotas) {
    return settings.reloadInterval.isZero() || quotas == null ? null
        : new ConfigWatcher<>("RLQS configuration", List.of(settings.rlqsConfig), quotaTexts,
            settings.reloadInterval.toMillis(), RlqsConfig::read, RlqsConfig::parse, quotas::config,
            quotas::refusal);
  }

  /** A message when the configuration's own distinct limits do not fit the bound, else null. */
  private static String tooManyLimits(RlsConfig config, int maxLimits) {
    long distinct = config.distinctRates();
    return distinct <= maxLimits ? null
        : "maxLimits: the configuration has " + distinct + " distinct limits, more than " + maxLimits;
  }

  /** Server reflection v1alpha, which older clients (grpcurl before 1.9) ask for. */
  @SuppressWarnings("deprecation")
  private static io.grpc.BindableService legacyReflection() {
    return io.grpc.protobuf.services.ProtoReflectionService.newInstance();
  }

  /** How long start-up keeps trying to reach Redis: it often starts alongside its Redis. */
  static final Duration CONNECT_PATIENCE = Duration.ofSeconds(15);

  /** The port listened on (the one picked when the settings said 0). */
  public int port() {
    return server.getPort();
  }

  public Settings settings() {
    return settings;
  }

  /** The service (its configuration and counters). */
  public RlsService service() {
    return service;
  }

  /** The limiters built so far, one per distinct limit. */
  public List<SyncedLimiter> limiters() {
    return limiters.all();
  }

  /** The quota service (RLQS), or null when the settings gave it no configuration. */
  public RlqsService quotaService() {
    return quotas;
  }

  /** Calls being decided now (for tools and tests). */
  public int activeCalls() {
    return executor.getActiveCount();
  }

  /** Calls waiting for a worker now (for tools and tests). */
  public int queuedCalls() {
    return executor.getQueue().size();
  }

  /** Configurations reloaded since start, of the RLS files and the RLQS file (0 when reloading is off). */
  public long reloads() {
    return (watcher == null ? 0 : watcher.reloads()) + (quotaWatcher == null ? 0 : quotaWatcher.reloads());
  }

  /** The error that keeps the configuration files as they are now from use, or null (the RLS files' first). */
  public String configError() {
    String error = watcher == null ? null : watcher.lastError();
    return error != null || quotaWatcher == null ? error : quotaWatcher.lastError();
  }

  /** Reads the configuration files now, as the reload timer does (for tools and tests). */
  public void reloadNow() {
    if (watcher != null) {
      watcher.checkNow();
    }
    if (quotaWatcher != null) {
      quotaWatcher.checkNow();
    }
  }

  /** Blocks until the server is shut down. */
  public void awaitTermination() throws InterruptedException {
    server.awaitTermination();
  }

  /**
   * Says NOT_SERVING, stops taking calls, lets those under way finish (up to 5 s), flushes every
   * limiter's unsent permits to the store and disconnects.
   */
  @Override
  public void close() {
    health.enterTerminalState();
    if (watcher != null) {
      watcher.close();
    }
    if (quotaWatcher != null) {
      quotaWatcher.close();
    }
    if (quotas != null) {
      quotas.close(); // its streams never end by themselves: end them before the server waits for its calls
    }
    closeAll(server, executor, limiters, store);
  }

  private static void closeAll(Server server, ThreadPoolExecutor executor, RlsLimiters limiters, CounterStore store) {
    if (server != null) {
      server.shutdown();
      try {
        if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
          server.shutdownNow();
        }
      } catch (InterruptedException e) {
        server.shutdownNow();
        Thread.currentThread().interrupt();
      }
    }
    if (executor != null) {
      executor.shutdown();
      try {
        executor.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (limiters != null) {
      limiters.close();
    }
    if (store != null) {
      try {
        store.close();
      } catch (Exception ignored) {
        // best effort on the way out
      }
    }
  }

  /** What {@link #start} needs; every setter names its field when it refuses a value. */
  public static final class Settings {
    public static final String DEFAULT_HOST = "127.0.0.1";
    public static final int DEFAULT_PORT = 8081;
    public static final String DEFAULT_KEY_PREFIX = "sluice";
    public static final String DEFAULT_HAZELCAST_CLUSTER = "sluice";
    public static final int DEFAULT_THREADS = 32;
    public static final int DEFAULT_QUEUE = 1024;
    public static final int DEFAULT_MAX_LIMITS = 256;
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024;

    final List<Path> configPaths;
    final String host;
    final int port;
    final String redisUri;
    final Duration redisTimeout;
    final String hazelcastCluster;
    final String keyPrefix;
    final SyncConfig sync;
    final int threads;
    final int queue;
    final int maxLimits;
    final int maxMessageBytes;
    final boolean responseHeaders;
    final Duration reloadInterval;
    final Path rlqsConfig;
    final int rlqsMaxStreams;

    private Settings(Builder b) {
      this.rlqsConfig = b.rlqsConfig;
      this.rlqsMaxStreams = b.rlqsMaxStreams;
      this.reloadInterval = b.reloadInterval;
      this.configPaths = List.copyOf(b.configPaths);
      this.host = b.host;
      this.port = b.port;
      this.redisUri = b.redisUri;
      this.redisTimeout = b.redisTimeout;
      this.hazelcastCluster = b.hazelcastCluster;
      this.keyPrefix = b.keyPrefix;
      this.sync = b.sync.build();
      this.threads = b.threads;
      this.queue = b.queue;
      this.maxLimits = b.maxLimits;
      this.maxMessageBytes = b.maxMessageBytes;
      this.responseHeaders = b.responseHeaders;
    }

    public static Builder builder() {
      return new Builder();
    }

    public List<Path> configPaths() {
      return configPaths;
    }

    /** The quota service's (RLQS) configuration file, or null: no quota service. */
    public Path rlqsConfig() {
      return rlqsConfig;
    }

    public String redisUri() {
      return redisUri;
    }

    public String hazelcastCluster() {
      return hazelcastCluster;
    }

    public String host() {
      return host;
    }

    public long batchSize() {
      return sync.batchSize().orElse(SyncConfig.DEFAULT_BATCH_SIZE);
    }

    /** What every limiter of the service is built with (node id, batching, failure policy, timeouts). */
    public SyncConfig sync() {
      return sync;
    }

    /** Builds {@link Settings}; each setter checks its value and names the field when it refuses one. */
    public static final class Builder {
      private final List<Path> configPaths = new ArrayList<>();
      private String host = DEFAULT_HOST;
      private int port = DEFAULT_PORT;
      private String redisUri;
      private Duration redisTimeout = Duration.ofMillis(500);
      private String hazelcastCluster = DEFAULT_HAZELCAST_CLUSTER;
      private String keyPrefix = DEFAULT_KEY_PREFIX;
      /** Node id, batch size, sync interval, failure policy and claim timeout: SyncConfig's own checks. */
      private final SyncConfig.Builder sync = SyncConfig.custom().batchSize(SyncConfig.DEFAULT_BATCH_SIZE);
      private int threads = DEFAULT_THREADS;
      private int queue = DEFAULT_QUEUE;
      private int maxLimits = DEFAULT_MAX_LIMITS;
      private int maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;
      private boolean responseHeaders = true;
      private Duration reloadInterval = Duration.ofSeconds(1);
      private Path rlqsConfig;
      private int rlqsMaxStreams = RlqsService.DEFAULT_MAX_STREAMS;

      /**
       * The quota service's configuration file ({@link RlqsConfig}): with it, the server also answers
       * {@code StreamRateLimitQuotas}. Read once at start (not reloaded).
       */
      public Builder rlqsConfig(Path file) {
        if (file == null) {
          throw new IllegalArgumentException("rlqsConfig: must not be null");
        }
        this.rlqsConfig = file;
        return this;
      }

      /** RLQS streams (Envoys) open at once; one more is refused with RESOURCE_EXHAUSTED. */
      public Builder rlqsMaxStreams(int streams) {
        if (streams < 1) {
          throw new IllegalArgumentException("rlqsMaxStreams: must be at least 1, got " + streams);
        }
        this.rlqsMaxStreams = streams;
        return this;
      }

      /** A configuration file, or a directory of them (repeatable). */
      public Builder config(Path path) {
        if (path == null) {
          throw new IllegalArgumentException("config: must not be null");
        }
        configPaths.add(path);
        return this;
      }

      public Builder host(String host) {
        if (host == null || host.isBlank()) {
          throw new IllegalArgumentException("host: must not be empty");
        }
        this.host = host;
        return this;
      }

      /** The gRPC port; 0 for a free one. */
      public Builder port(int port) {
        if (port < 0 || port > 65535) {
          throw new IllegalArgumentException("port: must be 0 to 65535, got " + port);
        }
        this.port = port;
        return this;
      }

      /** The Redis store's URI; null (the default) for the embedded Hazelcast member. */
      public Builder redis(String uri) {
        if (uri != null && uri.isBlank()) {
          throw new IllegalArgumentException("redis: must not be empty");
        }
        this.redisUri = uri;
        return this;
      }

      public Builder redisTimeout(Duration timeout) {
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
          throw new IllegalArgumentException("redisTimeout: must be positive, got " + Durations.format(timeout));
        }
        this.redisTimeout = timeout;
        return this;
      }

      public Builder hazelcastCluster(String name) {
        if (name == null || name.isBlank()) {
          throw new IllegalArgumentException("hazelcastCluster: must not be empty");
        }
        this.hazelcastCluster = name;
        return this;
      }

      public Builder keyPrefix(String prefix) {
        if (prefix == null || prefix.isEmpty()) {
          throw new IllegalArgumentException("keyPrefix: must not be empty");
        }
        this.keyPrefix = prefix;
        return this;
      }

      public Builder nodeId(String nodeId) {
        sync.nodeId(nodeId);
        return this;
      }

      /** Permits per key between flushes; 1 is exact mode (one store call per decision). */
      public Builder batchSize(long batchSize) {
        sync.batchSize(batchSize);
        return this;
      }

      /**
       * How often each limiter flushes; at most 500 ms, half the shortest unit (a second), since a
       * request's own limit override may ask for a per-second limit at any time.
       */
      public Builder syncInterval(Duration interval) {
        if (interval == null || interval.isZero() || interval.isNegative()
            || interval.compareTo(Duration.ofMillis(500)) > 0) {
          throw new IllegalArgumentException("syncInterval: must be positive and at most 500ms (half a second, the"
              + " shortest unit), got " + Durations.format(interval));
        }
        sync.syncInterval(interval);
        return this;
      }

      /** See {@link SyncConfig.Builder#alignClockToStore} ({@code sluice envoy --no-align-clock}). */
      public Builder alignClockToStore(boolean align) {
        sync.alignClockToStore(align);
        return this;
      }

      /** See {@link SyncConfig.Builder#coldKeyAllowance} ({@code sluice envoy --no-cold-key-allowance}). */
      public Builder coldKeyAllowance(boolean allowance) {
        sync.coldKeyAllowance(allowance);
        return this;
      }

      public Builder onStoreFailure(StoreFailurePolicy policy) {
        sync.onStoreFailure(policy);
        return this;
      }

      /** Threads deciding calls (a decision may wait for the store). */
      public Builder threads(int threads) {
        if (threads < 1 || threads > 1024) {
          throw new IllegalArgumentException("threads: must be 1 to 1024, got " + threads);
        }
        this.threads = threads;
        return this;
      }

      /** Calls that may wait for a thread; one more is refused with RESOURCE_EXHAUSTED. */
      public Builder queue(int queue) {
        if (queue < 1) {
          throw new IllegalArgumentException("queue: must be at least 1, got " + queue);
        }
        this.queue = queue;
        return this;
      }

      /**
       * Distinct limits (rate and unit) the configuration may have (checked at start and at each
       * reload); requests' own limit overrides get a limiter of their own only while fewer than this
       * many exist, and never keep a configured limit from its limiter.
       */
      public Builder maxLimits(int maxLimits) {
        if (maxLimits < 1) {
          throw new IllegalArgumentException("maxLimits: must be at least 1, got " + maxLimits);
        }
        this.maxLimits = maxLimits;
        return this;
      }

      public Builder maxMessageBytes(int bytes) {
        if (bytes < 1024) {
          throw new IllegalArgumentException("maxMessageBytes: must be at least 1024, got " + bytes);
        }
        this.maxMessageBytes = bytes;
        return this;
      }

      /** Whether answers carry the RateLimit fields in {@code response_headers_to_add} (default true). */
      public Builder responseHeaders(boolean on) {
        this.responseHeaders = on;
        return this;
      }

      /**
       * The longest a decision waits for the store (a claim, or an exact script) before the failure
       * policy decides; keep it under Envoy's own timeout for the call (20 ms by default) to have the
       * policy decide rather than Envoy's {@code failure_mode_deny}.
       */
      public Builder claimTimeout(Duration timeout) {
        sync.claimTimeout(timeout);
        return this;
      }

      /** How often the configuration files are read for changes; zero turns reloading off. */
      public Builder reloadInterval(Duration interval) {
        if (interval == null || interval.isNegative() || (!interval.isZero() && interval.toMillis() < 10)) {
          throw new IllegalArgumentException("reloadInterval: must be 0 (off) or at least 10ms, got " + Durations.format(interval));
        }
        this.reloadInterval = interval;
        return this;
      }

      public Settings build() {
        if (configPaths.isEmpty() && rlqsConfig == null) {
          throw new IllegalArgumentException("config: at least one file or directory is needed, or an RLQS configuration");
        }
        return new Settings(this);
      }
    }
  }
}
