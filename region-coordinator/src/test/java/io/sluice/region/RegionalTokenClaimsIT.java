package io.sluice.region;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.RedisFixture;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.Counter;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.function.IntToDoubleFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Batched nodes of a region's part of a token-bucket global quota (token claims, {@code regional_claim.lua})
 * against a real redis-server, on a test clock: two nodes claiming tokens of the region's bucket while the
 * coordinator's share of the rate moves up and down never admit more over any interval than the bucket
 * allows (its part of the burst plus the refill at the shares in force), beside exact-mode nodes deciding
 * the same requests on another key; the region's demand (admitted and denied per window) reaches the
 * store as the coordinator reads it; a region whose Redis lost the key gets no fresh burst.
 */
class RegionalTokenClaimsIT {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();

  private static final long WINDOW_NANOS = Duration.ofSeconds(10).toNanos();
  private static final long MILLI = 1_000_000L;

  /** A refill of 30,000 per 10 s and a burst of 3,000: three regions hold 1,000 each and refill 10,000 per window without a coordinator. */
  private static Limit quota(String name) {
    return GlobalQuota.builder(name).quota(30_000).window(Duration.ofSeconds(10)).tokenBucket(3_000).build().limit();
  }

  private static SyncedLimiter node(Limit quota, RedisCounterStore store, ManualTicker ticker, String id, long batch) {
    return SyncedLimiter.builder(quota, store).nodeId(id).ticker(ticker).autoSync(false).activeNodes(() -> 2)
        .regionalQuota(3).batchSize(batch).onStoreFailure(StoreFailurePolicy.FAIL_CLOSED).build();
  }

  private static ManualTicker atAWindowStart() {
    return new ManualTicker(Math.floorDiv(System.currentTimeMillis() * MILLI, WINDOW_NANOS) * WINDOW_NANOS);
  }

  /**
   * 32 s of Poisson requests at 2,500 a second on one key, spread at random over two batched nodes (batch
   * 100) and, the same requests at the same moments, over two exact-mode nodes on another key. The
   * region's share: the static 10,000 per window, then 20,000 from 5 s, 5,000 from 12 s, 30,000 (all of
   * the quota's rate) from 20 s and 2,000 from 26 s. Over every interval of the run (on a 10 ms grid),
   * the batched nodes admit at most the region's part of the burst plus the refill at those shares, as
   * the exact ones do; they admit 99% or more of what the exact nodes admit, with a store call for at
   * most one decision in twenty; every window's admitted and denied permits reach the store.
   */
  @Test
  void batchedNodesNeverPassTheRegionsBucketWhileItsShareMoves() {
    Run run = run("q-claims", t -> 2.5);
    assertThat(run.exactOver).as("the bound itself, on the exact nodes").isLessThanOrEqualTo(1);
    assertThat(run.over).as("permits beyond the region's burst plus its refill, worst interval").isLessThanOrEqualTo(1);
    assertThat(run.batched).as("admitted, against the exact nodes").isGreaterThanOrEqualTo(run.exact * 99 / 100);
    assertThat(run.calls).as("store calls").isLessThan(run.decisions / 20);
  }

  /**
   * The same shares, and bursts: each second, 900 ms of requests at 400 a second (below the region's
   * rate: its bucket stays nearly full while the nodes hold tokens claimed ahead of their requests), then
   * 100 ms at 30,000 a second, which take the whole bucket. Tokens a node held from before the burst and
   * used in it, had they outlived the store's refill past them, would come on top of a full bucket: the
   * bound holds over every interval (with tokens expiring at a quarter of the static share's rate instead of
   * at the quota's, 62 permits over), and the batched nodes admit 97% or more of what the exact nodes admit.
   */
  @Test
  void tokensHeldThroughAQuietSpellDoNotComeOnTopOfARefilledBucket() {
    Run run = run("q-claims-bursts", t -> t % 1_000 < 900 ? 0.4 : 30);
    assertThat(run.exactOver).as("the bound itself, on the exact nodes").isLessThanOrEqualTo(1);
    assertThat(run.over).as("permits beyond the region's burst plus its refill, worst interval").isLessThanOrEqualTo(1);
    assertThat(run.batched).as("admitted, against the exact nodes").isGreaterThanOrEqualTo(run.exact * 97 / 100);
    assertThat(run.calls).as("store calls").isLessThan(run.decisions / 20);
  }

