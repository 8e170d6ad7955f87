package io.sluice.region;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.RedisFixture;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.hazelcast.HazelcastCounterStore;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.StoreKeys;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A region's part of a global quota against a real redis-server: the static share without a
 * coordinator, the coordinator's shares read back with each flush (current window, lease windows,
 * then static again), denied demand and the demand index, the clamp that never writes a share below
 * what the region counted, and epoch fencing.
 */
class RegionSharesIT {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();

  private static final long WINDOW_NANOS = Duration.ofSeconds(10).toNanos();
  private static final long SECOND = 1_000_000_000L;

  /** A test clock at the start of the current 10 s window. */
  private static ManualTicker atAWindowStart() {
    return new ManualTicker(Math.floorDiv(System.currentTimeMillis() * 1_000_000L, WINDOW_NANOS) * WINDOW_NANOS);
  }

  private static Limit quota(String name) {
    return Limit.fixedWindow(name).limit(300).window(Duration.ofSeconds(10)).build();
  }

  private static SyncedLimiter node(Limit quota, CounterStore store, ManualTicker ticker) {
    return SyncedLimiter.builder(quota, store).nodeId("n1").ticker(ticker).autoSync(false)
        .activeNodes(() -> 1).regionalQuota(3).build();
  }

  /** Admits one permit at a time, syncing every ten, until the node denies; returns how many it admitted. */
  private static long drain(SyncedLimiter node, String key) {
    long admitted = 0;
    for (int i = 0; i < 1_000; i++) {
      if (node.tryAcquire(key)) {
        admitted++;
      }
      if (i % 10 == 9) {
        node.syncNow();
      }
    }
    node.syncNow();
    return admitted;
  }

  /** A regional token bucket of a refill of 300 per 10 s and a burst of 30 (three regions: 100 and 10 each). */
  private static Limit bucketQuota(String name) {
    return GlobalQuota.builder(name).quota(300).window(Duration.ofSeconds(10)).tokenBucket(30).build().limit();
  }

  /** A node of a regional bucket, on the test's clock: exact mode, FAIL_CLOSED. */
  private static SyncedLimiter bucketNode(Limit quota, CounterStore store, ManualTicker ticker) {
    return SyncedLimiter.builder(quota, store).nodeId("n1").ticker(ticker).autoSync(false).activeNodes(() -> 1)
        .regionalQuota(3).onStoreFailure(StoreFailurePolicy.FAIL_CLOSED).build();
  }

  /** Takes one permit at a time until the node denies; returns how many it admitted. */
  private static long takeAll(SyncedLimiter node, String key) {
    long admitted = 0;
    while (node.tryAcquire(key)) {
      admitted++;
    }
    return admitted;
  }

