package io.sluice.benchmarks;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.RemoteBucketBuilder;
import io.github.bucket4j.distributed.proxy.optimization.DelayParameters;
import io.github.bucket4j.distributed.proxy.optimization.Optimizations;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.sluice.node.Limit;
import io.sluice.node.RateLimiter;
import io.sluice.node.Ticker;
import io.sluice.sync.SyncConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.redisson.Redisson;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The implementations the distributed benchmark runs side by side, each behind {@link Node}: one
 * instance is one "node" (one limiter with its own Redis connection).
 */
final class DistributedNodes {
  private DistributedNodes() {
  }

  /** One node of one implementation: thread-safe. */
  interface Node extends AutoCloseable {
    boolean tryAcquire(String key);

    /** Counters of the implementation itself worth reporting (store calls, failures), or "". */
    default String stats() {
      return "";
    }

    /** Errors the implementation swallowed (store failures): a non-zero value fails the run. */
    default long swallowedErrors() {
      return 0;
    }

    /** Calls the implementation made to its store (a flush, a heartbeat, a script call), or -1 if it does not count them. */
    default long storeCalls() {
      return -1;
    }

    @Override
    void close();
  }

  /**
   * What a node limits: {@code limit} permits per {@code window}, as each implementation spells it.
   * {@code fixedWindow} asks for fixed windows aligned to the epoch (over-admission runs) instead of
   * the production default (sliding window counter; greedy refill for Bucket4j; Redisson's own
   * sliding log).
   */
  record Spec(long limit, Duration window, boolean fixedWindow) {
    Limit sluiceLimit() {
      Limit.Builder b = fixedWindow ? Limit.fixedWindow("bench") : Limit.slidingWindowCounter("bench");
      return b.limit(limit).window(window).build();
    }
  }

  /** Makes node number {@code index} of a run; {@code prefix} keeps runs apart in Redis. */
  @FunctionalInterface
  interface Factory {
    Node create(String redisUri, Spec spec, String prefix, int index) throws Exception;
  }

  /** An implementation and setting: the rows of the tables. */
  record Impl(String family, String setting, boolean usesRedis, Factory factory) {
    String label() {
      return setting.isEmpty() ? family : family + " (" + setting + ")";
    }
  }

  // ------------------------------------------------------------------ Sluice

  /** Sluice's SyncedLimiter over its own RedisCounterStore; batch null keeps the default (100). */
  static Impl sluice(Long batch) {
    return sluice("Sluice", batch, Spec::sluiceLimit);
  }

  /**
   * Sluice's SyncedLimiter on a fixed window of the spec's limit and window (whatever the spec's own
   * algorithm), batch null the default: the many-key runs' row where a key's first permit in a window
   * is the node's allowance (SyncConfig.Builder#coldKeyAllowance), which sliding windows do not have.
   */
  static Impl sluiceFixed(Long batch) {
    return sluice(ExactBaseline.SLUICE_FIXED, batch,
        spec -> Limit.fixedWindow("bench").limit(spec.limit()).window(spec.window()).build());
  }

  private static Impl sluice(String family, Long batch, java.util.function.Function<Spec, Limit> limitOf) {
    String setting = batch == null ? "batch default=" + SyncConfig.DEFAULT_BATCH_SIZE : "batch " + batch;
    return new Impl(family, setting, true, (uri, spec, prefix, index) -> {
      RedisCounterStore store = RedisCounterStore.connect(RedisStoreConfig.builder(uri).keyPrefix(prefix).build());
      try {
        SyncedLimiter.Builder b = SyncedLimiter.builder(limitOf.apply(spec), store).nodeId("node-" + index);
        if (batch != null) {
          b.batchSize(batch);
        }
        if (spec.fixedWindow()) {
          // over-admission runs count admissions per window with this clock: decide with the same one
          b.ticker(Ticker.system());
        }
        return new SluiceNode(b.build(), store);
      } catch (RuntimeException e) {
        store.close();
        throw e;
      }
    });
  }