  /** What a run measured: decisions, permits admitted by the batched and the exact nodes, their worst intervals, store calls. */
  private record Run(long decisions, long batched, long exact, long over, long exactOver, long calls) {
  }

  /**
   * 32 s of Poisson requests at {@code ratePerMilli} (of the millisecond since the start) on one key, spread
   * at random over two batched nodes (batch 100) and, the same requests at the same moments, over two
   * exact-mode nodes on another key, with the region's share moving (see the first test); checks every
   * window's demand as the coordinator reads it, and prints the figures.
   */
  private Run run(String name, IntToDoubleFunction ratePerMilli) {
    Limit quota = quota(name);
    Counter counter = Counter.regional(quota, 3);
    ManualTicker ticker = atAWindowStart();
    long start = ticker.read();
    long[][] schedule = {{5_000, 20_000}, {12_000, 5_000}, {20_000, 30_000}, {26_000, 2_000}};
    int millis = 32_000;
    long[] batched = new long[millis];
    long[] exact = new long[millis];
    int windows = (int) (millis * MILLI / WINDOW_NANOS) + 1;
    long[] admittedPerWindow = new long[windows];
    long[] deniedPerWindow = new long[windows];
    long decisions = 0;
    Random random = new Random(20261207L);
    try (RedisCounterStore store = redis.newStore();
         RegionShareStore shares = RegionShareStore.connect(RedisStoreConfig.builder(redis.uri()).build());
         SyncedLimiter b0 = node(quota, store, ticker, "b0", 100);
         SyncedLimiter b1 = node(quota, store, ticker, "b1", 100);
         SyncedLimiter e0 = node(quota, store, ticker, "e0", 1);
         SyncedLimiter e1 = node(quota, store, ticker, "e1", 1)) {
      SyncedLimiter[] claiming = {b0, b1};
      SyncedLimiter[] exacting = {e0, e1};
      int next = 0;
      long w0 = Math.floorDiv(start, WINDOW_NANOS);
      int checked = 0;
      for (int t = 0; t < millis; t++) {
        if (next < schedule.length && t == schedule[next][0]) {
          long w = Math.floorDiv(ticker.read(), WINDOW_NANOS);
          long share = schedule[next][1];
          shares.write(1, counter, w, ticker.read() / 1_000, Duration.ofMinutes(20),
              List.of(new RegionShareStore.ShareWrite("k", share, share, w + 100),
                  new RegionShareStore.ShareWrite("e", share, share, w + 100)));
          next++;
        }
        int window = (int) ((ticker.read() - start) / WINDOW_NANOS);
        if (window != checked) {
          // the window gone by's demand, as the coordinator reads it (the store keeps a window's counts
          // until the one after the next begins)
          b0.syncNow();
          b1.syncNow();
          assertDemand(shares, quota, w0 + checked, admittedPerWindow[checked], deniedPerWindow[checked]);
          checked = window;
        }
        for (int r = poisson(random, ratePerMilli.applyAsDouble(t)); r > 0; r--) {
          int n = random.nextInt(2);
          decisions++;
          if (claiming[n].tryAcquire("k")) {
            batched[t]++;
            admittedPerWindow[window]++;
          } else {
            deniedPerWindow[window]++;
          }
          if (exacting[n].tryAcquire("e")) {
            exact[t]++;
          }
        }
        ticker.advanceNanos(MILLI);
        if (t % 100 == 99) {
          b0.syncNow();
          b1.syncNow();
        }
      }
      b0.syncNow();
      b1.syncNow();
      assertDemand(shares, quota, w0 + checked, admittedPerWindow[checked], deniedPerWindow[checked]);
      Run run = new Run(decisions, sum(batched), sum(exact), worstOverBound(batched, schedule, counter),
          worstOverBound(exact, schedule, counter), b0.storeCalls() + b1.storeCalls());
      System.out.printf(Locale.ROOT, "regional token claims (%s): %d decisions, batched admitted %d, exact admitted"
              + " %d (%.2f%%), worst interval vs the bucket's bound %+d (exact %+d), store calls %.1f per 1,000"
              + " decisions (flushes and claims, both nodes), decisions that waited %.1f per 1,000%n",
          name, decisions, run.batched, run.exact, 100.0 * run.batched / run.exact, run.over, run.exactOver,
          1_000.0 * run.calls / decisions, 1_000.0 * (b0.waitedDecisions() + b1.waitedDecisions()) / decisions);
      return run;
    }
  }

