package io.sluice.sidecar;

import io.sluice.node.Algorithm;
import io.sluice.node.Durations;
import io.sluice.node.Limit;
import io.sluice.node.LimitSpec;
import io.sluice.node.Rules;
import io.sluice.node.RulesFile;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.redis.RedisStoreConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Settings of the sidecar ({@link SluiceServer}). Immutable; each builder setter checks its value and
 * names the setting in its message. With no Redis URI the store is an embedded Hazelcast member on
 * loopback (other sidecars on the machine started the same way join it).
 */
public final class ServeConfig {
  public static final String DEFAULT_HOST = "127.0.0.1";
  public static final int DEFAULT_PORT = 8080;
  public static final int DEFAULT_MAX_BODY_BYTES = 4_096;
  public static final int DEFAULT_MAX_KEY_LENGTH = 256;
  public static final int DEFAULT_MAX_THREADS = 200;
  public static final Duration DEFAULT_BODY_TIMEOUT = Duration.ofSeconds(10);
  public static final int DEFAULT_MAX_KEYS = 1_000_000;
  public static final String DEFAULT_KEY_PREFIX = "sluice";
  public static final String DEFAULT_HAZELCAST_CLUSTER = "sluice";
  /** How often metrics are pushed over OTLP when an endpoint is set: Micrometer's own default. */
  public static final Duration DEFAULT_OTLP_STEP = Duration.ofMinutes(1);
  /** Most limits one sidecar serves: each has its own flusher thread. */
  public static final int MAX_LIMITS = 64;

  private final String host;
  private final int port;
  private final List<Limit> limits;
  private final Rules rules;
  private final Set<String> identities;
  private final String redisUri;
  private final boolean redisCluster;
  private final Duration redisTimeout;
  private final String hazelcastCluster;
  private final String keyPrefix;
  /** Null: a random node id (see SluiceServer). */
  private final String nodeId;
  /** Batch size, sync interval, failure policy, max keys (and the node id when set): SyncConfig's own checks. */
  private final SyncConfig sync;
  private final int maxBodyBytes;
  private final int maxKeyLength;
  private final int maxThreads;
  private final Duration bodyTimeout;
  private final RedisStoreConfig.EvictionCheck redisEvictionCheck;
  /** Null: no OTLP push (the Prometheus endpoint only). */
  private final String otlpEndpoint;
  private final Duration otlpStep;

  private ServeConfig(Builder b) {
    this.host = b.host;
    this.port = b.port;
    this.limits = List.copyOf(b.limits);
    this.rules = b.rules;
    this.identities = Set.copyOf(b.identities);
    this.redisUri = b.redisUri;
    this.redisCluster = b.redisCluster;
    this.redisTimeout = b.redisTimeout;
    this.hazelcastCluster = b.hazelcastCluster;
    this.keyPrefix = b.keyPrefix;
    this.nodeId = b.nodeId;
    this.sync = b.sync.build();
    this.maxBodyBytes = b.maxBodyBytes;
    this.maxKeyLength = b.maxKeyLength;
    this.maxThreads = b.maxThreads;
    this.bodyTimeout = b.bodyTimeout;
    this.redisEvictionCheck = b.redisEvictionCheck;
    this.otlpEndpoint = b.otlpEndpoint;
    this.otlpStep = b.otlpStep;
  }

  public static Builder builder() {
    return new Builder();
  }

  public String host() {
    return host;
  }

  /** The port to listen on; 0 picks a free one ({@link SluiceServer#port()} tells which). */
  public int port() {
    return port;
  }

  public List<Limit> limits() {
    return limits;
  }

  /** The rules over the limits (plans, endpoints, identities), or empty: then a check names its limit. */
  public Optional<Rules> rules() {
    return Optional.ofNullable(rules);
  }

  /** The identities the rules key by; a check naming another is refused (a misspelt one would bypass them). */
  public Set<String> identities() {
    return identities;
  }