  /**
   * Sluice's token bucket shared over RedisCounterStore (Bucket4j's home ground): capacity = limit,
   * refilled at limit per window, as the Bucket4j rows' greedy bucket. Batch 1 is exact mode (one
   * gcra.lua per decision); above 1, token claims ({@code TokenClaims}).
   */
  static final String SLUICE_BUCKET = "Sluice token bucket";

  static Impl sluiceBucket(long batch) {
    return new Impl(SLUICE_BUCKET, batch == 1 ? "batch 1" : "token claims, batch " + batch, true,
        (uri, spec, prefix, index) -> {
          RedisCounterStore store = RedisCounterStore.connect(RedisStoreConfig.builder(uri).keyPrefix(prefix).build());
          try {
            Limit bucket = Limit.tokenBucket("bench").capacity(spec.limit()).refill(spec.limit(), spec.window()).build();
            // the many-key runs score a bucket at the moments the nodes decided, read from this clock
            return new SluiceNode(SyncedLimiter.builder(bucket, store).nodeId("node-" + index).batchSize(batch)
                .ticker(Ticker.system()).build(), store);
          } catch (RuntimeException e) {
            store.close();
            throw e;
          }
        });
  }

  static final class SluiceNode implements Node {
    final SyncedLimiter limiter;
    private final RedisCounterStore store;

    SluiceNode(SyncedLimiter limiter, RedisCounterStore store) {
      this.limiter = limiter;
      this.store = store;
    }

    @Override
    public boolean tryAcquire(String key) {
      return limiter.tryAcquire(key);
    }

    @Override
    public String stats() {
      return "storeCalls=" + limiter.storeCalls() + " storeFailures=" + limiter.storeFailures()
          + " fallbackDecisions=" + limiter.fallbackDecisions() + " cachedDenials=" + limiter.cachedDenials()
          + " nodesSeen=" + limiter.registeredNodes();
    }

    @Override
    public long storeCalls() {
      return limiter.storeCalls();
    }

    @Override
    public long swallowedErrors() {
      return limiter.storeFailures();
    }

    @Override
    public void close() {
      try {
        limiter.close();
      } finally {
        store.close();
      }
    }
  }

  /** The same node in-process (limiter-node's RateLimiter): no Redis, the ceiling. */
  static Impl inProcess() {
    return new Impl("Sluice in-process", "", false,
        (uri, spec, prefix, index) -> new InProcessNode(RateLimiter.of(spec.sluiceLimit())));
  }

  private record InProcessNode(RateLimiter limiter) implements Node {
    @Override
    public boolean tryAcquire(String key) {
      return limiter.tryAcquire(key);
    }

    @Override
    public void close() {
    }
  }

  // ------------------------------------------------------------------ Bucket4j + Lettuce

  /** Bucket4j's unsynchronized tokens and time of its delaying optimization: Sluice's defaults. */
  static final long BUCKET4J_DELAY_TOKENS = 100;
  static final Duration BUCKET4J_DELAY_TIME = Duration.ofMillis(100);

  /** Bucket4j over Lettuce, compare-and-swap proxy manager; with or without Optimizations.delaying. */
  static Impl bucket4j(boolean delaying) {
    String setting = delaying ? "delaying " + BUCKET4J_DELAY_TOKENS + " tokens/" + BUCKET4J_DELAY_TIME.toMillis() + " ms"
        : "plain CAS";
    return new Impl("Bucket4j+Lettuce", setting, true, (uri, spec, prefix, index) -> {
      RedisClient client = RedisClient.create(uri);
      try {
        StatefulRedisConnection<String, byte[]> connection =
            client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
        LettuceBasedProxyManager<String> manager = Bucket4jLettuce.casBasedBuilder(connection)
            .clientClock(EPOCH_CLOCK)
            .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
            .build();
        RemoteBucketBuilder<String> builder = manager.builder();
        if (delaying) {
          builder = builder.withOptimization(
              Optimizations.delaying(new DelayParameters(BUCKET4J_DELAY_TOKENS, BUCKET4J_DELAY_TIME)));
        }
        BucketConfiguration config = BucketConfiguration.builder().addLimit(bandwidth(spec)).build();
        RemoteBucketBuilder<String> b = builder;
        return new Bucket4jNode(client, connection, key -> b.build(prefix + ":" + key, config));
      } catch (RuntimeException e) {
        client.shutdown(0, 1, TimeUnit.SECONDS);
        throw e;
      }
    });
  }