  private static void assertDemand(RegionShareStore shares, Limit quota, long w, long admitted, long denied) {
    RegionShareStore.KeyState k = shares.read(quota, w, List.of("k")).get(0);
    assertThat(k.admitted()).as("admitted in window %d", w).isEqualTo(admitted);
    assertThat(k.denied()).as("denied in window %d", w).isEqualTo(denied);
  }

  /**
   * A region's Redis that loses its data while a lease covers the key: batched nodes give the key back
   * the record they read, also after the key was idle long enough for its holding to be swept, so the
   * bucket starts empty and refills at the leased share (not a fresh burst of 1,000, nor the static
   * 1,000 a second).
   */
  @Test
  void aBatchedRegionWhoseRedisLostItsDataGetsNoFreshBurst() {
    Limit quota = quota("q-claims-lost");
    Counter counter = Counter.regional(quota, 3);
    ManualTicker ticker = atAWindowStart();
    long w = Math.floorDiv(ticker.read(), WINDOW_NANOS);
    try (RedisCounterStore store = redis.newStore();
         RegionShareStore shares = RegionShareStore.connect(RedisStoreConfig.builder(redis.uri()).build());
         SyncedLimiter node = node(quota, store, ticker, "n1", 100)) {
      shares.write(1, counter, w, ticker.read() / 1_000, Duration.ofMinutes(20),
          List.of(new RegionShareStore.ShareWrite("k", 5_000, 5_000, w + 2)));
      assertThat(takeAll(node, "k")).isEqualTo(1_000); // the region's part of the burst
      ticker.advanceNanos(1_000 * MILLI);
      assertThat(takeAll(node, "k")).isBetween(495L, 500L); // 5,000 per 10 s; the node has read the record
      for (int i = 0; i < 5; i++) {
        // the key idle for half a second, the node syncing as its flusher does: its holding of the key is
        // swept, not the record it read (kept with the holding, it went with it, and the key below came
        // back as a full bucket of 1,000)
        ticker.advanceNanos(100 * MILLI);
        node.syncNow();
      }

      redis.cli().flushall();
      ticker.advanceNanos(1_000 * MILLI);
      // from empty at the first claim after the loss, then 500 a second: a fresh key would hold 1,000
      assertThat(takeAll(node, "k")).isLessThanOrEqualTo(1L);
      ticker.advanceNanos(1_000 * MILLI);
      assertThat(takeAll(node, "k")).isBetween(495L, 500L);
    }
  }

