package io.sluice.sync.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Algorithm;
import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.node.RateLimiter;
import io.sluice.node.ReferenceModels;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.ExactArgs;
import io.sluice.sync.spi.ExactResult;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.StoreKeys;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * The exact mode's contract (batch size 1), run by the integration test of every {@link ExactStore}
 * against a real server or cluster (the shared test kit): each algorithm over random request traces,
 * compared step by step with limiter-node's reference model and with the in-process limiter on the
 * same clock, the steps going through the nodes' stores in turn; then behaviours checked one by one;
 * then several nodes hammering one key at once. Every trace comes from a seed and a failure names the
 * seed, the limit and the step, so it can be replayed. Subclasses hand out the nodes' stores, open for
 * the whole class on a store of their own (keys are not cleaned up between tests: every test uses
 * limits of its own), and say how to look at a key.
 */
public abstract class ExactStoreContract {
  private static final int TRACES = 150;
  private static final int MAX_STEPS = 80;
  private static final long BASE_SEED = 0xE7AC7L;
  /** 2026-01-01T00:00Z, the node's ManualTicker's default start, in microseconds. */
  protected static final long EPOCH_2026_MICROS = 1_767_225_600_000_000L;
  /** Nodes, each with its own store (connection, member or client). */
  protected static final int NODES = 4;

  /** The store of node {@code n} (0 to {@link #NODES} - 1); the subclass closes it after the class. */
  protected abstract ExactStore node(int n);

  /** Time left before the key of this limit expires, in ms; negative when the key does not exist or never expires. */
  /** {@code storeName}: the limit's {@link StoreKeys#storeName}. */
  protected abstract long ttlMillis(String storeName, String key);

  /** Whether the store holds the key of this limit. */
  protected abstract boolean exists(String limitName, String key);

  /** Permits the sliding window log of this limit's key holds (ZCARD), 0 when there is none. */
  protected abstract long logSize(String limitName, String key);

  protected ExactResult acquire(Limit limit, String key, long cost, long nowMicros) {
    return acquire(node(0), limit, key, cost, nowMicros);
  }

  protected static ExactResult acquire(ExactStore store, Limit limit, String key, long cost, long nowMicros) {
    try {
      return store.acquire(limit, key, cost, nowMicros).toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("acquire " + limit + " key " + key + " cost " + cost + " at " + nowMicros, e);
    }
  }

  private static long ceilMicros(long nanos) {
    return -Math.floorDiv(-nanos, 1_000L);
  }

  // ---- random traces against the reference models and the in-process limiter ----

  @Test
  void tokenBucketMatchesModel() {
    forEachTrace(r -> ExactTraces.bucket(Limit.tokenBucket("tb"), r));
  }

  @Test
  void leakyBucketMeterMatchesModel() {
    forEachTrace(r -> ExactTraces.bucket(Limit.leakyBucket("leaky"), r));
  }

  @Test
  void leakyBucketShaperMatchesModel() {
    forEachTrace(r -> ExactTraces.bucket(Limit.leakyBucketShaper("shaper"), r));
  }

  @Test
  void fixedWindowMatchesModel() {
    forEachTrace(r -> ExactTraces.window(Limit.fixedWindow("fixed"), r));
  }

  @Test
  void slidingWindowLogMatchesModel() {
    forEachTrace(r -> ExactTraces.window(Limit.slidingWindowLog("log"), r));
  }

  @Test
  void slidingWindowCounterMatchesModel() {
    forEachTrace(r -> ExactTraces.window(Limit.slidingWindowCounter("counter"), r));
  }

  private void forEachTrace(Function<SplittableRandom, Limit> limits) {
    long[] tally = new long[2]; // steps, denials
    for (int t = 0; t < TRACES; t++) {
      long seed = BASE_SEED + t;
      SplittableRandom random = new SplittableRandom(seed);
      Limit limit = limits.apply(random);
      long startMicros = EPOCH_2026_MICROS + random.nextLong(0, 3_600_000_000L);
      check(seed, limit, startMicros, ExactTraces.trace(random, limit.periodNanos() / 1_000, MAX_STEPS), tally);
    }
    // the traces must exercise both answers, or matching the model would prove little
    System.out.println(getClass().getSimpleName() + ": " + tally[0] + " steps, " + tally[1] + " denied");
    assertThat(tally[1]).as("denials in " + tally[0] + " steps").isBetween(tally[0] / 10, tally[0] * 9 / 10);
  }