  /**
   * A region's part of a token-bucket quota (a refill of 300 per 10 s, a burst of 30, three regions):
   * its bucket holds a third of the burst and refills at the static share (10 a second) without a
   * coordinator, at the share written from the moment it is written (the time before drained at the
   * rate before it), back to the static share past the lease; every attempt counts as demand, and the
   * key is in the demand index; a release gives its permit back.
   */
  @Test
  void aRegionalTokenBucketRefillsAtItsShareFromTheMomentItIsWritten() {
    Limit quota = bucketQuota("q-bucket");
    Counter counter = Counter.regional(quota, 3);
    ManualTicker ticker = atAWindowStart();
    long w = Math.floorDiv(ticker.read(), WINDOW_NANOS);
    try (RedisCounterStore store = redis.newStore();
         RegionShareStore shares = RegionShareStore.connect(RedisStoreConfig.builder(redis.uri()).build());
         SyncedLimiter node = bucketNode(quota, store, ticker)) {
      assertThat(takeAll(node, "k")).isEqualTo(10); // a third of the burst
      ticker.advanceNanos(SECOND);
      assertThat(takeAll(node, "k")).isEqualTo(10); // 100 per 10 s
      assertThat(shares.keys(quota, w, 10)).containsExactly("k");
      RegionShareStore.KeyState k = shares.read(quota, w, List.of("k")).get(0);
      assertThat(k.admitted()).isEqualTo(20);
      assertThat(k.denied()).isEqualTo(2);

      // 200 per 10 s from now: a quarter of a second at 10 a second, then a quarter at 20 (7.5 permits;
      // 10 had the whole half second refilled at the new rate), then 0.4 s more at 20
      ticker.advanceNanos(SECOND / 4);
      assertThat(shares.write(1, counter, w, ticker.read() / 1_000, Duration.ofSeconds(60),
          List.of(new RegionShareStore.ShareWrite("k", 200, 50, w + 1))).shares()).containsExactly(200);
      ticker.advanceNanos(SECOND / 4);
      assertThat(takeAll(node, "k")).isEqualTo(7);
      ticker.advanceNanos(SECOND * 4 / 10);
      assertThat(takeAll(node, "k")).isEqualTo(8);

      // the next window, the lease's share: 5 a second; past the lease, the static share again
      ticker.advanceNanos(WINDOW_NANOS - 19 * SECOND / 10);
      takeAll(node, "k");
      ticker.advanceNanos(SECOND);
      assertThat(takeAll(node, "k")).isEqualTo(5);
      ticker.advanceNanos(WINDOW_NANOS);
      takeAll(node, "k");
      ticker.advanceNanos(SECOND);
      assertThat(takeAll(node, "k")).isEqualTo(10);

      // a release gives its permit back
      ticker.advanceNanos(SECOND / 10);
      io.sluice.node.Decision d = node.acquire("k", 1);
      assertThat(d.allowed()).isTrue();
      assertThat(node.tryAcquire("k")).isFalse();
      node.release("k", 1, d);
      assertThat(node.tryAcquire("k")).isTrue();

      // a give-back to a key that holds no bucket (a full one) writes nothing: no key without a TTL
      store.giveBackRegional(counter, "never-seen", 1, ticker.read() / 1_000, w).toCompletableFuture().join();
      assertThat(redis.cli().exists(RedisFixture.counterKey(StoreKeys.storeName(quota), "never-seen"))).isZero();
    }
  }

  /**
   * A region's Redis that loses its data (a restart without persistence) while a lease covers a
   * regional bucket's key: the node that read the lease's record gives it back to the key, so the
   * bucket refills at the leased share, the one the coordinator counts the region at (not the static
   * share, twice it here), and starts empty, not with a fresh burst; past the lease, the static share.
   */
  @Test
  void aRegionalBucketWhoseRedisLostItsDataKeepsItsLeasedShareAndNoFreshBurst() {
    Limit quota = bucketQuota("q-bucket-lost");
    ManualTicker ticker = atAWindowStart();
    long w = Math.floorDiv(ticker.read(), WINDOW_NANOS);
    try (RedisCounterStore store = redis.newStore();
         RegionShareStore shares = RegionShareStore.connect(RedisStoreConfig.builder(redis.uri()).build());
         SyncedLimiter node = bucketNode(quota, store, ticker)) {
      shares.write(1, Counter.regional(quota, 3), w, ticker.read() / 1_000, Duration.ofSeconds(60),
          List.of(new RegionShareStore.ShareWrite("k", 50, 50, w + 1)));
      assertThat(takeAll(node, "k")).isEqualTo(10);
      ticker.advanceNanos(SECOND);
      assertThat(takeAll(node, "k")).isEqualTo(5); // 50 per 10 s; the node has read the record

      redis.cli().flushall();
      ticker.advanceNanos(SECOND);
      // empty from the first decision after the loss (a fresh key would hold 10, its burst), then 5 a
      // second (10 at the static share)
      assertThat(takeAll(node, "k")).isZero();
      ticker.advanceNanos(SECOND);
      assertThat(takeAll(node, "k")).isEqualTo(5);
      assertThat(shares.read(quota, w, List.of("k")).get(0).shareFor(w + 1)).isEqualTo(50);

      ticker.advanceNanos(2 * WINDOW_NANOS - 3 * SECOND); // w + 2: past the lease
      takeAll(node, "k");
      ticker.advanceNanos(SECOND);
      assertThat(takeAll(node, "k")).isEqualTo(10);
    }
  }