  /** The Redis URI, or null for the embedded Hazelcast store. */
  public String redisUri() {
    return redisUri;
  }

  public boolean redisCluster() {
    return redisCluster;
  }

  /** Redis command timeout (also the connection handshake's). */
  public Duration redisTimeout() {
    return redisTimeout;
  }

  public String hazelcastCluster() {
    return hazelcastCluster;
  }

  /** Prefix of the store's keys (Redis) or maps (Hazelcast), shared with library nodes of the same limits. */
  public String keyPrefix() {
    return keyPrefix;
  }

  /** This sidecar's node id (unique per process), or null for a random one. */
  public String nodeId() {
    return nodeId;
  }

  public long batchSize() {
    return sync.batchSize().orElse(SyncConfig.DEFAULT_BATCH_SIZE);
  }

  /** Tokens a node claims ahead at once for token and leaky buckets; 1: exact mode. */
  public long bucketBatchSize() {
    return sync.bucketBatchSize();
  }

  public Duration syncInterval() {
    return sync.syncInterval();
  }

  public StoreFailurePolicy onStoreFailure() {
    return sync.onStoreFailure();
  }

  /** Whether every limit that batches runs in reservation mode ({@code sluice serve --reservation}). */
  public boolean reservation() {
    return sync().reservation();
  }

  /**
   * What every limit of the sidecar is built with (batching, failure policy, max keys); its node id is
   * the one set, or SyncConfig's random one (SluiceServer gives the sidecar one of its own then).
   */
  public SyncConfig sync() {
    return sync;
  }

  public int maxBodyBytes() {
    return maxBodyBytes;
  }

  public int maxKeyLength() {
    return maxKeyLength;
  }

  public int maxThreads() {
    return maxThreads;
  }

  /** What connecting to Redis does when the server may evict Sluice's keys (see RedisStoreConfig). */
  public RedisStoreConfig.EvictionCheck redisEvictionCheck() {
    return redisEvictionCheck;
  }

  /** Most keys each limit keeps a view of (beyond it new keys share one overflow view; see SyncedLimiter). */
  public int maxKeys() {
    return sync.maxKeys();
  }

  /** The fewest sidecars that share the limits (see SyncConfig.Builder#minNodes). */
  public int minNodes() {
    return sync.minNodes();
  }

  /** How long a check's body may take to arrive before the answer is 408. */
  public Duration bodyTimeout() {
    return bodyTimeout;
  }

  /**
   * The OTLP/HTTP metrics endpoint the sidecar pushes its meters to (an OpenTelemetry collector's
   * {@code http://host:4318/v1/metrics}), beside the Prometheus endpoint; empty when it pushes nothing.
   */
  public Optional<String> otlpEndpoint() {
    return Optional.ofNullable(otlpEndpoint);
  }

  /** How often the meters are pushed over OTLP (each push carries one step's worth). */
  public Duration otlpStep() {
    return otlpStep;
  }

  /** Builds a {@link ServeConfig}; each setter checks its value and names the field when it refuses one. */
  public static final class Builder {
    private String host = DEFAULT_HOST;
    private int port = DEFAULT_PORT;
    private final List<Limit> limits = new ArrayList<>();
    private Rules rules;
    private Set<String> identities = Set.of();
    private String redisUri;
    private boolean redisCluster;
    private Duration redisTimeout = RedisStoreConfig.DEFAULT_COMMAND_TIMEOUT;
    private String hazelcastCluster = DEFAULT_HAZELCAST_CLUSTER;
    private String keyPrefix = DEFAULT_KEY_PREFIX;
    private String nodeId;
    /** Batch size, sync interval, failure policy, max keys, node id: checked and named by SyncConfig. */
    private final SyncConfig.Builder sync = SyncConfig.custom().batchSize(SyncConfig.DEFAULT_BATCH_SIZE)
        .maxKeys(DEFAULT_MAX_KEYS);
    /** (kept for the check against each limit's window in build) */
    private Duration syncInterval = SyncConfig.DEFAULT_SYNC_INTERVAL;
    /** (kept for the check of each limit's algorithm in build) */
    private boolean reservation;
    private int maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
    private int maxKeyLength = DEFAULT_MAX_KEY_LENGTH;
    private int maxThreads = DEFAULT_MAX_THREADS;
    private Duration bodyTimeout = DEFAULT_BODY_TIMEOUT;
    private RedisStoreConfig.EvictionCheck redisEvictionCheck = RedisStoreConfig.EvictionCheck.REFUSE;
    private String otlpEndpoint;
    private Duration otlpStep = DEFAULT_OTLP_STEP;
    /** Whether a step was set: one without an endpoint is refused rather than ignored. */
    private boolean otlpStepSet;