  private void check(long seed, Limit limit, long startMicros, List<ExactTraces.Step> trace, long[] tally) {
    ManualTicker ticker = new ManualTicker(startMicros * 1_000);
    RateLimiter inProcess = RateLimiter.builder(limit).ticker(ticker).build();
    ReferenceModels.Model model = ReferenceModels.of(limit, ticker.read());
    long periodMicros = limit.periodNanos() / 1_000;
    String key = "trace-" + seed;
    long now = startMicros;
    int i = 0;
    for (ExactTraces.Step step : trace) {
      long gap = step.gapMicros;
      if (gap < 0) {
        long toBoundary = (Math.floorDiv(now, periodMicros) + 1) * periodMicros - now;
        gap = toBoundary + (gap == -2 ? 0 : gap == -1 ? -1 : 1);
        gap = Math.max(0, gap);
      }
      now += gap;
      ticker.advanceNanos(gap * 1_000);
      long cost = Math.min(step.cost, limit.capacity());
      // each step through the next node's store: one key's state, whoever asks
      ExactResult actual = acquire(node(i % NODES), limit, key, cost, now);
      tally[0]++;
      tally[1] += actual.allowed() ? 0 : 1;
      ReferenceModels.Answer expected = model.request(now * 1_000, cost);
      Decision local = inProcess.acquire("k", cost);
      String where = "seed " + seed + " " + limit + " step " + i++ + " (+" + gap + "us x" + cost + ") at "
          + now + "us: model " + expected + ", in-process " + local + ", store " + actual;
      assertThat(actual.allowed()).as(where).isEqualTo(expected.allowed);
      assertThat(actual.remaining()).as(where).isEqualTo(expected.remaining);
      if (expected.retryAfter >= 0) {
        assertThat(actual.retryAfterMicros()).as(where).isEqualTo(ceilMicros(expected.retryAfter));
      }
      assertThat(actual.delayMicros()).as(where).isEqualTo(ceilMicros(expected.delay));
      // the in-process limiter on the same clock: also where the model is silent (the sliding
      // counter's retry-after) and for the time until reset, which the models do not track
      assertThat(local.allowed()).as(where).isEqualTo(expected.allowed);
      assertThat(actual.retryAfterMicros()).as(where).isEqualTo(ceilMicros(local.retryAfterNanos()));
      assertThat(actual.resetMicros()).as(where).isEqualTo(ceilMicros(local.resetNanos()));
      assertThat(actual.delayMicros()).as(where).isEqualTo(ceilMicros(local.delayNanos()));
      if (actual.allowed()) {
        assertThat(actual.retryAfterMicros()).as(where).isZero();
      }
    }
  }

  // ---- behaviours, one by one ----

  /** 100 permits just before a window edge and 100 just after: the fixed window's known 2x burst. */
  @Test
  void fixedWindowAdmitsTwiceTheLimitAcrossAnEdgeAndTheSlidingLogDoesNot() {
    Duration second = Duration.ofSeconds(1);
    Limit fixed = Limit.fixedWindow("edge-fixed").limit(100).window(second).build();
    Limit log = Limit.slidingWindowLog("edge-log").limit(100).window(second).build();
    Limit counter = Limit.slidingWindowCounter("edge-counter").limit(100).window(second).build();
    long edge = EPOCH_2026_MICROS + 42 * 1_000_000L; // a whole second: a window edge
    for (Limit limit : List.of(fixed, log, counter)) {
      int admitted = 0;
      for (int i = 0; i < 100; i++) {
        admitted += acquire(limit, "burst", 1, edge - 1_000 + i).allowed() ? 1 : 0;
      }
      assertThat(admitted).as(limit.toString()).isEqualTo(100);
      for (int i = 0; i < 100; i++) {
        admitted += acquire(limit, "burst", 1, edge + 1_000 + i).allowed() ? 1 : 0;
      }
      assertThat(admitted).as(limit.toString()).isEqualTo(limit == fixed ? 200 : 100);
    }
    // the log frees its permits exactly one window after each was taken
    ExactResult denied = acquire(log, "burst", 1, edge + 5_000);
    assertThat(denied.allowed()).isFalse();
    assertThat(denied.retryAfterMicros()).isEqualTo(1_000_000 - 1_000 - 5_000);
    assertThat(acquire(log, "burst", 1, edge - 1_000 + 1_000_000).allowed()).isTrue();
  }