  @Test
  void enforcesStaticShareThenCoordinatorsShareThenLeaseThenStaticAgain() {
    Limit quota = quota("q-lease");
    ManualTicker ticker = atAWindowStart();
    long w = Math.floorDiv(ticker.read(), WINDOW_NANOS);
    try (RedisCounterStore store = redis.newStore();
         RegionShareStore shares = RegionShareStore.connect(RedisStoreConfig.builder(redis.uri()).build());
         SyncedLimiter node = node(quota, store, ticker)) {
      // no coordinator yet: 300 / 3 regions
      assertThat(drain(node, "k")).isEqualTo(100);

      RegionShareStore.WriteResult written = shares.write(1, Counter.regional(quota, 3), w, 0, Duration.ofSeconds(60),
          List.of(new RegionShareStore.ShareWrite("k", 150, 120, w + 2)));
      assertThat(written.accepted()).isTrue();
      assertThat(written.shares()).containsExactly(150);
      node.syncNow(); // the flush reads the new share back
      assertThat(100 + drain(node, "k")).isEqualTo(150);

      assertThat(shares.keys(quota, w, 10)).containsExactly("k");
      List<RegionShareStore.KeyState> read = shares.read(quota, w, shares.keys(quota, w, 10));
      assertThat(read).hasSize(1);
      RegionShareStore.KeyState k = read.get(0);
      assertThat(k.key()).isEqualTo("k");
      assertThat(k.admitted()).isEqualTo(150);
      assertThat(k.denied()).isEqualTo(1_000 - 100 + 1_000 - 50);
      assertThat(k.shareFor(w)).isEqualTo(150);
      assertThat(k.shareFor(w + 2)).isEqualTo(120);
      assertThat(k.shareFor(w + 3)).isEqualTo(-1);
      assertThat(k.epoch()).isEqualTo(1);

      ticker.advanceNanos(WINDOW_NANOS); // w + 1: the lease share
      node.syncNow();
      assertThat(drain(node, "k")).isEqualTo(120);
      ticker.advanceNanos(2 * WINDOW_NANOS); // w + 3: past the lease, static again
      assertThat(drain(node, "k")).isEqualTo(100);
    }
  }

  /**
   * A sliding window quota's node weighs the previous window's count against its share: with 150
   * counted in one window and a share of 100 for the next, it admits nothing until that count has
   * faded under 100 (a third of the way into the window), and then only what fades: no admission
   * leaves the sliding estimate above the share.
   */
  @Test
  void aSlidingQuotasNodeWeighsThePreviousWindowAgainstItsShare() {
    Limit quota = Limit.slidingWindowCounter("q-sliding").limit(300).window(Duration.ofSeconds(10)).build();
    ManualTicker ticker = atAWindowStart();
    long w = Math.floorDiv(ticker.read(), WINDOW_NANOS);
    try (RedisCounterStore store = redis.newStore();
         RegionShareStore shares = RegionShareStore.connect(RedisStoreConfig.builder(redis.uri()).build());
         SyncedLimiter node = node(quota, store, ticker)) {
      node.tryAcquire("k");
      node.syncNow(); // (the key is in the demand index: the share store writes only keys it knows)
      shares.write(1, Counter.regional(quota, 3), w, 0, Duration.ofSeconds(60), List.of(new RegionShareStore.ShareWrite("k", 150, 100, w + 2)));
      node.syncNow();
      assertThat(1 + drain(node, "k")).isEqualTo(150);
      ticker.advanceNanos(WINDOW_NANOS - WINDOW_NANOS / 100);
      long[] admitted = new long[100];
      for (int step = 0; step < 100; step++) { // the next window, 100 ms at a time, each step at its end
        ticker.advanceNanos(WINDOW_NANOS / 100);
        admitted[step] = drain(node, "k");
      }
      long before = 0;
      long total = 0;
      for (int step = 0; step < 100; step++) {
        total += admitted[step];
        double weight = 1 - step / 100.0;
        if (admitted[step] > 0) {
          assertThat(150 * weight + total).as("sliding estimate after step %d", step).isLessThanOrEqualTo(100.0 + 1e-9);
        }
        if (step < 32) {
          before += admitted[step];
        }
      }
      assertThat(before).as("admitted while the previous window alone weighed over the share").isZero();
      assertThat(total).isBetween(95L, 100L);
    }
  }