  /**
   * The bucket for {@code limit} per window: greedy refill (the usual Bucket4j setting) for the
   * throughput runs; for the over-admission runs a bucket of {@code limit} tokens refilled whole at
   * every epoch-aligned window start, so that an exact bucket admits exactly the limit per window,
   * like Sluice's fixed window.
   */
  private static Bandwidth bandwidth(Spec spec) {
    if (!spec.fixedWindow()) {
      return Bandwidth.builder().capacity(spec.limit()).refillGreedy(spec.limit(), spec.window()).build();
    }
    long windowMillis = spec.window().toMillis();
    long now = System.currentTimeMillis();
    Instant nextWindowStart = Instant.ofEpochMilli((now / windowMillis + 1) * windowMillis);
    return Bandwidth.builder().capacity(spec.limit())
        .refillIntervallyAligned(spec.limit(), spec.window(), nextWindowStart)
        .initialTokens(spec.limit())
        .build();
  }

  /** Bucket4j's client-side clock on the same epoch-anchored scale as Sluice's Ticker.system(). */
  private static final TimeMeter EPOCH_CLOCK = new TimeMeter() {
    @Override
    public long currentTimeNanos() {
      return Ticker.system().read();
    }

    @Override
    public boolean isWallClockBased() {
      return true;
    }
  };

  private static final class Bucket4jNode implements Node {
    private final RedisClient client;
    private final StatefulRedisConnection<String, byte[]> connection;
    private final Function<String, BucketProxy> create;
    private final ConcurrentHashMap<String, BucketProxy> buckets = new ConcurrentHashMap<>();

    Bucket4jNode(RedisClient client, StatefulRedisConnection<String, byte[]> connection,
        Function<String, BucketProxy> create) {
      this.client = client;
      this.connection = connection;
      this.create = create;
    }

    @Override
    public boolean tryAcquire(String key) {
      // one proxy per key and node: the delaying optimization keeps its unsynchronized state in it
      BucketProxy b = buckets.get(key);
      if (b == null) {
        b = buckets.computeIfAbsent(key, create);
      }
      return b.tryConsume(1);
    }

    @Override
    public void close() {
      // delaying keeps up to 100 tokens/100 ms unsynchronized: push them before closing
      for (BucketProxy b : buckets.values()) {
        try {
          b.getOptimizationController().syncImmediately();
        } catch (RuntimeException e) {
          // best effort; the run already counted its decisions
        }
      }
      connection.close();
      client.shutdown(0, 1, TimeUnit.SECONDS);
    }
  }

  // ------------------------------------------------------------------ Redisson

  /** Redisson's RRateLimiter, RateType.OVERALL, one client (its own connection pool) per node. */
  static Impl redisson() {
    return new Impl("Redisson RRateLimiter", "OVERALL", true, (uri, spec, prefix, index) -> {
      Config config = new Config();
      config.useSingleServer()
          .setAddress(uri)
          .setConnectionMinimumIdleSize(2)
          .setConnectionPoolSize(16)
          .setSubscriptionConnectionMinimumIdleSize(0)
          .setSubscriptionConnectionPoolSize(1);
      RedissonClient client = Redisson.create(config);
      return new RedissonNode(client, key -> {
        RRateLimiter l = client.getRateLimiter(prefix + ":" + key);
        l.trySetRate(RateType.OVERALL, spec.limit(), spec.window());
        return l;
      });
    });
  }

  private static final class RedissonNode implements Node {
    private final RedissonClient client;
    private final Function<String, RRateLimiter> create;
    private final ConcurrentHashMap<String, RRateLimiter> limiters = new ConcurrentHashMap<>();

    RedissonNode(RedissonClient client, Function<String, RRateLimiter> create) {
      this.client = client;
      this.create = create;
    }

    @Override
    public boolean tryAcquire(String key) {
      RRateLimiter l = limiters.get(key);
      if (l == null) {
        l = limiters.computeIfAbsent(key, create);
      }
      return l.tryAcquire();
    }

    @Override
    public void close() {
      client.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }
}
