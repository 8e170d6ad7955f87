package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The synchronizer's accounting and bounds, driven step by step with a manual clock. */
class SyncedLimiterTest {
  private final ManualTicker ticker = new ManualTicker();
  private final Limit perMinute = Limit.fixedWindow("api").limit(1_000).window(Duration.ofMinutes(1)).build();

  private SyncedLimiter node(CounterStore store, String id, int nodes) {
    return SyncedLimiter.builder(perMinute, store).nodeId(id).ticker(ticker).autoSync(false)
        .activeNodes(() -> nodes).batchSize(50).syncInterval(Duration.ofMillis(100)).build();
  }

  /** The breaker's settings are Sluice's own, checked where they are set, each error naming its field. */
  @Test
  void storeBreakerSettingsNameTheFieldTheyRefuse() {
    assertThatThrownBy(() -> StoreBreakerConfig.custom().slidingWindowSize(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("slidingWindowSize:");
    assertThatThrownBy(() -> StoreBreakerConfig.custom().failureRateThreshold(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("failureRateThreshold:");
    assertThatThrownBy(() -> StoreBreakerConfig.custom().slowCallRateThreshold(101))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("slowCallRateThreshold:");
    assertThatThrownBy(() -> StoreBreakerConfig.custom().waitInOpenState(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("waitInOpenState:");
    assertThatThrownBy(() -> StoreBreakerConfig.custom().slidingWindowSize(5).minimumNumberOfCalls(6).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("minimumNumberOfCalls:");
    assertThatThrownBy(() -> SyncConfig.custom().storeBreaker(null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("storeBreaker:");
    StoreBreakerConfig c = StoreBreakerConfig.custom().slidingWindowSize(20).minimumNumberOfCalls(10).build();
    assertThat(StoreBreakerConfig.from(c).build().slidingWindowSize()).isEqualTo(20);
    assertThat(c.toBuilder().failureRateThreshold(25).build().failureRateThreshold()).isEqualTo(25);
  }

  /** The breaker as the public API shows it: forced open and reset by hand, its changes told to a listener. */
  @Test
  void theStoreBreakerIsForcedOpenAndResetThroughItsView() {
    try (SyncedLimiter node = SyncedLimiter.builder(perMinute, new MemoryStore()).nodeId("b").ticker(ticker)
        .autoSync(false).activeNodes(() -> 1).onStoreFailure(StoreFailurePolicy.FAIL_CLOSED).build()) {
      List<String> changes = new ArrayList<>();
      node.storeBreaker().onStateChange((from, to, failureRate, slowCallRate) -> changes.add(from + ">" + to));
      assertThat(node.storeBreaker().state()).isEqualTo(StoreBreaker.State.CLOSED);
      assertThat(node.tryAcquire("k")).isTrue();
      node.storeBreaker().forceOpen();
      assertThat(node.storeBreaker().keepsStoreOut()).isTrue();
      assertThat(node.tryAcquire("other")).as("the failure policy decides: fail closed").isFalse();
      node.storeBreaker().reset();
      assertThat(node.storeBreaker().state()).isEqualTo(StoreBreaker.State.CLOSED);
      assertThat(node.tryAcquire("other")).isTrue();
      assertThat(changes).containsExactly("CLOSED>FORCED_OPEN", "FORCED_OPEN>CLOSED");
    }
    // opened by failures: the listener hears the rate that opened it
    FlakyMemoryStore dead = new FlakyMemoryStore(11);
    dead.faults(1.0, 0);
    try (SyncedLimiter node = failingNode(dead, StoreFailurePolicy.FAIL_CLOSED)) {
      List<float[]> opened = new ArrayList<>();
      node.storeBreaker().onStateChange((from, to, failureRate, slowCallRate) -> {
        if (to == StoreBreaker.State.OPEN) {
          opened.add(new float[] {failureRate, slowCallRate});
        }
      });
      breakBreaker(node);
      assertThat(opened).hasSize(1);
      assertThat(opened.get(0)[0]).as("failure rate, %").isEqualTo(100f);
      assertThat(node.storeBreaker().failedCalls()).isEqualTo(4);
    }
  }

  /**
   * Far from a large limit a node keeps admitting between syncs: at least its part of the error
   * budget (limit x maxError / nodes), not only a batch, so it never refuses for want of a sync.
   */
  @Test
  void farFromALargeLimitANodeAdmitsItsPartOfTheErrorBudgetBetweenSyncs() {
    Limit large = Limit.fixedWindow("large").limit(10_000_000).window(Duration.ofMinutes(1)).build();
    SyncedLimiter node = SyncedLimiter.builder(large, new FlakyMemoryStore(3)).nodeId("n").ticker(ticker)
        .autoSync(false).activeNodes(() -> 2).batchSize(100).build();
    node.tryAcquire("k");
    node.syncNow(); // a fresh view; no sync after it
    long admitted = 0;
    for (int i = 0; i < 30_000; i++) {
      admitted += node.tryAcquire("k") ? 1 : 0;
    }
    assertThat(admitted).isEqualTo(25_000); // 10,000,000 x 0.005 / 2 nodes
  }

  /**
   * The hot path allocates nothing: {@code tryAcquire} on a known key, between syncs, measured with
   * the JVM's per-thread allocation counter (a Decision per call would be 56 bytes).
   */
  @Test
  void tryAcquireAllocatesNothingForAKnownKey() {
    Limit large = Limit.fixedWindow("alloc").limit(1_000_000_000).window(Duration.ofMinutes(1)).build();
    SyncedLimiter node = SyncedLimiter.builder(large, new FlakyMemoryStore(5)).nodeId("a").ticker(ticker)
        .autoSync(false).activeNodes(() -> 1).build();
    node.tryAcquire("k");
    node.syncNow();
    assertThat(bytesPerTryAcquire(node, true)).as("bytes allocated per tryAcquire").isLessThan(1.0);
  }

  /**
   * Denials allocate nothing either: a key at its limit is decided under its view's monitor (no
   * credit pays), every call, on the approximate and the reservation mode.
   */
  @Test
  void tryAcquireAllocatesNothingForAKeyAtItsLimit() {
    Limit small = Limit.fixedWindow("alloc-limit").limit(10).window(Duration.ofMinutes(1)).build();
    for (boolean reservation : new boolean[] {false, true}) {
      SyncedLimiter.Builder b = SyncedLimiter.builder(small, new MemoryStore()).nodeId("a").ticker(ticker)
          .autoSync(false).activeNodes(() -> 1);
      SyncedLimiter node = (reservation ? b.reservation() : b).build();
      for (int i = 0; i < 10; i++) {
        assertThat(node.tryAcquire("k")).isTrue();
      }
      node.syncNow();
      assertThat(bytesPerTryAcquire(node, false)).as("bytes allocated per denied tryAcquire, reservation %s",
          reservation).isLessThan(1.0);
      node.close();
    }
  }

  /**
   * Bytes this thread allocates per {@code tryAcquire("k")}, over 200,000 calls after as many to warm
   * up (the first calls queue the key for its next flush), each answered as {@code admitted} says.
   */
  private static double bytesPerTryAcquire(SyncedLimiter node, boolean admitted) {
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    org.junit.jupiter.api.Assumptions.assumeTrue(mx instanceof com.sun.management.ThreadMXBean
        && ((com.sun.management.ThreadMXBean) mx).isThreadAllocatedMemorySupported(), "no per-thread allocation counter");
    com.sun.management.ThreadMXBean bean = (com.sun.management.ThreadMXBean) mx;
    long thread = Thread.currentThread().getId();
    int calls = 200_000;
    for (int i = 0; i < calls; i++) {
      node.tryAcquire("k");
    }
    long before = bean.getThreadAllocatedBytes(thread);
    int answered = 0;
    for (int i = 0; i < calls; i++) {
      answered += node.tryAcquire("k") == admitted ? 1 : 0;
    }
    long bytes = bean.getThreadAllocatedBytes(thread) - before;
    assertThat(answered).as("calls answered %s", admitted ? "admitted" : "denied").isEqualTo(calls);
    return (double) bytes / calls;
  }

  /**
   * A sliding window at its limit frees budget as the previous window fades: each of N nodes admits
   * its N-th of what was freed since its last sync, without asking for a sync per permit (the
   * regular sync is enough there), and all of them together not more than was freed.
   */
  @Test
  void atTheLimitASlidingWindowNodeAdmitsItsPartOfTheFreedBudgetWithoutSyncing() {
    Limit sliding = Limit.slidingWindowCounter("slide").limit(1_000).window(Duration.ofSeconds(1)).build();
    FlakyMemoryStore store = new FlakyMemoryStore(4);
    List<SyncedLimiter> nodes = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      nodes.add(SyncedLimiter.builder(sliding, store).nodeId("s" + i).ticker(ticker).autoSync(false)
          .activeNodes(() -> 2).batchSize(100).build());
    }
    long w = Math.floorDiv(ticker.read(), sliding.periodNanos()); // the ticker starts at a window start
    // a full window, counted by some other node
    store.flush(new Batch("other", 0, 1, TimeUnit.NANOSECONDS.toMicros(ticker.read()),
        List.of(new Delta(Counter.of(sliding), "k", w, 1_000))));
    ticker.advance(Duration.ofSeconds(1));
    for (SyncedLimiter node : nodes) {
      // the first decision, on no view: more than the cold allowance (2 permits here), so it is
      // refused and asks for the counts
      assertThat(node.tryAcquire("k", 3)).isFalse();
      node.syncNow();
      node.takeSyncRequest();
    }
    ticker.advance(Duration.ofMillis(100)); // a tenth of the previous window's 1,000 faded
    long[] admitted = new long[2];
    for (int n = 0; n < 2; n++) {
      for (int i = 0; i < 200; i++) {
        admitted[n] += nodes.get(n).tryAcquire("k") ? 1 : 0;
      }
      assertThat(nodes.get(n).takeSyncRequest()).as("node %d asked for a sync", n).isFalse();
    }
    assertThat(admitted).containsExactly(50, 50);
    nodes.forEach(SyncedLimiter::syncNow);
    assertThat(store.count("k", w + 1)).isEqualTo(100);
    nodes.forEach(SyncedLimiter::close);
  }

  /** Lost requests and lost answers, healed later: every admitted permit is counted exactly once. */
  @Test
  void failedAndIndeterminateFlushesNeitherLoseNorDoubleCount() {
    FlakyMemoryStore store = new FlakyMemoryStore(7);
    store.faults(0.3, 0.3);
    List<SyncedLimiter> nodes = new ArrayList<>();
    for (int n = 0; n < 3; n++) {
      nodes.add(node(store, "n" + n, 3));
    }
    SplittableRandom random = new SplittableRandom(1);
    for (int step = 0; step < 2_000; step++) {
      SyncedLimiter node = nodes.get(random.nextInt(3));
      node.tryAcquire("k" + random.nextInt(12));
      if (step % 20 == 0) {
        nodes.forEach(SyncedLimiter::syncNow);
      }
      ticker.advance(Duration.ofMillis(5)); // ten seconds in all: one window
    }
    store.faults(0, 0);
    for (SyncedLimiter node : nodes) {
      // the failures may have opened the breaker: it lets calls through again after its wait
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (!(node.syncNow() && node.syncNow()) && System.nanoTime() < deadline) {
        sleep(50);
      }
      assertThat(node.pending()).isZero();
    }
    long admitted = nodes.stream().mapToLong(SyncedLimiter::admitted).sum();
    assertThat(store.total()).isEqualTo(admitted);
    assertThat(nodes.stream().mapToLong(SyncedLimiter::storeFailures).sum()).isPositive();
  }

  /**
   * Four nodes syncing only every ten rounds (no urgent syncs: the stalest views this test can make)
   * stay within 1% of the limit; with the flusher's urgent syncs the error is far smaller (see the
   * Redis integration test).
   */
  @Test
  void nodesWithStaleViewsStayWithinOnePercentOfTheLimit() {
    FlakyMemoryStore store = new FlakyMemoryStore(3);
    int n = 4;
    List<SyncedLimiter> nodes = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      nodes.add(node(store, "n" + i, n));
    }
    long admitted = 0;
    // demand far above the limit, interleaved across nodes, syncing every 10 decisions per node
    for (int round = 0; round < 5_000; round++) {
      for (SyncedLimiter node : nodes) {
        if (node.tryAcquire("hot")) {
          admitted++;
        }
        if (round % 10 == 0) {
          node.syncNow();
        }
      }
    }
    nodes.forEach(SyncedLimiter::close);
    assertThat(admitted).isBetween(perMinute.capacity() - n, perMinute.capacity() + perMinute.capacity() / 100);
    assertThat(store.total()).isEqualTo(admitted);
  }

  @Test
  void aKeyOverItsLimitIsDeniedFromTheCacheUntilTheWindowEnds() {
    FlakyMemoryStore store = new FlakyMemoryStore(5);
    SyncedLimiter node = node(store, "n0", 1);
    while (node.tryAcquire("k")) {
      node.syncNow();
    }
    node.syncNow();
    int callsBefore = store.calls;
    Decision d = node.acquire("k");
    assertThat(d.allowed()).isFalse();
    assertThat(d.retryAfterNanos()).isPositive().isLessThanOrEqualTo(Duration.ofMinutes(1).toNanos());
    for (int i = 0; i < 1_000; i++) {
      assertThat(node.tryAcquire("k")).isFalse();
    }
    assertThat(node.cachedDenials()).isGreaterThanOrEqualTo(1_000);
    node.syncNow();
    assertThat(store.calls - callsBefore).isLessThanOrEqualTo(1);
    ticker.advance(Duration.ofMinutes(1));
    node.syncNow(); // a fresh view of the new window
    assertThat(node.tryAcquire("k")).isTrue();
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private SyncedLimiter failingNode(FlakyMemoryStore store, StoreFailurePolicy policy) {
    return SyncedLimiter.builder(perMinute, store).nodeId("n-" + policy).ticker(ticker).autoSync(false)
        .activeNodes(() -> 4).onStoreFailure(policy)
        .storeBreaker(StoreBreakerConfig.custom().slowCallDuration(Duration.ofSeconds(1))
            .slidingWindowSize(4).minimumNumberOfCalls(4).waitInOpenState(Duration.ofMillis(500)).build())
        .build();
  }

  /** Drives flushes into a dead store until the breaker opens. */
  private static void breakBreaker(SyncedLimiter node) {
    for (int i = 0; i < 10 && node.storeBreaker().state() == StoreBreaker.State.CLOSED; i++) {
      node.tryAcquire("warm-" + i);
      node.syncNow();
    }
    assertThat(node.storeBreaker().state()).isEqualTo(StoreBreaker.State.OPEN);
  }

  @Test
  void whileTheStoreIsDownEachPolicyDecidesAndNothingIsLostAfterHealing() throws InterruptedException {
    for (StoreFailurePolicy policy : StoreFailurePolicy.values()) {
      FlakyMemoryStore store = new FlakyMemoryStore(11);
      store.faults(1.0, 0);
      SyncedLimiter node = failingNode(store, policy);
      breakBreaker(node);
      long callsWhileOpen = store.calls;
      // (the warm-up's decisions asked the dead store for claims: the policy decided those too)
      long fallbacksBefore = node.fallbackDecisions();
      long admitted = 0;
      for (int i = 0; i < 600; i++) {
        if (node.tryAcquire("k")) {
          admitted++;
        }
        node.syncNow(); // refused by the open breaker: no store call
      }
      assertThat(store.calls).as(policy + ": calls while open").isEqualTo(callsWhileOpen);
      assertThat(node.fallbackDecisions() - fallbacksBefore).isEqualTo(600);
      switch (policy) {
        case FAIL_OPEN:
          assertThat(admitted).isEqualTo(600);
          break;
        case FAIL_CLOSED:
          assertThat(admitted).isZero();
          break;
        default:
          assertThat(admitted).as("a quarter of the limit for one of four nodes").isEqualTo(250);
      }
      // heal: the breaker half-opens after its wait, flushes go through, everything is counted once
      store.faults(0, 0);
      Thread.sleep(550);
      for (int i = 0; i < 5 && node.pending() > 0; i++) {
        node.syncNow();
      }
      // (with nothing pending, FAIL_CLOSED's node makes no flush: its heartbeats probe the store)
      for (int i = 0; i < 2 && node.storeBreaker().state() != StoreBreaker.State.CLOSED; i++) {
        node.heartbeatNow();
      }
      assertThat(node.storeBreaker().state()).as(policy + ": " + node.storeBreaker().failedCalls()
          + " failed, " + node.storeBreaker().successfulCalls() + " ok, pending " + node.pending()
          + ", store calls " + store.calls).isEqualTo(StoreBreaker.State.CLOSED);
      assertThat(node.pending()).isZero();
      assertThat(store.total()).as(policy + ": store count").isEqualTo(node.admitted());
    }
  }

  @Test
  void metricsReadTheLimitersCounters() {
    FlakyMemoryStore store = new FlakyMemoryStore(4);
    SyncedLimiter node = node(store, "m", 2);
    io.micrometer.core.instrument.simple.SimpleMeterRegistry registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    SyncedLimiterMetrics.of(node).bindTo(registry);
    for (int i = 0; i < 10; i++) {
      node.tryAcquire("k" + i);
    }
    assertThat(registry.get("sluice.sync.pending").tag("limit", "api").gauge().value()).isEqualTo(10);
    node.syncNow();
    assertThat(registry.get("sluice.sync.pending").gauge().value()).isZero();
    assertThat(registry.get("sluice.decisions").tag("result", "allowed").functionCounter().count()).isEqualTo(10);
    assertThat(registry.get("sluice.sync.store.calls").functionCounter().count()).isEqualTo(store.calls);
    assertThat(registry.get("sluice.sync.flush.deltas").functionCounter().count()).isEqualTo(10);
    assertThat(registry.get("sluice.sync.breaker.state").gauge().value()).isZero();
    assertThat(registry.get("sluice.sync.nodes").gauge().value()).isEqualTo(2);
    assertThat(registry.get("sluice.sync.store.latency").functionTimer().count()).isEqualTo(store.calls);
  }

  /** One key taking most of the traffic among many quiet ones is detected as hot and gets larger batches. */
  @Test
  void aHeavyHitterIsDetectedAndBatchedMore() {
    FlakyMemoryStore store = new FlakyMemoryStore(9);
    Limit big = Limit.fixedWindow("big").limit(1_000_000).window(Duration.ofMinutes(1)).build();
    SyncedLimiter node = SyncedLimiter.builder(big, store).nodeId("h").ticker(ticker).autoSync(false)
        .activeNodes(() -> 1).batchSize(10).syncInterval(Duration.ofMillis(100)).hotKeys(10, 100, 8)
        .maxError(0.00001).build(); // an error budget of 10 permits: the batches decide
    for (int round = 0; round < 50; round++) {
      for (int i = 0; i < 200; i++) {
        node.tryAcquire("hot");
      }
      for (int k = 0; k < 20; k++) {
        node.tryAcquire("quiet-" + k);
      }
      ticker.advance(Duration.ofMillis(100));
      node.syncNow();
    }
    assertThat(node.hotKeys()).isEqualTo(1);
    // between syncs a node may hold one batch unacknowledged: 10 for a quiet key, 80 for the hot one
    assertThat(admittedBeforeDenial(node, "hot")).isEqualTo(80);
    assertThat(admittedBeforeDenial(node, "quiet-3")).isEqualTo(10);
    assertThatThrownBy(() -> SyncedLimiter.builder(big, store).hotKeys(0.5, 1, 1)).hasMessageStartingWith("hotKeys.factor:");
  }

  private static int admittedBeforeDenial(SyncedLimiter node, String key) {
    int n = 0;
    while (n < 10_000 && node.tryAcquire(key)) {
      n++;
    }
    return n;
  }

  @Test
  void theRegistryTellsHowManyNodesShareTheLimit() {
    FlakyMemoryStore store = new FlakyMemoryStore(2);
    List<SyncedLimiter> nodes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      nodes.add(SyncedLimiter.builder(perMinute, store).nodeId("r" + i).ticker(ticker).autoSync(false).build());
    }
    nodes.forEach(SyncedLimiter::heartbeatNow);
    assertThat(nodes.get(0).heartbeatNow()).isEqualTo(3);
    assertThat(nodes.get(0).registeredNodes()).isEqualTo(3);
  }

  @Test
  void rejectsBadSettings() {
    FlakyMemoryStore store = new FlakyMemoryStore(1);
    assertThatThrownBy(() -> SyncedLimiter.builder(Limit.tokenBucket("tb").capacity(1).refill(1, Duration.ofSeconds(1)).build(), store)
        .build()).hasMessageStartingWith("limit: tb is a TOKEN_BUCKET, shared by the store's exact scripts only");
    assertThatThrownBy(() -> SyncedLimiter.builder(perMinute, null)).hasMessageStartingWith("store:");
    assertThatThrownBy(() -> SyncedLimiter.builder(perMinute, store).batchSize(0)).hasMessageStartingWith("batchSize:");
    assertThatThrownBy(() -> SyncedLimiter.builder(perMinute, store).syncInterval(Duration.ofMinutes(1)))
        .hasMessageStartingWith("syncInterval:");
    assertThatThrownBy(() -> SyncedLimiter.builder(perMinute, store).nodeId("bad id")).hasMessageStartingWith("nodeId:");
    assertThatThrownBy(() -> SyncedLimiter.builder(perMinute, store).maxError(0)).hasMessageStartingWith("maxError:");
    assertThatThrownBy(() -> SyncedLimiter.builder(perMinute, store).batchSize(1).build())
        .hasMessageStartingWith("batchSize:");
    assertThatThrownBy(() -> SyncedLimiter.builder(perMinute, store).onStoreFailure(null))
        .hasMessageStartingWith("onStoreFailure:");
    assertThatThrownBy(() -> SyncedLimiter.builder(perMinute, store).heartbeatInterval(Duration.ZERO))
        .hasMessageStartingWith("heartbeatInterval:");
    SyncedLimiter node = node(store, "n", 1);
    assertThatThrownBy(() -> node.tryAcquire("")).hasMessageStartingWith("key:");
    assertThatThrownBy(() -> node.tryAcquire("k", 1_001)).hasMessageStartingWith("cost:");
  }

  /**
   * close() keeps to its bound however much is left: against a store that answers, but slowly (20 ms
   * a call, 4 deltas a batch: 2,500 batches for 10,000 keys, 50 s to send them all), it stops starting
   * batches at the flush timeout, and {@link SyncedLimiter#pending()} still counts what it left.
   */
  @Test
  void closeReturnsWithinItsBoundAndCountsWhatItCouldNotFlush() {
    FlakyMemoryStore fast = new FlakyMemoryStore(9); // keeps no claims (CounterStore#keepsClaims): permits wait as unsent
    java.util.concurrent.atomic.AtomicBoolean slowNow = new java.util.concurrent.atomic.AtomicBoolean();
    CounterStore slow = new ForwardingStore(fast) {
      @Override
      public java.util.concurrent.CompletionStage<FlushResult> flush(Batch batch) {
        if (slowNow.get()) {
          java.util.concurrent.locks.LockSupport.parkNanos(20_000_000L);
        }
        return fast.flush(batch);
      }
    };
    Limit big = Limit.fixedWindow("big").limit(1_000_000).window(Duration.ofHours(1)).build();
    SyncedLimiter node = SyncedLimiter.builder(big, slow).nodeId("c").ticker(ticker).autoSync(false)
        .activeNodes(() -> 1).flushTimeout(Duration.ofMillis(500)).claimTimeout(Duration.ofMillis(500))
        .storeBreaker(StoreBreakerConfig.custom().waitInOpenState(Duration.ofSeconds(60)).slowCallDuration(Duration.ofSeconds(60))
              .slowCallRateThreshold(100).permittedCallsInHalfOpenState(10).slidingWindowSize(100_000).minimumNumberOfCalls(100_000).build())
        .build();
    node.tryAcquire("warm");
    node.flushAll();
    for (int i = 0; i < 10_000; i++) {
      assertThat(node.tryAcquire("k" + i)).isTrue();
    }
    assertThat(node.pending()).isEqualTo(10_000);
    slowNow.set(true);
    long start = System.nanoTime();
    node.close();
    long took = System.nanoTime() - start;
    assertThat(took).as("close() returned (bound: about twice the flush timeout)").isLessThan(10_000_000_000L);
    assertThat(node.pending()).as("what it could not flush is still counted").isPositive();
    assertThat(fast.total()).as("what it flushed is in the store").isEqualTo(10_001 - node.pending());
  }

  /**
   * Claims or shares is the store's to say ({@code CounterStore#keepsClaims}), once, when the limiter is
   * built: on a store that keeps no claims the first decision on a key takes its node's share and makes
   * no store call (it asked for a claim, and waited for the answer, until an answer without one turned
   * claims off for the rest of the limiter's life); on one that keeps them it asks.
   */
  @Test
  void claimsOrSharesIsChosenWhenTheLimiterIsBuilt() {
    Limit limit = Limit.fixedWindow("choice").limit(1_000).window(Duration.ofMinutes(1)).build();
    FlakyMemoryStore shares = new FlakyMemoryStore(3);
    try (SyncedLimiter node = SyncedLimiter.builder(limit, shares).nodeId("s").ticker(ticker).autoSync(false)
        .activeNodes(() -> 1).coldKeyAllowance(false).build()) {
      assertThat(node.tryAcquire("k")).isTrue();
      assertThat(node.waitedDecisions()).as("decided on its share").isZero();
      assertThat(shares.calls).isZero();
    }
    MemoryStore claims = new MemoryStore();
    try (SyncedLimiter node = SyncedLimiter.builder(limit, claims).nodeId("c").ticker(ticker).autoSync(false)
        .activeNodes(() -> 1).coldKeyAllowance(false).build()) {
      assertThat(node.tryAcquire("k")).isTrue();
      assertThat(node.waitedDecisions()).as("asked the store for a claim").isEqualTo(1);
    }
  }

  /**
   * Idle views go when their windows are over, without the table filling: the flusher looks at a few
   * thousand views each sync and drops those with nothing pending whose windows no longer weigh.
   */
  @Test
  void idleViewsAreDroppedOnceTheirWindowsAreOver() {
    SyncedLimiter node = SyncedLimiter.builder(perMinute, new MemoryStore()).nodeId("s").ticker(ticker)
        .autoSync(false).activeNodes(() -> 1).build();
    for (int i = 0; i < 5_000; i++) {
      node.tryAcquire("idle-" + i);
    }
    node.flushAll();
    CoreAccess.core(node).sweepSome();
    assertThat(node.keys()).as("their window still counts").isEqualTo(5_000);
    ticker.advance(Duration.ofMinutes(2));
    for (int i = 0; i < 3 && node.keys() > 0; i++) {
      node.flushAll(); // (claims given up once idle)
      CoreAccess.core(node).sweepSome();
    }
    assertThat(node.keys()).isZero();
    node.close();
  }
}
