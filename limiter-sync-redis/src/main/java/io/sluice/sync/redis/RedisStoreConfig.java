package io.sluice.sync.redis;

import io.sluice.node.Durations;
import java.time.Duration;

/**
 * Settings of a {@link RedisCounterStore}. Immutable; every setter of the builder checks its value
 * and names the field in its message.
 *
 * <p>The defaults follow Lettuce's known pitfalls: a command timeout is always set (a blackholed link
 * must fail in hundreds of milliseconds, not hang), the request queue is bounded (Lettuce's is
 * unbounded by default and buffers commands while disconnected), and commands are rejected at once
 * while disconnected instead of being queued for a replay.
 */
public final class RedisStoreConfig {
  /**
   * What {@link RedisCounterStore#connect} does when the server may evict Sluice's keys (its
   * {@code maxmemory-policy} is not {@code noeviction}; every Sluice key has a TTL, so the
   * {@code volatile-*} policies evict them as readily as the {@code allkeys-*} ones): an evicted counter
   * starts its window over, an evicted node sequence lets a replayed flush count twice.
   */
  public enum EvictionCheck {
    /** Refuse to connect, naming the policy (the default). */
    REFUSE,
    /** Connect, and log a warning naming the policy. */
    WARN,
    /** Do not look. */
    OFF
  }