  @Test
  void everyKeyExpiresOnceAtRest() {
    long now = EPOCH_2026_MICROS + 123_456_789;
    List<Limit> limits = List.of(
        Limit.tokenBucket("ttl-tb").capacity(10).refill(1, Duration.ofSeconds(1)).build(),
        Limit.leakyBucket("ttl-lb").capacity(10).refill(1, Duration.ofSeconds(1)).build(),
        Limit.leakyBucketShaper("ttl-sh").capacity(10).refill(1, Duration.ofSeconds(1)).build(),
        Limit.fixedWindow("ttl-fw").limit(10).window(Duration.ofSeconds(10)).build(),
        Limit.slidingWindowLog("ttl-log").limit(10).window(Duration.ofSeconds(10)).build(),
        Limit.slidingWindowCounter("ttl-swc").limit(10).window(Duration.ofSeconds(10)).build());
    for (Limit limit : limits) {
      long asked = System.nanoTime();
      ExactResult r = acquire(limit, "k", 3, now);
      assertThat(r.allowed()).isTrue();
      long pttl = ttlMillis(StoreKeys.storeName(limit), "k");
      // the time to live counts down on the wall clock: less what passed since the call began (a
      // loaded machine once took 6 s here, and 8 s set read as 2 s left)
      long passed = (System.nanoTime() - asked) / 1_000_000 + 1;
      // live until the state is back at rest (reset), plus a margin of five seconds, and no longer
      assertThat(pttl).as(limit + " " + r).isPositive()
          .isBetween(r.resetMicros() / 1_000 - passed, r.resetMicros() / 1_000 + 5_001);
    }
    // buckets: 3 permits at 1 per second drain in 3 s; fixed window: the rest of the window;
    // sliding counter: the rest of this window and all of the next; log: one window
    assertThat(acquire(limits.get(0), "k", 1, now).resetMicros()).isEqualTo(4_000_000);
    assertThat(acquire(limits.get(3), "k", 1, now).resetMicros()).isEqualTo(10_000_000 - 3_456_789);
    assertThat(acquire(limits.get(4), "k", 1, now).resetMicros()).isEqualTo(10_000_000);
    assertThat(acquire(limits.get(5), "k", 1, now).resetMicros()).isEqualTo(20_000_000 - 3_456_789);
  }

  @Test
  void hugeBinaryAndUnicodeKeysAreDistinct() {
    String huge = "x".repeat(100_000);
    String loneSurrogate = "a\uD800b";
    String replaced = "a?b"; // what a lossy UTF-8 encoding would turn the lone surrogate into
    String unicode = "用户-🚦-ключ";
    String braces = "a}b{c";
    String controls = "\0\r\n*3\r\n$4\r\nPING";
    String otherLone = "a\uDC00b"; // what the UTF-16 charset wrote as the same U+FFFD as the first one
    List<String> keys = List.of(huge, loneSurrogate, replaced, unicode, braces, controls, otherLone);
    long now = EPOCH_2026_MICROS;
    for (Algorithm a : Algorithm.values()) {
      Limit limit = a == Algorithm.TOKEN_BUCKET || a == Algorithm.LEAKY_BUCKET || a == Algorithm.LEAKY_BUCKET_SHAPER
          ? Limit.builder("keys-" + a.name().toLowerCase(), a).capacity(20).refill(1, Duration.ofHours(1)).build()
          : Limit.builder("keys-" + a.name().toLowerCase(), a).limit(20).window(Duration.ofHours(1)).build();
      for (int i = 0; i < keys.size(); i++) {
        assertThat(acquire(limit, keys.get(i), i + 1, now).remaining()).as(a + " key " + i).isEqualTo(20 - (i + 1));
      }
      for (int i = 0; i < keys.size(); i++) {
        assertThat(acquire(limit, keys.get(i), 1, now).remaining()).as(a + " key " + i).isEqualTo(20 - (i + 2));
      }
    }
    assertThat(exists("keys-fixed_window", unicode)).isTrue();
  }

