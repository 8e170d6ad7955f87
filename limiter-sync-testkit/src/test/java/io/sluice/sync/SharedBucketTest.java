package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.node.Mode;
import io.sluice.node.Outcome;
import io.sluice.node.RateLimiter;
import io.sluice.node.RequestContext;
import io.sluice.node.RequestLimiter;
import io.sluice.node.Rule;
import io.sluice.node.Rules;
import io.sluice.sync.spi.ExactResult;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.StoreUnavailableException;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * Token buckets, leaky buckets (meters) and sliding window logs shared across nodes: decided by the
 * store's exact scripts, one per decision, so that any number of nodes decide request by request as one
 * in-process limiter of the same limit would ({@link #sameDecisionsAsOneInProcessLimiter}, here on the
 * in-memory store that runs the Hazelcast store's processors; on real Redis and Hazelcast in
 * {@link SyncedLimiterBurstCheck}). While the store fails, LOCAL_SHARE keeps each node to an even part.
 */
class SharedBucketTest {

  /** A token bucket, a leaky bucket and a sliding log, their names ending in {@code suffix}. */
  static List<Limit> nonWindowLimits(String suffix) {
    return List.of(
        Limit.tokenBucket("bucket" + suffix).capacity(10).refill(3, Duration.ofSeconds(1)).build(),
        Limit.leakyBucket("meter" + suffix).capacity(6).leakRate(7, Duration.ofSeconds(2)).build(),
        Limit.slidingWindowLog("log" + suffix).limit(8).window(Duration.ofSeconds(1)).build());
  }

  /**
   * Seeded requests (keys, costs up to 3, gaps of 0 to 250 ms) spread over {@code nodes.size()} nodes,
   * each decided by a node and by an in-process limiter of the same limit on the same clock: the same
   * answers, request by request, and the same remaining permits. Returns the requests admitted.
   */
  static int sameDecisionsAsOneInProcessLimiter(Limit limit, List<SyncedLimiter> nodes, ManualTicker ticker,
      long seed) {
    RateLimiter reference = RateLimiter.builder(limit).ticker(ticker).build();
    SplittableRandom random = new SplittableRandom(seed);
    int admitted = 0;
    for (int i = 0; i < 600; i++) {
      ticker.advance(Duration.ofMillis(random.nextInt(4) == 0 ? random.nextInt(250) : 0));
      String key = "k" + random.nextInt(3);
      long cost = 1 + random.nextInt(3);
      SyncedLimiter node = nodes.get(random.nextInt(nodes.size()));
      Decision expected = reference.acquire(key, cost);
      Decision actual = node.acquire(key, cost);
      String request = "request " + i + " (seed " + seed + "): " + key + " cost " + cost + " on " + node.nodeId();
      assertThat(actual.outcome()).as(request).isEqualTo(expected.outcome());
      assertThat(actual.remaining()).as(request + ", remaining").isEqualTo(expected.remaining());
      if (actual.allowed()) {
        admitted++;
      }
    }
    return admitted;
  }

  @Test
  void nodesDecideAsOneInProcessLimiter() {
    for (Limit limit : nonWindowLimits("")) {
      ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
      MemoryStore store = new MemoryStore();
      List<SyncedLimiter> nodes = new ArrayList<>();
      for (int n = 0; n < 3; n++) {
        nodes.add(SyncedLimiter.builder(limit, store).nodeId("n" + n).ticker(ticker).autoSync(false).build());
      }
      int admitted = sameDecisionsAsOneInProcessLimiter(limit, nodes, ticker, 42);
      // the traffic reaches the limit and stays below it, both
      assertThat(admitted).as(limit.name()).isBetween(50, 550);
      assertThat(nodes.get(0).storeCalls()).as("one store call per decision").isGreaterThan(0);
      nodes.forEach(SyncedLimiter::close);
    }
  }

  @Test
  void theDefaultIsExactAndBatchesAreRefusedByName() {
    MemoryStore store = new MemoryStore();
    Limit bucket = nonWindowLimits("").get(0);
    Limit log = nonWindowLimits("").get(2);
    assertThatThrownBy(() -> SyncedLimiter.builder(log, store).batchSize(100))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("batchSize: log is a SLIDING_WINDOW_LOG, shared in exact mode only");
    // a bucket is exact by default, and claims tokens ahead when its builder is given a batch size
    // (a config shared by several limits leaves it exact)
    try (SyncedLimiter exact = SyncedLimiter.builder(bucket, store).autoSync(false).build();
        SyncedLimiter claiming = SyncedLimiter.builder(bucket, store).autoSync(false).batchSize(100).build();
        SyncedLimiter shared = SyncedLimiter.of(bucket, store, SyncConfig.custom().batchSize(100).autoSync(false)
            .build())) {
      assertThat(exact.batchSize()).isEqualTo(1);
      assertThat(claiming.batchSize()).isEqualTo(100);
      assertThat(shared.batchSize()).isEqualTo(1);
    }
    // a bucket's reservations are its token claims (at the batch size, 100 unless set); a log has none
    try (SyncedLimiter reserving = SyncedLimiter.builder(bucket, store).autoSync(false).reservation().build();
        SyncedLimiter reservingShared = SyncedLimiter.of(bucket, store, SyncConfig.custom().reservation(true)
            .batchSize(20).autoSync(false).build());
        SyncedLimiter reservingOne = SyncedLimiter.builder(bucket, store).autoSync(false).reservation().batchSize(1)
            .build()) {
      assertThat(reserving.batchSize()).isEqualTo(100);
      assertThat(reservingShared.batchSize()).isEqualTo(20);
      assertThat(reservingOne.batchSize()).isEqualTo(1); // (each decision the store's: exact mode)
      assertThat(reservingOne.tryAcquire("one")).isTrue();
      assertThat(reservingOne.fallbackDecisions()).isZero();
    }
    assertThatThrownBy(() -> SyncedLimiter.builder(log, store).reservation().build())
        .hasMessageStartingWith("reservation: a SLIDING_WINDOW_LOG is shared in exact mode only");
    assertThatThrownBy(() -> SyncedLimiter.builder(
        Limit.leakyBucketShaper("queue").capacity(5).leakRate(1, Duration.ofSeconds(1)).build(), store))
        .hasMessageStartingWith("limit: queue is a leaky bucket shaper");
    // a refill far faster than the sync interval is no window: the default interval stays valid
    Limit fast = Limit.tokenBucket("fast").capacity(5).refill(1, Duration.ofMillis(10)).build();
    SyncedLimiter limiter = SyncedLimiter.builder(fast, store).autoSync(false).build();
    assertThat(limiter.tryAcquire("k", 5)).isTrue();
    assertThat(limiter.tryAcquire("k")).isFalse();
    limiter.close();
    assertThatThrownBy(() -> SyncedLimiter.builder(
        Limit.tokenBucket("odd").capacity(5).refill(1, Duration.ofNanos(1_500)).build(), store).build())
        .hasMessageStartingWith("refill.period: must be a whole number of microseconds");
  }

  /**
   * The store cut off: each of 3 nodes keeps to a third of the burst (rounded up) and of the rate, so
   * the three together admit at most the burst (plus rounding) and then the rate; shadow and soft
   * limits still answer with their own outcomes; FAIL_CLOSED denies, FAIL_OPEN admits.
   */
  @Test
  void localShareIsAnEvenPartOfTheBucket() {
    Limit limit = Limit.tokenBucket("cut").capacity(30).refill(30, Duration.ofSeconds(1)).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    CutStore store = new CutStore(new MemoryStore());
    List<SyncedLimiter> nodes = new ArrayList<>();
    for (int n = 0; n < 3; n++) {
      nodes.add(SyncedLimiter.builder(limit, store).nodeId("n" + n).ticker(ticker).autoSync(false)
          .activeNodes(() -> 3).onStoreFailure(StoreFailurePolicy.LOCAL_SHARE)
          .storeBreaker(StoreBreakerConfig.custom().waitInOpenState(Duration.ofSeconds(60)).slowCallDuration(Duration.ofSeconds(60))
              .slowCallRateThreshold(100).permittedCallsInHalfOpenState(10).slidingWindowSize(2).minimumNumberOfCalls(2).build())
          .build());
    }
    store.cut = true;
    int admitted = 0;
    for (int i = 0; i < 60; i++) {
      if (nodes.get(i % 3).tryAcquire("k")) {
        admitted++;
      }
    }
    assertThat(admitted).as("the burst, in three parts of 10").isEqualTo(30);
    ticker.advance(Duration.ofMillis(500));
    admitted = 0;
    for (int i = 0; i < 60; i++) {
      if (nodes.get(i % 3).tryAcquire("k")) {
        admitted++;
      }
    }
    assertThat(admitted).as("half a second of the rate, in three parts").isEqualTo(15);
    Decision denied = nodes.get(0).acquire("k");
    assertThat(denied.outcome()).isEqualTo(Outcome.DENIED);
    assertThat(denied.retryAfterNanos()).isPositive();
    assertThat(denied.limit()).isSameAs(limit);
    assertThat(nodes.get(0).fallbackDecisions()).isPositive();
    nodes.forEach(SyncedLimiter::close);

    for (StoreFailurePolicy policy : List.of(StoreFailurePolicy.FAIL_OPEN, StoreFailurePolicy.FAIL_CLOSED)) {
      SyncedLimiter node = SyncedLimiter.builder(limit, store).ticker(ticker).autoSync(false)
          .onStoreFailure(policy).build();
      assertThat(node.tryAcquire("other", 30)).as(policy.name()).isEqualTo(policy == StoreFailurePolicy.FAIL_OPEN);
      node.close();
    }
    Limit shadow = limit.toBuilder().mode(Mode.SHADOW).build();
    SyncedLimiter node = SyncedLimiter.builder(shadow, store).ticker(ticker).autoSync(false)
        .onStoreFailure(StoreFailurePolicy.FAIL_CLOSED).build();
    assertThat(node.acquire("k").outcome()).isEqualTo(Outcome.SHADOW_DENIED);
    node.close();
  }

  /**
   * Whatever mode shares a bucket, the admissions of all nodes, replayed at their moments through one
   * in-process bucket, are admitted by it: after an idle spell (where a batched design once let tokens
   * taken from a nearly full bucket come on top of the refilled bucket: 110 of 100 at one instant),
   * and under steady traffic above the rate on one node.
   */
  @Test
  void nodesTogetherNeverPassTheBucket() {
    Limit limit = Limit.tokenBucket("guard").capacity(100).refill(100, Duration.ofSeconds(1)).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    MemoryStore store = new MemoryStore();
    SyncedLimiter a = SyncedLimiter.builder(limit, store).nodeId("a").ticker(ticker).autoSync(false).build();
    SyncedLimiter b = SyncedLimiter.builder(limit, store).nodeId("b").ticker(ticker).autoSync(false).build();
    RateLimiter replay = RateLimiter.builder(limit).ticker(ticker).build();
    int admitted = 0;
    for (int i = 0; i < 11; i++) {
      admitted += tried(a, replay);
      ticker.advance(Duration.ofMillis(1));
    }
    ticker.advance(Duration.ofMillis(500));
    a.syncNow();
    b.syncNow();
    for (int i = 0; i < 150; i++) {
      admitted += tried(i % 3 == 0 ? a : b, replay);
    }
    assertThat(admitted).isLessThanOrEqualTo(11 + 100);
    SplittableRandom random = new SplittableRandom(150);
    for (int i = 0; i < 3_000; i++) {
      ticker.advanceNanos((long) (-Math.log(1 - random.nextDouble()) * 1e9 / 150) + 1);
      if (i % 15 == 0) {
        a.syncNow();
      }
      tried(a, replay);
    }
    a.close();
    b.close();
  }

  /** One request on a node; an admission must be one the in-process bucket admits at that moment. */
  private static int tried(SyncedLimiter node, RateLimiter replay) {
    if (!node.tryAcquire("k")) {
      return 0;
    }
    assertThat(replay.tryAcquire("k")).as("an admission of " + node.nodeId() + " passes one bucket").isTrue();
    return 1;
  }

  /**
   * A request denied by one limit spends nothing of the others, in exact mode too: a login limit (2 an
   * hour) denies 8 of 10 attempts after the per-key bucket (10 of burst) let them through; the bucket
   * gets those 8 tokens back, so the key still has 8 for its other calls. The same for an exact window.
   */
  @Test
  void aRequestDeniedByOneLimitSpendsNothingOfTheOthers() {
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    MemoryStore store = new MemoryStore();
    Limit perKey = Limit.tokenBucket("per-key").capacity(10).refill(1, Duration.ofHours(1)).build();
    Limit perIp = Limit.fixedWindow("per-ip").limit(10).window(Duration.ofHours(1)).build();
    Limit login = Limit.fixedWindow("login").limit(2).window(Duration.ofHours(1)).build();
    Rules rules = Rules.builder()
        .always(Rule.of(perKey, "api-key"), Rule.of(perIp, "ip"))
        .endpoint("POST", "/login", Rule.of(login, "ip"))
        .build();
    RequestLimiter requestLimiter = RequestLimiter.builder(rules)
        .limiters(limit -> SyncedLimiter.builder(limit, store).ticker(ticker).autoSync(false)
            .batchSize(limit == login ? 100 : 1).build())
        .build();
    RequestContext attempt = RequestContext.builder().endpoint("POST", "/login").identity("api-key", "k")
        .identity("ip", "10.0.0.7").build();
    int allowed = 0;
    for (int i = 0; i < 10; i++) {
      allowed += requestLimiter.check(attempt).allowed() ? 1 : 0;
    }
    assertThat(allowed).isEqualTo(2);
    RequestContext other = RequestContext.builder().endpoint("GET", "/items").identity("api-key", "k")
        .identity("ip", "10.0.0.7").build();
    int left = 0;
    for (int i = 0; i < 20; i++) {
      left += requestLimiter.check(other).allowed() ? 1 : 0;
    }
    assertThat(left).as("the bucket's and the exact window's 8 permits, given back").isEqualTo(8);
    requestLimiter.close();
  }

  /**
   * One local share per outage: a node count that changes while the store is cut, or a store that
   * comes back for a moment, hands out no fresh burst (a new share is built only once the old one has
   * had time to refill whole).
   */
  @Test
  void aLocalShareIsNotRenewedByAFlappingStoreOrNodeCount() {
    Limit limit = Limit.tokenBucket("flap").capacity(30).refill(30, Duration.ofMinutes(1)).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    CutStore store = new CutStore(new MemoryStore());
    int[] nodes = {3};
    SyncedLimiter node = SyncedLimiter.builder(limit, store).ticker(ticker).autoSync(false)
        .activeNodes(() -> nodes[0]).onStoreFailure(StoreFailurePolicy.LOCAL_SHARE)
        .storeBreaker(StoreBreakerConfig.custom().waitInOpenState(Duration.ofSeconds(60)).slowCallDuration(Duration.ofSeconds(60))
              .slowCallRateThreshold(100).permittedCallsInHalfOpenState(10).slidingWindowSize(2).minimumNumberOfCalls(2).build())
        .build();
    store.cut = true;
    int admitted = 0;
    for (int i = 0; i < 40; i++) {
      nodes[0] = 3 + i % 2; // the registry's count flaps between 3 and 4
      admitted += node.tryAcquire("k") ? 1 : 0;
    }
    assertThat(admitted).as("a third of the burst, once").isEqualTo(10);
    nodes[0] = 1; // the others drop out of the registry: still the share this outage began with
    ticker.advance(Duration.ofSeconds(1));
    admitted = 0;
    for (int i = 0; i < 40; i++) {
      admitted += node.tryAcquire("k") ? 1 : 0;
    }
    assertThat(admitted).as("a second of a third of the rate").isLessThanOrEqualTo(1);
    node.close();
  }

  /**
   * An exact window gives back at most what the node itself admitted in the window (as the batched
   * mode does): a decision released again and again cannot hand out the other nodes' permits.
   */
  @Test
  void aNodeGivesBackNoMoreThanItAdmitted() {
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    MemoryStore store = new MemoryStore();
    Limit limit = Limit.fixedWindow("once").limit(3).window(Duration.ofHours(1)).build();
    SyncedLimiter a = SyncedLimiter.builder(limit, store).nodeId("a").ticker(ticker).autoSync(false).batchSize(1).build();
    SyncedLimiter b = SyncedLimiter.builder(limit, store).nodeId("b").ticker(ticker).autoSync(false).batchSize(1).build();
    Decision first = a.acquire("k");
    assertThat(b.tryAcquire("k", 2)).isTrue();
    assertThat(a.tryAcquire("k")).isFalse();
    a.release("k", 1, first);
    a.release("k", 1, first);
    a.release("k", 1, first);
    assertThat(a.tryAcquire("k")).isTrue();
    assertThat(b.tryAcquire("k")).as("three releases of a's one permit: one permit back").isFalse();
    a.close();
    b.close();
  }

  /** A store that fails every exact check while cut (and passes flushes and heartbeats on). */
  static final class CutStore extends ForwardingStore implements ExactStore {
    volatile boolean cut;

    CutStore(MemoryStore inner) {
      super(inner);
    }

    @Override
    public CompletionStage<ExactResult> acquire(Limit limit, String key, long cost, long nowMicros) {
      if (cut) {
        return CompletableFuture.failedFuture(new StoreUnavailableException("cut off", null));
      }
      return ((MemoryStore) inner).acquire(limit, key, cost, nowMicros);
    }

    @Override
    public CompletionStage<Void> giveBack(Limit limit, String key, long cost, long nowMicros, long window) {
      if (cut) {
        return CompletableFuture.failedFuture(new StoreUnavailableException("cut off", null));
      }
      return ((MemoryStore) inner).giveBack(limit, key, cost, nowMicros, window);
    }
  }
}