  /**
   * A regional Redis that restarts empty loses the coordinator's share record: the node keeps the
   * share the lease gave it for the windows the lease covered (the coordinator counts the region at
   * that share until its next round), instead of the static share, which here is larger and would push
   * the regions' sum over the quota; its own permits go to the new store again (refill).
   */
  @Test
  void aRegionWhoseRedisLostItsDataKeepsItsLeasedShare() {
    Limit quota = quota("q-lost");
    ManualTicker ticker = atAWindowStart();
    long w = Math.floorDiv(ticker.read(), WINDOW_NANOS);
    try (RedisCounterStore store = redis.newStore();
         RegionShareStore shares = RegionShareStore.connect(RedisStoreConfig.builder(redis.uri()).build());
         SyncedLimiter node = node(quota, store, ticker)) {
      assertThat(shares.write(1, Counter.regional(quota, 3), w, 0, Duration.ofSeconds(60),
          List.of(new RegionShareStore.ShareWrite("k", 60, 50, w + 2))).accepted()).isTrue();
      node.syncNow();
      assertThat(drain(node, "k")).as("the leased share").isEqualTo(60);
      redis.cli().flushall(); // the regional Redis restarts empty
      node.syncNow();
      node.syncNow();
      assertThat(drain(node, "k")).as("after the loss: still the leased share, not G / 3 = 100").isZero();
      ticker.advanceNanos(WINDOW_NANOS); // w + 1: the lease's next share
      node.syncNow();
      assertThat(drain(node, "k")).isEqualTo(50);
    }
  }

  /** The registry as the coordinator reads it: deadlines of the nodes that beat, and the nodes that left. */
  @Test
  void theCoordinatorReadsTheNodesThatBeatAndThoseThatLeft() throws Exception {
    try (RedisCounterStore a = redis.newStore(); RedisCounterStore b = redis.newStore();
         RegionShareStore shares = RegionShareStore.connect(RedisStoreConfig.builder(redis.uri()).build())) {
      long now = System.currentTimeMillis();
      a.heartbeat("node-a", now, Duration.ofSeconds(3)).toCompletableFuture().get();
      b.heartbeat("node-b", now, Duration.ofSeconds(3)).toCompletableFuture().get();
      b.leave("node-b", now + 1).toCompletableFuture().get();
      RegionShareStore.Registry registry = shares.nodes();
      assertThat(registry.deadlines()).containsEntry("node-a", now + 3_000).doesNotContainKey("node-b");
      assertThat(registry.left()).contains("node-b").doesNotContain("node-a"); // (other tests' nodes share this Redis)
    }
  }

  /**
   * The coordinator reads the keys of the demand index back exactly (StoreKeys.keyOf), whatever they
   * hold, and skips keys of the layout before the limit name was length-prefixed.
   */
  @Test
  void theDemandIndexGivesBackEachKeyAndSkipsKeysOfTheOldLayout() {
    Limit quota = quota("q:keys");
    ManualTicker ticker = new ManualTicker();
    long w = Math.floorDiv(ticker.read(), WINDOW_NANOS);
    List<String> keys = List.of("b:c", "x}y", "{z", "7:q:keys:k", "用户-🚦", "a\uD800b", "a\uDC00b");
    try (RedisCounterStore store = redis.newStore();
         RegionShareStore shares = RegionShareStore.connect(RedisStoreConfig.builder(redis.uri()).build());
         SyncedLimiter node = node(quota, store, ticker)) {
      for (String k : keys) {
        assertThat(node.tryAcquire(k)).isTrue();
      }
      node.syncNow();
      redis.cli().zadd("sluice:demand:q:keys", w, "sluice:{q:keys:old}"); // as a node of the old layout wrote it
      assertThat(shares.keys(quota, w, 100)).containsExactlyInAnyOrderElementsOf(keys);
      assertThat(shares.read(quota, w, keys)).allSatisfy(k -> assertThat(k.admitted()).as(k.key()).isEqualTo(1));
    }
  }

  @Test
  void neverWritesAShareBelowWhatTheRegionCounted() {
    Limit quota = quota("q-clamp");
    ManualTicker ticker = new ManualTicker();
    long w = Math.floorDiv(ticker.read(), WINDOW_NANOS);
    try (RedisCounterStore store = redis.newStore();
         RegionShareStore shares = RegionShareStore.connect(RedisStoreConfig.builder(redis.uri()).build());
         SyncedLimiter node = node(quota, store, ticker)) {
      long admitted = 0;
      for (int i = 0; i < 1_000 && admitted < 80; i++) {
        admitted += node.tryAcquire("k") ? 1 : 0;
        node.syncNow();
      }
      assertThat(admitted).isEqualTo(80);
      RegionShareStore.WriteResult written = shares.write(1, Counter.regional(quota, 3), w, 0, Duration.ofSeconds(60),
          List.of(new RegionShareStore.ShareWrite("k", 10, 30, w + 1)));
      assertThat(written.shares()).containsExactly(80);
      assertThat(written.nextShares()).containsExactly(30);
      node.tryAcquire("k"); // decided on the view from before the write, which the next flush refreshes
      node.syncNow();
      assertThat(node.tryAcquire("k")).isFalse();
    }
  }