  /**
   * Limit {@code <L>} with key {@code b:c} and limit {@code <L>:b} with key {@code c} (once both the
   * key {@code sluice:{<L>:b:c}}) have a budget each, for every algorithm.
   */
  @Test
  void limitsAndKeysThatJoinAlikeHaveBudgetsOfTheirOwn() {
    long now = EPOCH_2026_MICROS;
    for (Algorithm a : Algorithm.values()) {
      String name = "join-" + a.name().toLowerCase();
      List<Limit> limits = new ArrayList<>();
      for (String n : List.of(name, name + ":b")) {
        limits.add(a == Algorithm.TOKEN_BUCKET || a == Algorithm.LEAKY_BUCKET || a == Algorithm.LEAKY_BUCKET_SHAPER
            ? Limit.builder(n, a).capacity(20).refill(1, Duration.ofHours(1)).build()
            : Limit.builder(n, a).limit(20).window(Duration.ofHours(1)).build());
      }
      assertThat(acquire(node(0), limits.get(0), "b:c", 15, now).remaining()).as(a.toString()).isEqualTo(5);
      assertThat(acquire(node(1), limits.get(1), "c", 12, now).remaining()).as(a.toString()).isEqualTo(8);
      assertThat(acquire(node(2), limits.get(0), "b:c", 5, now).remaining()).as(a.toString()).isZero();
      assertThat(acquire(node(3), limits.get(1), "c", 8, now).remaining()).as(a.toString()).isZero();
      assertThat(exists(StoreKeys.storeName(limits.get(0)), "b:c")).isTrue();
      assertThat(exists(StoreKeys.storeName(limits.get(1)), "c")).isTrue();
      assertThat(exists(StoreKeys.storeName(limits.get(1)), "b:c")).isFalse();
    }
  }

  static void giveBack(ExactStore store, Limit limit, String key, long cost, long nowMicros, long window) {
    try {
      store.giveBack(limit, key, cost, nowMicros, window).toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("give back " + limit + " key " + key + " cost " + cost + " at " + nowMicros, e);
    }
  }

  /**
   * Give-back (a request another limit denied): a bucket gets the tokens back, never above full; a
   * window its count, in the decision's window only, never below 0; and the answers after it are the
   * in-process limiter's, which refunds the same way.
   */
  @Test
  void givenBackPermitsCanBeTakenAgainAndNoMore() {
    long t = EPOCH_2026_MICROS + 3_600_000_000L;
    Limit bucket = Limit.tokenBucket("give-bucket").capacity(4).refill(1, Duration.ofHours(1)).build();
    assertThat(acquire(bucket, "k", 3, t).remaining()).isEqualTo(1);
    giveBack(node(1), bucket, "k", 2, t + 10, 0);
    assertThat(acquire(bucket, "k", 3, t + 20).allowed()).as("3 of 4: the 2 given back").isTrue();
    giveBack(node(2), bucket, "k", 3, t + 30, 0);
    giveBack(node(2), bucket, "k", 3, t + 40, 0); // more than was taken: the bucket stays at full
    assertThat(acquire(bucket, "k", 4, t + 50).remaining()).isZero();
    assertThat(acquire(bucket, "k", 1, t + 60).allowed()).isFalse();
    giveBack(node(0), bucket, "never-seen", 1, t, 0); // a key with nothing to give back stays absent
    assertThat(exists(StoreKeys.storeName(bucket), "never-seen")).isFalse();

    for (Limit window : List.of(
        Limit.fixedWindow("give-fixed").limit(3).window(Duration.ofHours(1)).build(),
        Limit.slidingWindowCounter("give-sliding").limit(3).window(Duration.ofHours(1)).build())) {
      long w = t / 3_600_000_000L;
      assertThat(acquire(window, "k", 3, t).allowed()).isTrue();
      assertThat(acquire(window, "k", 1, t + 1).allowed()).isFalse();
      giveBack(node(3), window, "k", 1, t + 2, w);
      assertThat(acquire(window, "k", 1, t + 3).allowed()).as(window.name() + ": the permit given back").isTrue();
      assertThat(acquire(window, "k", 1, t + 4).allowed()).isFalse();
      giveBack(node(3), window, "k", 3, t + 5, w - 1); // the window before: no count there, nothing changes
      assertThat(acquire(window, "k", 1, t + 6).allowed()).isFalse();
      giveBack(node(3), window, "k", 3, t + 7, w);
      giveBack(node(3), window, "k", 3, t + 7, w); // more than the count: down to 0, not below
      assertThat(acquire(window, "k", 3, t + 8).allowed()).isTrue();
      assertThat(acquire(window, "k", 1, t + 9).allowed()).isFalse();
    }
    // a node whose clock is ahead opened the next window: another node's admission counts there, and
    // the answer says so, so that its give-back goes to that window
    Limit edge = Limit.fixedWindow("give-edge").limit(5).window(Duration.ofHours(1)).build();
    long w = t / 3_600_000_000L;
    assertThat(acquire(node(0), edge, "k", 1, (w + 1) * 3_600_000_000L).window()).isEqualTo(w + 1);
    assertThat(acquire(node(1), edge, "k", 1, (w + 1) * 3_600_000_000L - 5).window()).isEqualTo(w + 1);
    assertThat(acquire(node(1), bucket, "k2", 1, t).window()).as("a bucket has no window").isEqualTo(-1);
    Limit log = Limit.slidingWindowLog("give-log").limit(2).window(Duration.ofHours(1)).build();
    assertThatThrownBy(() -> node(0).giveBack(log, "k", 1, t, 0)).hasMessageStartingWith("algorithm:");
  }