    Builder() {
    }

    /** The address to listen on; loopback by default, as a sidecar is reached from its own host. */
    public Builder host(String host) {
      if (host == null || host.isBlank()) {
        throw new IllegalArgumentException("host: must not be empty");
      }
      this.host = host;
      return this;
    }

    public Builder port(int port) {
      if (port < 0 || port > 65_535) {
        throw new IllegalArgumentException("port: must be 0 to 65535, got " + port);
      }
      this.port = port;
      return this;
    }

    /**
     * Adds a limit. Window limits are batched; token and leaky buckets are decided by one store script
     * per check unless {@link #bucketBatchSize} is above 1, sliding logs always (see {@code
     * SyncedLimiter}); the leaky bucket shaper is refused.
     */
    public Builder limit(Limit limit) {
      if (limit == null) {
        throw new IllegalArgumentException("limit: must not be null");
      }
      this.limits.add(limit);
      return this;
    }

    /** Limits and rules as a {@link RulesFile} reads them (the limits added, the rules set if any). */
    public Builder limitsFile(RulesFile file) {
      if (file == null) {
        throw new IllegalArgumentException("limits: must not be null");
      }
      limits(file.limits());
      file.rules().ifPresent(r -> {
        if (rules != null) {
          throw new IllegalArgumentException("limitsFile: rules are given once (one file with rules)");
        }
        rules = r;
        identities = file.identities();
      });
      return this;
    }

    public Builder limits(List<Limit> limits) {
      if (limits == null) {
        throw new IllegalArgumentException("limits: must not be null");
      }
      limits.forEach(this::limit);
      return this;
    }

    /** A Redis URI ({@code redis://host:port}, {@code rediss://}, Sentinel); null for the embedded store. */
    public Builder redis(String uri) {
      if (uri != null && !uri.matches("(?i)(redis|rediss|redis-socket|redis-sentinel|rediss-sentinel)://.+")) {
        throw new IllegalArgumentException("redis: must be a redis://, rediss://, redis-socket:// or redis-sentinel:// URI, got " + uri);
      }
      this.redisUri = uri;
      return this;
    }

    public Builder redisCluster(boolean cluster) {
      this.redisCluster = cluster;
      return this;
    }

    /** How long one Redis command (and the connection handshake) may take; 500 ms by default. */
    public Builder redisTimeout(Duration timeout) {
      if (timeout == null || timeout.toMillis() < 1 || timeout.toSeconds() > 60) {
        throw new IllegalArgumentException("redisTimeout: must be 1ms to 60s, got " + Durations.format(timeout));
      }
      this.redisTimeout = timeout;
      return this;
    }

    /** The embedded Hazelcast member's cluster name; members of other clusters ignore it. */
    public Builder hazelcastCluster(String name) {
      if (name == null || !name.matches("[A-Za-z0-9_.-]{1,64}")) {
        throw new IllegalArgumentException("hazelcastCluster: must be 1 to 64 characters of [A-Za-z0-9_.-], got " + name);
      }
      this.hazelcastCluster = name;
      return this;
    }

    public Builder keyPrefix(String prefix) {
      if (prefix == null || !prefix.matches("[A-Za-z0-9_.:-]{1,64}")) {
        throw new IllegalArgumentException("keyPrefix: must be 1 to 64 characters of [A-Za-z0-9_.:-], got " + prefix);
      }
      this.keyPrefix = prefix;
      return this;
    }