  @Test
  void refusesWritesFromAnOlderEpoch() {
    Limit quota = quota("q-epoch");
    try (RegionShareStore shares = RegionShareStore.connect(
        RedisStoreConfig.builder(redis.uri()).keyPrefix("fenced").build())) {
      assertThat(shares.epoch()).isZero();
      assertThat(shares.write(2, Counter.regional(quota, 3), 5, 0, Duration.ofSeconds(60),
          List.of(new RegionShareStore.ShareWrite("k", 10, 10, 6))).accepted()).isTrue();
      RegionShareStore.WriteResult stale = shares.write(1, Counter.regional(quota, 3), 5, 0, Duration.ofSeconds(60),
          List.of(new RegionShareStore.ShareWrite("k", 99, 99, 6)));
      assertThat(stale.accepted()).isFalse();
      assertThat(stale.epoch()).isEqualTo(2);
      assertThat(shares.epoch()).isEqualTo(2);
      assertThat(shares.keys(quota, 5, 10)).isEmpty(); // shares alone do not make a key demanded
      assertThat(shares.read(quota, 5, List.of("k")).get(0).share()).isEqualTo(10);
      String k = new String(StoreKeys.counterKey("fenced", "q-epoch", "k"), StandardCharsets.UTF_8);
      assertThat(redis.cli().hget(k, "s:v")).isEqualTo("10");
    }
  }

  @Test
  void badConfigurationNamesTheField() {
    Limit meter = Limit.leakyBucket("s").capacity(300).leakRate(300, Duration.ofSeconds(10)).build();
    Limit bucket = Limit.tokenBucket("s").capacity(300).refill(300, Duration.ofSeconds(10)).build();
    try (RedisCounterStore store = redis.newStore()) {
      assertThatThrownBy(() -> SyncedLimiter.builder(meter, store).regionalQuota(3).build())
          .hasMessageStartingWith("limit: a regional quota");
      // a token bucket: exact mode, and a failure policy the coordinator counts
      assertThatThrownBy(() -> SyncedLimiter.builder(bucket, store).regionalQuota(3).build())
          .hasMessageStartingWith("onStoreFailure: a token-bucket regional quota");
      // exact mode or token claims (a batch size above 1), not reservation
      SyncedLimiter.builder(bucket, store).regionalQuota(3).batchSize(100)
          .onStoreFailure(StoreFailurePolicy.FAIL_CLOSED).build().close();
      assertThatThrownBy(() -> SyncedLimiter.builder(bucket, store).regionalQuota(3).reservation()
          .onStoreFailure(StoreFailurePolicy.FAIL_CLOSED).build())
          .hasMessageStartingWith("regionalQuota: a token-bucket quota's share is enforced in exact mode");
      Limit tinyBurst = Limit.tokenBucket("t").capacity(2).refill(300, Duration.ofSeconds(10)).build();
      assertThatThrownBy(() -> SyncedLimiter.builder(tinyBurst, store).regionalQuota(3)
          .onStoreFailure(StoreFailurePolicy.FAIL_CLOSED).build())
          .hasMessageStartingWith("regions: must be at most the burst 2");
      assertThatThrownBy(() -> SyncedLimiter.builder(quota("b1"), store).regionalQuota(3).batchSize(1).build())
          .hasMessageStartingWith("regionalQuota:");
      assertThatThrownBy(() -> SyncedLimiter.builder(quota("z"), store).regionalQuota(0))
          .hasMessageStartingWith("regionalQuota:");
      assertThatThrownBy(() -> SyncedLimiter.builder(quota("big"), store).regionalQuota(301).build())
          .hasMessageStartingWith("regions:");
    }
    try (HazelcastCounterStore hz = HazelcastCounterStore.embedded()) {
      assertThatThrownBy(() -> SyncedLimiter.builder(quota("h"), hz).regionalQuota(3).build())
          .hasMessageStartingWith("regionalQuota: needs a store");
    }
  }
}