  @Test
  void badRequestsAreRejectedWithTheField() {
    Limit bucket = Limit.tokenBucket("v").capacity(5).refill(1, Duration.ofSeconds(1)).build();
    assertThatThrownBy(() -> node(0).acquire(bucket, "k", 0, EPOCH_2026_MICROS)).hasMessageStartingWith("cost:");
    assertThatThrownBy(() -> node(0).acquire(bucket, "k", 6, EPOCH_2026_MICROS)).hasMessageStartingWith("cost:");
    assertThatThrownBy(() -> node(0).acquire(bucket, "", 1, EPOCH_2026_MICROS)).hasMessageStartingWith("key:");
    assertThatThrownBy(() -> node(0).acquire(bucket, null, 1, EPOCH_2026_MICROS)).hasMessageStartingWith("key:");
    assertThatThrownBy(() -> node(0).acquire(null, "k", 1, EPOCH_2026_MICROS)).hasMessageStartingWith("limit:");
    assertThatThrownBy(() -> node(0).acquire(bucket, "k", 1, -1)).hasMessageStartingWith("nowMicros:");
    assertThatThrownBy(() -> node(0).acquire(bucket, "k", 1, Long.MAX_VALUE)).hasMessageStartingWith("nowMicros:");
    Limit nanoPeriod = Limit.tokenBucket("v").capacity(5).refill(1, Duration.ofNanos(1_500)).build();
    assertThatThrownBy(() -> node(0).acquire(nanoPeriod, "k", 1, EPOCH_2026_MICROS)).hasMessageStartingWith("refill.period:");
    Limit nanoWindow = Limit.fixedWindow("v").limit(5).window(Duration.ofNanos(10_000_000_001L)).build();
    assertThatThrownBy(() -> node(0).acquire(nanoWindow, "k", 1, EPOCH_2026_MICROS)).hasMessageStartingWith("window:");
    // fine in-process (1 ns per permit), too large for the store's 53-bit arithmetic
    Limit huge = Limit.tokenBucket("v").capacity(100_000_000_000_000_000L).refill(1_000_000_000, Duration.ofSeconds(1)).build();
    assertThatThrownBy(() -> node(0).acquire(huge, "k", 1, EPOCH_2026_MICROS)).hasMessageStartingWith("capacity:");
  }