  public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofMillis(500);
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);
  public static final int DEFAULT_REQUEST_QUEUE_SIZE = 10_000;
  public static final int DEFAULT_MAX_BATCH_SIZE = 500;
  public static final Duration DEFAULT_SEQUENCE_TTL = Duration.ofDays(1);
  public static final String DEFAULT_KEY_PREFIX = "sluice";

  private final String uri;
  private final Duration commandTimeout;
  private final Duration connectTimeout;
  private final int requestQueueSize;
  private final int maxBatchSize;
  private final Duration sequenceTtl;
  private final String keyPrefix;
  private final boolean cluster;
  private final java.nio.file.Path trustedCertificates;
  private final EvictionCheck evictionCheck;

  private RedisStoreConfig(Builder b) {
    this.uri = b.uri;
    this.commandTimeout = b.commandTimeout;
    this.connectTimeout = b.connectTimeout;
    this.requestQueueSize = b.requestQueueSize;
    this.maxBatchSize = b.maxBatchSize;
    this.sequenceTtl = b.sequenceTtl;
    this.keyPrefix = b.keyPrefix;
    this.cluster = b.cluster;
    this.trustedCertificates = b.trustedCertificates;
    this.evictionCheck = b.evictionCheck;
  }

  /** Starts a builder for the given URI: {@code redis://host:port}, {@code rediss://} for TLS,
   * {@code redis://user:password@host} for AUTH/ACL, {@code redis-sentinel://} for Sentinel. */
  public static Builder builder(String uri) {
    return new Builder(uri);
  }

  public String uri() {
    return uri;
  }

  public Duration commandTimeout() {
    return commandTimeout;
  }

  public Duration connectTimeout() {
    return connectTimeout;
  }

  public int requestQueueSize() {
    return requestQueueSize;
  }

  public int maxBatchSize() {
    return maxBatchSize;
  }

  public Duration sequenceTtl() {
    return sequenceTtl;
  }

  public String keyPrefix() {
    return keyPrefix;
  }

  /** Whether the URI names a node of a Redis Cluster (batches are then grouped by hash slot). */
  public boolean cluster() {
    return cluster;
  }

  /** PEM certificates that TLS ({@code rediss://}) trusts instead of the JVM's default trust store; null for the default. */
  /** What connecting does when the server may evict Sluice's keys. */
  public EvictionCheck evictionCheck() {
    return evictionCheck;
  }

  public java.nio.file.Path trustedCertificates() {
    return trustedCertificates;
  }

  /** Builds a {@link RedisStoreConfig} for one Redis URI; unset values keep their defaults. */
  public static final class Builder {
    private final String uri;
    private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
    private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    private int requestQueueSize = DEFAULT_REQUEST_QUEUE_SIZE;
    private int maxBatchSize = DEFAULT_MAX_BATCH_SIZE;
    private Duration sequenceTtl = DEFAULT_SEQUENCE_TTL;
    private String keyPrefix = DEFAULT_KEY_PREFIX;
    private EvictionCheck evictionCheck = EvictionCheck.REFUSE;
    private boolean cluster;
    private java.nio.file.Path trustedCertificates;

    Builder(String uri) {
      if (uri == null || uri.isBlank()) {
        throw new IllegalArgumentException("uri: must not be null or blank");
      }
      if (!uri.matches("(?i)(redis|rediss|redis-socket|redis-sentinel|rediss-sentinel)://.*")) {
        throw new IllegalArgumentException("uri: must start with redis://, rediss:// or redis-sentinel://, got " + uri);
      }
      this.uri = uri;
    }

    public Builder commandTimeout(Duration timeout) {
      this.commandTimeout = positive("commandTimeout", timeout);
      return this;
    }

    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = positive("connectTimeout", timeout);
      return this;
    }

    public Builder requestQueueSize(int size) {
      if (size < 1) {
        throw new IllegalArgumentException("requestQueueSize: must be positive, got " + size);
      }
      this.requestQueueSize = size;
      return this;
    }

    /** Most keys per flush call: a long script blocks Redis for everyone. */
    public Builder maxBatchSize(int size) {
      if (size < 1 || size > 10_000) {
        throw new IllegalArgumentException("maxBatchSize: must be between 1 and 10000, got " + size);
      }
      this.maxBatchSize = size;
      return this;
    }

    /** How long the store remembers a node's last sequence: a retry older than this may apply twice. */
    public Builder sequenceTtl(Duration ttl) {
      this.sequenceTtl = positive("sequenceTtl", ttl);
      if (ttl.toSeconds() < 1) {
        throw new IllegalArgumentException("sequenceTtl: must be at least 1s, got " + Durations.format(ttl));
      }
      return this;
    }

    public Builder keyPrefix(String prefix) {
      if (prefix == null || !prefix.matches("[A-Za-z0-9_.:-]{1,64}")) {
        throw new IllegalArgumentException("keyPrefix: must be 1 to 64 characters of [A-Za-z0-9_.:-], got " + prefix);
      }
      this.keyPrefix = prefix;
      return this;
    }

    /**
     * The URI names a node of a Redis Cluster: the store discovers the others, follows slot moves,
     * and flushes one batch per hash slot.
     */
    public Builder cluster(boolean cluster) {
      this.cluster = cluster;
      return this;
    }

    /**
     * TLS ({@code rediss://}): trust the certificate authorities in this PEM file (a private CA)
     * rather than the JVM's default trust store. The server's certificate is still verified.
     */
    public Builder trustedCertificates(java.nio.file.Path pemFile) {
      if (pemFile == null || !java.nio.file.Files.isReadable(pemFile)) {
        throw new IllegalArgumentException("trustedCertificates: must be a readable PEM file, got " + pemFile);
      }
      this.trustedCertificates = pemFile;
      return this;
    }

    /**
     * What connecting does when the server's {@code maxmemory-policy} may evict Sluice's keys:
     * {@link EvictionCheck#REFUSE} (default), {@link EvictionCheck#WARN} or {@link EvictionCheck#OFF}. A
     * server that does not let clients read its configuration (a managed Redis without {@code CONFIG})
     * is connected to, with a warning.
     */
    public Builder evictionCheck(EvictionCheck check) {
      if (check == null) {
        throw new IllegalArgumentException("evictionCheck: must not be null");
      }
      this.evictionCheck = check;
      return this;
    }

    public RedisStoreConfig build() {
      if (cluster && uri.toLowerCase(java.util.Locale.ROOT).contains("sentinel")) {
        throw new IllegalArgumentException("cluster: a Sentinel URI names no cluster node, got " + uri);
      }
      return new RedisStoreConfig(this);
    }

    private static Duration positive(String field, Duration d) {
      if (d == null || d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(field + ": must be positive, got " + Durations.format(d));
      }
      return d;
    }
  }
}