  /**
   * A cost above the region's part of the burst can never be admitted there: refused with a message
   * naming the field, in both modes (before, it failed the store client's argument checks, which counted
   * against the breaker as a store failure), and a cost of the whole part is admitted on a full bucket.
   */
  @Test
  void aCostAboveTheRegionsPartOfTheBurstIsRefused() {
    Limit quota = quota("q-claims-cost");
    ManualTicker ticker = atAWindowStart();
    try (RedisCounterStore store = redis.newStore();
         SyncedLimiter batched = node(quota, store, ticker, "b", 100);
         SyncedLimiter exact = node(quota, store, ticker, "e", 1)) {
      for (SyncedLimiter node : List.of(batched, exact)) {
        assertThatThrownBy(() -> node.tryAcquire("big", 1_001))
            .hasMessageStartingWith("cost: must be between 1 and the region's part 1000 of the burst");
        assertThat(node.storeFailures()).isZero();
      }
      assertThat(batched.tryAcquire("whole-b", 1_000)).isTrue();
      assertThat(exact.tryAcquire("whole-e", 1_000)).isTrue();
    }
  }

  /**
   * A permit released after another limit of the request denied it stays spent in the bucket, but is not
   * the region's admitted demand (exact mode's give-back lowers the window's count the same way).
   */
  @Test
  void aReleasedPermitIsNotTheRegionsAdmittedDemand() {
    Limit quota = quota("q-claims-release");
    ManualTicker ticker = atAWindowStart();
    long w = Math.floorDiv(ticker.read(), WINDOW_NANOS);
    try (RedisCounterStore store = redis.newStore();
         RegionShareStore shares = RegionShareStore.connect(RedisStoreConfig.builder(redis.uri()).build());
         SyncedLimiter node = node(quota, store, ticker, "n1", 100)) {
      for (int i = 0; i < 10; i++) {
        io.sluice.node.Decision d = node.acquire("r", 1);
        assertThat(d.allowed()).isTrue();
        if (i % 2 == 0) {
          node.release("r", 1, d);
        }
      }
      node.syncNow();
      assertThat(shares.read(quota, w, List.of("r")).get(0).admitted()).isEqualTo(5);
    }
  }

  /** Takes one permit at a time until the node denies; returns how many it admitted. */
  private static long takeAll(SyncedLimiter node, String key) {
    long admitted = 0;
    while (node.tryAcquire(key)) {
      admitted++;
    }
    return admitted;
  }

  private static int poisson(Random random, double mean) {
    double l = Math.exp(-mean);
    int k = 0;
    double p = random.nextDouble();
    while (p > l) {
      k++;
      p *= random.nextDouble();
    }
    return k;
  }

  private static long sum(long[] a) {
    long s = 0;
    for (long x : a) {
      s += x;
    }
    return s;
  }

  /**
   * The most permits admitted over any interval [a, b) of the run, on a 10 ms grid, beyond the region's part of
   * the burst plus its refill there at the shares in force (the static share before the first write), rounded
   * up to whole permits.
   */
  private static long worstOverBound(long[] admitted, long[][] schedule, Counter counter) {
    int step = 10;
    int points = admitted.length / step + 1;
    long[] count = new long[points];
    double[] refill = new double[points];
    long windowMillis = WINDOW_NANOS / MILLI;
    for (int i = 1; i < points; i++) {
      long c = 0;
      double r = 0;
      for (int t = (i - 1) * step; t < Math.min(admitted.length, i * step); t++) {
        c += admitted[t];
        r += shareAt(t, schedule, counter) / (double) windowMillis;
      }
      count[i] = count[i - 1] + c;
      refill[i] = refill[i - 1] + r;
    }
    long worst = Long.MIN_VALUE;
    for (int a = 0; a < points; a++) {
      for (int b = a + 1; b < points; b++) {
        double bound = counter.staticBurst() + (refill[b] - refill[a]);
        worst = Math.max(worst, (long) Math.ceil(count[b] - count[a] - bound - 1e-9));
      }
    }
    return worst;
  }

  private static long shareAt(int t, long[][] schedule, Counter counter) {
    long share = counter.staticShare();
    for (long[] s : schedule) {
      if (t >= s[0]) {
        share = s[1];
      }
    }
    return share;
  }
}