  /** The largest log: 100,000 permits in one call (members added in chunks), unique members. */
  @Test
  void theLargestLogTakesItsWholeLimitInOneCall() {
    Limit log = Limit.slidingWindowLog("biglog").limit(Limit.MAX_LOG_LIMIT).window(Duration.ofMinutes(1)).build();
    long now = EPOCH_2026_MICROS + 17;
    ExactResult r = acquire(log, "k", 60_000, now);
    assertThat(r.allowed()).isTrue();
    assertThat(r.remaining()).isEqualTo(40_000);
    // the same microsecond again: members must not collide with the first call's
    r = acquire(log, "k", 40_000, now);
    assertThat(r.remaining()).isZero();
    assertThat(logSize("biglog#log", "k")).isEqualTo(100_000);
    r = acquire(log, "k", 1, now + 59_999_999);
    assertThat(r.allowed()).isFalse();
    assertThat(r.retryAfterMicros()).isEqualTo(1);
    assertThat(acquire(log, "k", 100_000, now + 60_000_000).allowed()).isTrue();
    // the whole first minute left the window: the log holds the last call's permits, no more
    assertThat(logSize("biglog#log", "k")).isEqualTo(100_000);
  }

  /** The log keeps one time per permit in the window, never more than the limit, whatever is asked. */
  @Test
  void theLogNeverHoldsMoreThanItsLimit() {
    Limit log = Limit.slidingWindowLog("bounded-log").limit(50).window(Duration.ofMillis(200)).build();
    SplittableRandom random = new SplittableRandom(3);
    long now = EPOCH_2026_MICROS;
    long admitted = 0;
    for (int i = 0; i < 300; i++) {
      now += random.nextLong(0, 3_000);
      admitted += acquire(node(i % NODES), log, "k", random.nextLong(1, 8), now).allowed() ? 1 : 0;
      assertThat(logSize("bounded-log#log", "k")).as("step " + i).isBetween(1L, 50L);
    }
    assertThat(admitted).as("both answers occur").isBetween(20L, 280L);
  }

  /** A caller whose clock is behind the last writer's counts at the newest time seen. */
  @Test
  void aCallerWhoseClockIsBehindCountsAtTheNewestTimeSeen() {
    Limit bucket = Limit.tokenBucket("skew-tb").capacity(10).refill(1, Duration.ofSeconds(1)).build();
    long now = EPOCH_2026_MICROS;
    assertThat(acquire(bucket, "k", 10, now).remaining()).isZero();
    assertThat(acquire(bucket, "k", 2, now + 2_000_000).remaining()).isZero();
    // 1.5 s behind: the bucket is not refilled backwards nor drained again
    ExactResult behind = acquire(bucket, "k", 1, now + 500_000);
    assertThat(behind.allowed()).isFalse();
    assertThat(behind.retryAfterMicros()).isEqualTo(1_000_000);

    Limit log = Limit.slidingWindowLog("skew-log").limit(3).window(Duration.ofSeconds(1)).build();
    assertThat(acquire(log, "k", 1, now + 10).allowed()).isTrue();
    assertThat(acquire(log, "k", 1, now).allowed()).isTrue(); // stamped now + 10, keeps the log sorted
    // both permits leave the window together, one window after now + 10: had the second been
    // stamped now, one of them would have left at now + 1 s and two permits would fit here
    ExactResult both = acquire(log, "k", 2, now + 1_000_000);
    assertThat(both.allowed()).isFalse();
    assertThat(both.remaining()).isEqualTo(1);
    assertThat(both.retryAfterMicros()).isEqualTo(10);
    assertThat(acquire(log, "k", 3, now + 1_000_010).allowed()).isTrue();

    Limit fixed = Limit.fixedWindow("skew-fw").limit(3).window(Duration.ofSeconds(1)).build();
    long edge = EPOCH_2026_MICROS + 5_000_000;
    assertThat(acquire(fixed, "k", 3, edge).remaining()).isZero(); // a node already in the next window
    ExactResult late = acquire(fixed, "k", 1, edge - 1); // one 1 us behind counts in that window too
    assertThat(late.allowed()).isFalse();
    assertThat(late.retryAfterMicros()).isEqualTo(1_000_001);
  }