    /** This sidecar's node id; null for a random one. */
    public Builder nodeId(String nodeId) {
      if (nodeId != null) {
        sync.nodeId(nodeId);
      }
      this.nodeId = nodeId;
      return this;
    }

    /** Permits a key may gather before a flush; 1 is exact checking (one store call per decision). */
    public Builder batchSize(long batchSize) {
      sync.batchSize(batchSize);
      return this;
    }

    /**
     * Tokens a node claims ahead at once for token buckets and leaky-bucket meters; 1 (the default)
     * keeps them exact, one store call per decision (see {@link SyncConfig.Builder#bucketBatchSize}).
     */
    public Builder bucketBatchSize(long bucketBatchSize) {
      sync.bucketBatchSize(bucketBatchSize);
      return this;
    }

    /**
     * Reservation mode for every limit that batches (see {@link SyncConfig.Builder#reservation}): nodes
     * admit only what the store leased them (windows) or the tokens they claimed (buckets), never over
     * the limit, at the cost of more store calls than the approximate mode; a sliding log (exact only)
     * is refused with it.
     */
    public Builder reservation(boolean reservation) {
      sync.reservation(reservation);
      this.reservation = reservation;
      return this;
    }

    public Builder syncInterval(Duration interval) {
      sync.syncInterval(interval);
      this.syncInterval = interval;
      return this;
    }

    /** See {@link SyncConfig.Builder#coldKeyAllowance} ({@code sluice serve --no-cold-key-allowance}). */
    public Builder coldKeyAllowance(boolean allowance) {
      sync.coldKeyAllowance(allowance);
      return this;
    }

    /** See {@link SyncConfig.Builder#alignClockToStore} ({@code sluice serve --no-align-clock}). */
    public Builder alignClockToStore(boolean align) {
      sync.alignClockToStore(align);
      return this;
    }

    public Builder onStoreFailure(StoreFailurePolicy policy) {
      sync.onStoreFailure(policy);
      return this;
    }

    /** Largest check body accepted; larger ones are answered 413. */
    public Builder maxBodyBytes(int bytes) {
      if (bytes < 64 || bytes > 1 << 20) {
        throw new IllegalArgumentException("maxBodyBytes: must be 64 to 1048576, got " + bytes);
      }
      this.maxBodyBytes = bytes;
      return this;
    }

    /** Longest key accepted; longer ones are answered 400 (keys are kept in memory and in the store). */
    public Builder maxKeyLength(int length) {
      if (length < 1 || length > 8_192) {
        throw new IllegalArgumentException("maxKeyLength: must be 1 to 8192, got " + length);
      }
      this.maxKeyLength = length;
      return this;
    }

    public Builder maxThreads(int threads) {
      if (threads < 8 || threads > 10_000) {
        throw new IllegalArgumentException("maxThreads: must be 8 to 10000, got " + threads);
      }
      this.maxThreads = threads;
      return this;
    }

    /**
     * How long a check's body may take to arrive (from its headers on) before the answer is 408 and
     * the connection is closed; bodies are read without holding a thread, so a slow client costs a
     * connection, not a worker.
     */
    public Builder bodyTimeout(Duration timeout) {
      if (timeout == null || timeout.toMillis() < 1 || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
        throw new IllegalArgumentException("bodyTimeout: must be 1ms to 10m, got " + Durations.format(timeout));
      }
      this.bodyTimeout = timeout;
      return this;
    }

    /**
     * Most keys each limit keeps a view of in memory (about 400 bytes each); beyond it new keys share one
     * overflow view until idle ones are dropped.
     */
    public Builder maxKeys(int keys) {
      if (keys < 1 || keys > 100_000_000) {
        throw new IllegalArgumentException("maxKeys: must be 1 to 100000000, got " + keys);
      }
      sync.maxKeys(keys);
      return this;
    }

