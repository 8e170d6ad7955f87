package io.sluice.benchmarks;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.Outcome;
import io.sluice.node.RateLimiter;
import io.sluice.node.Ticker;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Keyed decisions, "key -> state -> decision", for Sluice and three peers side by side: the
 * allowed path only (the limits are so high that nothing is ever denied, and a denial fails the
 * run), on keys already known to the limiter.
 *
 * <ul>
 *   <li>{@code sluice}: {@link RateLimiter#tryAcquire(String)} (boolean; Sluice keeps its own
 *       bounded key table);</li>
 *   <li>{@code sluiceSystemClock}: the same with {@link Ticker#system()}, which reads
 *       {@code System.nanoTime()} on every decision, instead of the default {@link Ticker#cached()}
 *       (a field refreshed every millisecond): the share of the clock in each decision;</li>
 *   <li>{@code sluiceDecision}: {@link RateLimiter#acquire(String)}, the rich path returning a
 *       {@link Decision};</li>
 *   <li>{@code bucket4j}: {@code ConcurrentHashMap<String, Bucket>} (get, computeIfAbsent on a miss),
 *       lock-free local buckets, {@code tryConsume(1)};</li>
 *   <li>{@code resilience4j}: {@code ConcurrentHashMap<String, RateLimiter>} of
 *       {@code AtomicRateLimiter}, {@code acquirePermission()};</li>
 *   <li>{@code sluiceFixedWindow}, {@code sluiceSlidingWindow}: {@link RateLimiter#tryAcquire(String)}
 *       on a fixed window and a sliding window counter of {@link Limit#MAX_WINDOW_LIMIT} per second
 *       (the window kernels beside the bucket's);</li>
 *   <li>{@code naiveWindows}: {@code ConcurrentHashMap<String, NaiveWindowCounter>}, what a user
 *       writes without a library: one CAS-updated fixed-window counter per key;</li>
 *   <li>{@code guava}: {@code ConcurrentHashMap<String, RateLimiter>} of
 *       {@code RateLimiter.create(rate)}, {@code tryAcquire()}.</li>
 * </ul>
 *
 * <p>{@code keys = 1} is one hot key; {@code keys = 100000} draws each key uniformly at random
 * (per-thread xorshift, no allocation) from 100,000 distinct keys ("user-000123"), all inserted
 * during setup.
 *
 * <p>Limits (all chosen so that no implementation can deny during a run):
 * <ul>
 *   <li>Sluice and Bucket4j: capacity {@value #CAPACITY}, refill {@value #REFILL_PER_SECOND} per
 *       second. Bucket4j refuses any refill above 1 token per nanosecond (1e9/s), so 1e9/s is the
 *       common refill rate.</li>
 *   <li>Resilience4j: {@code limitForPeriod} is an int: {@link Integer#MAX_VALUE} per second.</li>
 *   <li>Guava: {@value #REFILL_PER_SECOND} permits per second.</li>
 * </ul>
 *
 * <p>Sluice evicts keys <em>at rest</em> (bucket full again) during its amortised sweeps, which run
 * every {@code max(1024, maxKeys / 4)} insertions; at 1e9/s a key is back at rest a nanosecond
 * after a decision. The limiter therefore gets {@code maxKeys = }{@value #SLUICE_MAX_KEYS} (the
 * default), so that inserting 100,000 keys triggers no sweep and every measured key stays known;
 * the trial's tear-down checks that nothing was evicted or overflowed.
 *
 * <p>Run (from the repository root; {@code benchmarks/run.sh} does this for 1 and 2 threads and
 * writes {@code benchmarks/results/}):
 *
 * <pre>
 * ./mvnw -B -q -pl limiter-node,benchmarks -am package -DskipTests
 * java -jar benchmarks/target/benchmarks.jar KeyedDecisionBenchmark -t 1 -f 1 -wi 3 -w 2s -i 5 -r 2s \
 *     -prof gc -rf json -rff benchmarks/results/keyed-decisions-t1.json
 * </pre>
 */
@BenchmarkMode(org.openjdk.jmh.annotations.Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class KeyedDecisionBenchmark {
  /** Bucket size of Sluice and Bucket4j: no run takes this many permits from one key. */
  public static final long CAPACITY = 1_000_000_000_000L;
  /** Refill per second of Sluice and Bucket4j, and Guava's rate: Bucket4j's maximum (1 per ns). */
  public static final long REFILL_PER_SECOND = 1_000_000_000L;
  /** Resilience4j's permits per one-second period (an int there). */
  public static final int R4J_LIMIT_FOR_PERIOD = Integer.MAX_VALUE;
  /** Sluice's key table bound: far enough above the 100,000 keys that no sweep runs (see above). */
  public static final int SLUICE_MAX_KEYS = 1_000_000;
  /** Size of the largest key set. */
  public static final int KEY_SPACE = 100_000;

  // ---------------------------------------------------------------- states

  /** The keys of one trial, shared by all threads. */
  @State(Scope.Benchmark)
  public static class Keys {
    @Param({"1", "100000"})
    public int keys;

    public String[] names;

    @Setup(Level.Trial)
    public void setup() {
      if (keys < 1 || keys > KEY_SPACE) {
        throw new IllegalArgumentException("keys: 1 to " + KEY_SPACE + ", got " + keys);
      }
      names = new String[keys];
      for (int i = 0; i < keys; i++) {
        names[i] = keyName(i);
      }
    }
  }

  /** Per-thread key cursor (xorshift64) and denial count. */
  @State(Scope.Thread)
  public static class Cursor {
    private static final AtomicLong SEEDS = new AtomicLong(0x5EED_1234_ABCD_EF01L);

    long x;
    /** Denied decisions seen by this thread; must stay 0 (checked at tear-down). */
    public long denied;

    @Setup(Level.Trial)
    public void setup() {
      x = splitMix64(SEEDS.getAndAdd(0x9E37_79B9_7F4A_7C15L));
      if (x == 0) {
        x = 1;
      }
      denied = 0;
    }

    /** A key drawn uniformly from {@code names}: xorshift64 then a multiply-shift range reduction. */
    public String next(String[] names) {
      long s = x;
      s ^= s << 13;
      s ^= s >>> 7;
      s ^= s << 17;
      x = s;
      return names[(int) (((s >>> 32) * names.length) >>> 32)];
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      if (denied != 0) {
        throw new IllegalStateException(denied + " decisions were denied in a benchmark of the"
            + " allowed path: the limits are too low for this machine");
      }
    }
  }

  @State(Scope.Benchmark)
  public static class SluiceState {
    public RateLimiter limiter;
    int keys;

    @Setup(Level.Trial)
    public void setup(Keys k) {
      limiter = create();
      keys = k.names.length;
      for (String key : k.names) {
        requireAllowed("sluice", limiter.tryAcquire(key));
      }
      requireAllowed("sluiceDecision", limiter.acquire(k.names[0]).allowed());
    }

    RateLimiter create() {
      return newSluice(Ticker.cached());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      long denied = limiter.decisions(Outcome.DENIED);
      if (denied != 0 || limiter.evicted() != 0 || limiter.overflowed() != 0 || limiter.size() != keys) {
        throw new IllegalStateException("sluice: expected " + keys + " known keys and no denial, got denied="
            + denied + " evicted=" + limiter.evicted() + " overflowed=" + limiter.overflowed()
            + " size=" + limiter.size());
      }
    }
  }

  /**
   * Sluice's fixed window on the same keys, with a limit no run reaches ({@link Limit#MAX_WINDOW_LIMIT}
   * per second): the window kernel beside the bucket's.
   */
  @State(Scope.Benchmark)
  public static class SluiceFixedWindowState extends SluiceState {
    @Override
    RateLimiter create() {
      return newSluiceWindow(Limit.fixedWindow("bench"));
    }
  }

  /** Sluice's sliding window counter (the production default) on the same keys, limit as the fixed window's. */
  @State(Scope.Benchmark)
  public static class SluiceSlidingWindowState extends SluiceState {
    @Override
    RateLimiter create() {
      return newSluiceWindow(Limit.slidingWindowCounter("bench"));
    }
  }

  /** Sluice reading {@code System.nanoTime()} on every decision instead of its cached ticker. */
  @State(Scope.Benchmark)
  public static class SluiceSystemClockState extends SluiceState {
    @Override
    RateLimiter create() {
      return newSluice(Ticker.system());
    }
  }

  @State(Scope.Benchmark)
  public static class Bucket4jState {
    public final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();

    @Setup(Level.Trial)
    public void setup(Keys k) {
      buckets.clear();
      for (String key : k.names) {
        requireAllowed("bucket4j", bucket(buckets, key).tryConsume(1));
      }
    }
  }

  @State(Scope.Benchmark)
  public static class Resilience4jState {
    public final ConcurrentHashMap<String, io.github.resilience4j.ratelimiter.RateLimiter> limiters =
        new ConcurrentHashMap<>();

    @Setup(Level.Trial)
    public void setup(Keys k) {
      limiters.clear();
      for (String key : k.names) {
        requireAllowed("resilience4j", resilience4j(limiters, key).acquirePermission());
      }
    }
  }

  @State(Scope.Benchmark)
  public static class GuavaState {
    public final ConcurrentHashMap<String, com.google.common.util.concurrent.RateLimiter> limiters =
        new ConcurrentHashMap<>();

    @Setup(Level.Trial)
    public void setup(Keys k) {
      limiters.clear();
      for (String key : k.names) {
        requireAllowed("guava", guava(limiters, key).tryAcquire());
      }
    }
  }

  @State(Scope.Benchmark)
  public static class NaiveWindowState {
    public final ConcurrentHashMap<String, NaiveWindowCounter> counters = new ConcurrentHashMap<>();

    @Setup(Level.Trial)
    public void setup(Keys k) {
      counters.clear();
      for (String key : k.names) {
        requireAllowed("naiveWindows", naive(counters, key).tryAcquire());
      }
    }
  }

  // ---------------------------------------------------------------- benchmarks

  @Benchmark
  public boolean sluice(SluiceState s, Keys k, Cursor c) {
    boolean ok = s.limiter.tryAcquire(c.next(k.names));
    if (!ok) {
      c.denied++;
    }
    return ok;
  }

  @Benchmark
  public boolean sluiceSystemClock(SluiceSystemClockState s, Keys k, Cursor c) {
    boolean ok = s.limiter.tryAcquire(c.next(k.names));
    if (!ok) {
      c.denied++;
    }
    return ok;
  }

  @Benchmark
  public boolean sluiceFixedWindow(SluiceFixedWindowState s, Keys k, Cursor c) {
    boolean ok = s.limiter.tryAcquire(c.next(k.names));
    if (!ok) {
      c.denied++;
    }
    return ok;
  }

  @Benchmark
  public boolean sluiceSlidingWindow(SluiceSlidingWindowState s, Keys k, Cursor c) {
    boolean ok = s.limiter.tryAcquire(c.next(k.names));
    if (!ok) {
      c.denied++;
    }
    return ok;
  }

  @Benchmark
  public Decision sluiceDecision(SluiceState s, Keys k, Cursor c) {
    Decision d = s.limiter.acquire(c.next(k.names));
    if (!d.allowed()) {
      c.denied++;
    }
    return d;
  }

  @Benchmark
  public boolean bucket4j(Bucket4jState s, Keys k, Cursor c) {
    boolean ok = bucket(s.buckets, c.next(k.names)).tryConsume(1);
    if (!ok) {
      c.denied++;
    }
    return ok;
  }

  @Benchmark
  public boolean resilience4j(Resilience4jState s, Keys k, Cursor c) {
    boolean ok = resilience4j(s.limiters, c.next(k.names)).acquirePermission();
    if (!ok) {
      c.denied++;
    }
    return ok;
  }

  @Benchmark
  public boolean naiveWindows(NaiveWindowState s, Keys k, Cursor c) {
    boolean ok = naive(s.counters, c.next(k.names)).tryAcquire();
    if (!ok) {
      c.denied++;
    }
    return ok;
  }

  @Benchmark
  public boolean guava(GuavaState s, Keys k, Cursor c) {
    boolean ok = guava(s.limiters, c.next(k.names)).tryAcquire();
    if (!ok) {
      c.denied++;
    }
    return ok;
  }

  // ---------------------------------------------------------------- construction and lookup

  public static RateLimiter newSluice(Ticker ticker) {
    Limit limit = Limit.tokenBucket("bench").capacity(CAPACITY)
        .refill(REFILL_PER_SECOND, Duration.ofSeconds(1)).build();
    return RateLimiter.builder(limit).ticker(ticker).maxKeys(SLUICE_MAX_KEYS).build();
  }

  /** A window limit no run reaches: the most a window may count, per second. */
  static RateLimiter newSluiceWindow(Limit.Builder window) {
    Limit limit = window.limit(Limit.MAX_WINDOW_LIMIT).window(Duration.ofSeconds(1)).build();
    return RateLimiter.builder(limit).maxKeys(SLUICE_MAX_KEYS).build();
  }

  static Bucket newBucket(String key) {
    return Bucket.builder()
        .addLimit(Bandwidth.builder().capacity(CAPACITY).refillGreedy(REFILL_PER_SECOND, Duration.ofSeconds(1)).build())
        .build();
  }

  private static final RateLimiterConfig R4J_CONFIG = RateLimiterConfig.custom()
      .limitForPeriod(R4J_LIMIT_FOR_PERIOD)
      .limitRefreshPeriod(Duration.ofSeconds(1))
      .timeoutDuration(Duration.ZERO)
      .build();

  static io.github.resilience4j.ratelimiter.RateLimiter newResilience4j(String key) {
    return io.github.resilience4j.ratelimiter.RateLimiter.of(key, R4J_CONFIG);
  }

  static com.google.common.util.concurrent.RateLimiter newGuava(String key) {
    return com.google.common.util.concurrent.RateLimiter.create(REFILL_PER_SECOND);
  }

  /** The usual user code: a plain get, and computeIfAbsent only on a miss. */
  static Bucket bucket(ConcurrentHashMap<String, Bucket> map, String key) {
    Bucket b = map.get(key);
    return b != null ? b : map.computeIfAbsent(key, KeyedDecisionBenchmark::newBucket);
  }

  static io.github.resilience4j.ratelimiter.RateLimiter resilience4j(
      ConcurrentHashMap<String, io.github.resilience4j.ratelimiter.RateLimiter> map, String key) {
    io.github.resilience4j.ratelimiter.RateLimiter r = map.get(key);
    return r != null ? r : map.computeIfAbsent(key, KeyedDecisionBenchmark::newResilience4j);
  }

  static NaiveWindowCounter naive(ConcurrentHashMap<String, NaiveWindowCounter> map, String key) {
    NaiveWindowCounter c = map.get(key);
    return c != null ? c : map.computeIfAbsent(key, k -> new NaiveWindowCounter(Limit.MAX_WINDOW_LIMIT));
  }

  static com.google.common.util.concurrent.RateLimiter guava(
      ConcurrentHashMap<String, com.google.common.util.concurrent.RateLimiter> map, String key) {
    com.google.common.util.concurrent.RateLimiter r = map.get(key);
    return r != null ? r : map.computeIfAbsent(key, KeyedDecisionBenchmark::newGuava);
  }

  /** "user-000123" for 100,000 keys; more digits beyond. */
  public static String keyName(int i) {
    String digits = Integer.toString(i);
    StringBuilder sb = new StringBuilder(12).append("user-");
    for (int pad = digits.length(); pad < 6; pad++) {
      sb.append('0');
    }
    return sb.append(digits).toString();
  }

  static void requireAllowed(String implementation, boolean allowed) {
    if (!allowed) {
      throw new IllegalStateException(implementation + ": setup decision denied; the benchmark"
          + " measures the allowed path only");
    }
  }

  static long splitMix64(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
    return z ^ (z >>> 31);
  }
}