  /** The exact scripts keep the flush script's state: batched and exact callers see one budget. */
  @Test
  void exactAcquiresAndFlushesShareOneBudget() {
    Limit bucket = Limit.tokenBucket("mixed-tb").capacity(100).refill(10, Duration.ofSeconds(1)).build();
    Limit window = Limit.slidingWindowCounter("mixed-sw").limit(100).window(Duration.ofMinutes(1)).build();
    long now = EPOCH_2026_MICROS + 30_000_000; // half-way through a minute window
    long index = Math.floorDiv(now, 60_000_000L);
    FlushResult f;
    try {
      // both stores keep the exact state where their flushes keep theirs
      f = ((CounterStore) node(1)).flush(new Batch("n1", 0, 1, now, List.of(new Delta(Counter.of(bucket), "k", 0, 95),
          new Delta(Counter.of(window), "k", index - 1, 40), new Delta(Counter.of(window), "k", index, 70))))
          .toCompletableFuture().get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    assertThat(f.applied()).isTrue();
    assertThat(acquire(bucket, "k", 5, now).remaining()).isZero();
    assertThat(acquire(bucket, "k", 1, now).allowed()).isFalse();
    // 70 + 40 * 1/2 = 90 of 100 used
    assertThat(acquire(window, "k", 10, now).remaining()).isZero();
    assertThat(acquire(window, "k", 1, now).allowed()).isFalse();
  }

  @Test
  void theSlidingCounterUnitFitsFiftyThreeBits() {
    assertThat(ExactArgs.slidingUnitMicros(40, 60_000_000L)).isEqualTo(1);
    assertThat(ExactArgs.slidingUnitMicros(1_000_000, 3_600_000_000L)).isEqualTo(1_000);
    assertThat(ExactArgs.slidingUnitMicros(Integer.MAX_VALUE, 3_600_000_000L)).isEqualTo(1_000_000);
    Limit big = Limit.slidingWindowCounter("big-swc").limit(Integer.MAX_VALUE).window(Duration.ofHours(1)).build();
    long now = EPOCH_2026_MICROS;
    assertThat(acquire(big, "k", Integer.MAX_VALUE - 1, now).remaining()).isEqualTo(1);
    assertThat(acquire(big, "k", 2, now + 1).allowed()).isFalse();
    // one hour and a half later, half of the previous window still weighs
    ExactResult r = acquire(big, "k", 1, now + 5_400_000_000L);
    assertThat(r.remaining()).isEqualTo(Integer.MAX_VALUE - 1 - (Integer.MAX_VALUE - 1) / 2);
  }

  // ---- several nodes at once ----

  private static final int CAPACITY = 200;
  private static final int REQUESTS_PER_NODE = 150; // 3x the capacity in all
  private static final int IN_FLIGHT = 8; // requests each node keeps outstanding, to interleave more
  private static final long HAMMER_MICROS = 1_767_225_600_123_456L;

  private static Limit hammerLimit(Algorithm a) {
    String name = "hammer-" + a.name().toLowerCase();
    boolean bucket = a == Algorithm.TOKEN_BUCKET || a == Algorithm.LEAKY_BUCKET || a == Algorithm.LEAKY_BUCKET_SHAPER;
    return bucket
        ? Limit.builder(name, a).capacity(CAPACITY).refill(1, Duration.ofMinutes(1)).build()
        : Limit.builder(name, a).limit(CAPACITY).window(Duration.ofMinutes(1)).build();
  }

  /**
   * Every node (a thread each, with its own store) asks at once, at one frozen instant; returns the
   * answers as {allowed, cost, remaining, delay}.
   */
  private List<long[]> hammer(Limit limit, String key, long seed, int maxCost) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(NODES);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<List<long[]>>> nodes = new ArrayList<>();
      for (int n = 0; n < NODES; n++) {
        ExactStore store = node(n);
        SplittableRandom random = new SplittableRandom(seed + n);
        nodes.add(pool.submit(() -> {
          go.await();
          List<long[]> answers = new ArrayList<>();
          List<CompletableFuture<long[]>> window = new ArrayList<>();
          for (int i = 0; i < REQUESTS_PER_NODE; i++) {
            long cost = random.nextLong(1, maxCost + 1);
            window.add(store.acquire(limit, key, cost, HAMMER_MICROS).toCompletableFuture()
                .thenApply(r -> new long[] {r.allowed() ? 1 : 0, cost, r.remaining(), r.delayMicros()}));
            if (window.size() == IN_FLIGHT) {
              for (CompletableFuture<long[]> f : window) {
                answers.add(f.get(10, TimeUnit.SECONDS));
              }
              window.clear();
            }
          }
          for (CompletableFuture<long[]> f : window) {
            answers.add(f.get(10, TimeUnit.SECONDS));
          }
          return answers;
        }));
      }
      go.countDown();
      List<long[]> all = new ArrayList<>();
      for (Future<List<long[]>> f : nodes) {
        all.addAll(f.get(60, TimeUnit.SECONDS));
      }
      return all;
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Never more than the capacity, and linearizable: every admission saw the state the one before it
   * left, so the permits left count down through every value once.
   */
  @Test
  void singlePermitsAreAdmittedExactlyUpToTheCapacity() throws Exception {
    for (Algorithm a : Algorithm.values()) {
      Limit limit = hammerLimit(a);
      List<long[]> answers = hammer(limit, "one-by-one", 7, 1);
      List<long[]> admitted = answers.stream().filter(r -> r[0] == 1).collect(Collectors.toList());
      assertThat(admitted).as(a.toString()).hasSize(CAPACITY);
      TreeSet<Long> remaining = admitted.stream().map(r -> r[2]).collect(Collectors.toCollection(TreeSet::new));
      assertThat(remaining).as(a.toString()).containsExactlyElementsOf(
          LongStream.range(0, CAPACITY).boxed().collect(Collectors.toList()));
      assertThat(answers).as(a.toString()).filteredOn(r -> r[0] == 0).allSatisfy(r -> assertThat(r[2]).isZero());
      if (a == Algorithm.LEAKY_BUCKET_SHAPER) {
        // one minute per permit: the k-th admitted waits k minutes
        TreeSet<Long> delays = admitted.stream().map(r -> r[3]).collect(Collectors.toCollection(TreeSet::new));
        assertThat(delays).as(a.toString()).containsExactlyElementsOf(
            LongStream.range(0, CAPACITY).map(k -> k * 60_000_000L).boxed().collect(Collectors.toList()));
      }
    }
  }

  @Test
  void mixedCostsNeverOverAdmit() throws Exception {
    int maxCost = 5;
    for (Algorithm a : Algorithm.values()) {
      Limit limit = hammerLimit(a);
      List<long[]> answers = hammer(limit, "mixed", 11, maxCost);
      long admitted = answers.stream().filter(r -> r[0] == 1).mapToLong(r -> r[1]).sum();
      assertThat(admitted).as(a.toString()).isLessThanOrEqualTo(CAPACITY);
      // demand is 3x the capacity: the budget is used up but for less than the largest cost
      assertThat(admitted).as(a.toString()).isGreaterThan(CAPACITY - maxCost);
    }
  }

  /**
   * A limit whose algorithm changes under the same name (a deploy that edits it) starts on a key of
   * its own: with one key for all, a log read a window's hash (the script failed and the failure
   * policy decided: 30 of 10 admitted on Redis) and a bucket read a window's counts.
   */
  @Test
  void aLimitWhoseAlgorithmChangesUnderItsNameStartsOnAKeyOfItsOwn() {
    long now = EPOCH_2026_MICROS + 5_000_000;
    List<Limit> versions = List.of(
        Limit.fixedWindow("switch").limit(10).window(Duration.ofSeconds(10)).build(),
        Limit.slidingWindowLog("switch").limit(10).window(Duration.ofSeconds(10)).build(),
        Limit.slidingWindowCounter("switch").limit(10).window(Duration.ofSeconds(10)).build(),
        Limit.tokenBucket("switch").capacity(10).refill(1, Duration.ofSeconds(10)).build());
    int admittedBefore = 0;
    for (Limit limit : versions) {
      int admitted = 0;
      for (int i = 0; i < 15; i++) {
        admitted += acquire(limit, "k", 1, now + i).allowed() ? 1 : 0;
      }
      // (the sliding counter shares the fixed window's counts, which it reads as its own: both count
      // permits per window, so the window's 10 are spent)
      int expected = limit.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER ? 0 : 10;
      assertThat(admitted).as("%s after the earlier versions", limit.algorithm()).isEqualTo(expected);
      admittedBefore += admitted;
    }
    assertThat(admittedBefore).isEqualTo(30);
  }
}