    /**
     * The fewest sidecars that share the limits (default 1): each sizes its parts for at least that many,
     * whatever the node registry counts (see SyncConfig.Builder#minNodes; a sidecar does not start without
     * its store, so it never decides before the registry has answered).
     */
    public Builder minNodes(int nodes) {
      sync.minNodes(nodes);
      return this;
    }

    /** What connecting to Redis does when the server may evict Sluice's keys: refuse (default), warn, off. */
    public Builder redisEvictionCheck(RedisStoreConfig.EvictionCheck check) {
      if (check == null) {
        throw new IllegalArgumentException("redisEvictionCheck: must not be null");
      }
      this.redisEvictionCheck = check;
      return this;
    }

    /**
     * Pushes the meters over OTLP/HTTP (protobuf) to {@code url}, an OpenTelemetry collector's
     * metrics endpoint such as {@code http://127.0.0.1:4318/v1/metrics}, every {@link #otlpStep};
     * null for none (the default: Prometheus scrapes {@code GET /metrics} either way).
     */
    public Builder otlpEndpoint(String url) {
      if (url != null) {
        java.net.URI uri;
        try {
          uri = java.net.URI.create(url);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("otlpEndpoint: not a URL, got " + url);
        }
        if (uri.getScheme() == null || !uri.getScheme().matches("(?i)https?") || uri.getHost() == null) {
          throw new IllegalArgumentException("otlpEndpoint: must be an http:// or https:// URL with a host, got " + url);
        }
      }
      this.otlpEndpoint = url;
      return this;
    }

    /** How often the meters are pushed over OTLP; 1s to 1h, 1 minute by default. */
    public Builder otlpStep(Duration step) {
      if (step == null || step.toMillis() < 1_000 || step.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException("otlpStep: must be 1s to 1h, got " + Durations.format(step));
      }
      this.otlpStep = step;
      this.otlpStepSet = true;
      return this;
    }

    public ServeConfig build() {
      if (limits.isEmpty()) {
        throw new IllegalArgumentException("limits: at least one limit is needed (" + LimitSpec.syntax() + ")");
      }
      if (limits.size() > MAX_LIMITS) {
        throw new IllegalArgumentException("limits: at most " + MAX_LIMITS + ", got " + limits.size());
      }
      Set<String> names = new HashSet<>();
      for (Limit l : limits) {
        if (!names.add(l.name())) {
          throw new IllegalArgumentException("limits: \"" + l.name() + "\" is defined twice");
        }
      }
      if (rules != null) {
        for (Limit l : rules.limits()) {
          if (!limits.contains(l)) {
            throw new IllegalArgumentException("rules: limit \"" + l.name() + "\" is not among the limits");
          }
        }
      }
      for (Limit l : limits) {
        if (l.algorithm() == Algorithm.LEAKY_BUCKET_SHAPER) {
          throw new IllegalArgumentException("limits: " + l.name() + " is a leaky bucket shaper, which delays"
              + " requests in one process's queue; the sidecar shares limits across nodes");
        }
        if (reservation && l.algorithm() == Algorithm.SLIDING_WINDOW_LOG) {
          throw new IllegalArgumentException("reservation: limit " + l.name() + " is a sliding log, which is shared"
              + " in exact mode only; give it its own sidecar without reservation, or make it a sliding window"
              + " counter");
        }
        if (SyncedLimiter.batches(l) && syncInterval.toNanos() * 2 > l.periodNanos()) {
          throw new IllegalArgumentException("syncInterval: at most half the window of limit " + l.name() + " ("
              + Durations.formatNanos(l.periodNanos()) + "), got " + Durations.format(syncInterval));
        }
      }
      if (redisUri == null && redisCluster) {
        throw new IllegalArgumentException("redisCluster: needs a Redis URI");
      }
      if (otlpEndpoint == null && otlpStepSet) {
        throw new IllegalArgumentException("otlpStep: needs an OTLP endpoint");
      }
      return new ServeConfig(this);
    }
  }
}
