package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.sluice.node.Limit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The flush script and the Redis store against a real redis-server. */
class RedisCounterStoreIT {
  private static final long NOW_MICROS = 1_767_225_600_000_000L; // 2026-01-01T00:00Z
  private static RedisServer redis;
  private static RedisClient admin;
  private static StatefulRedisConnection<String, String> adminConnection;
  private static RedisCommands<String, String> redisCli;

  private final Counter window = Counter.of(Limit.slidingWindowCounter("api").limit(1_000).window(Duration.ofMinutes(1)).build());
  private final Counter bucket = Counter.of(Limit.tokenBucket("tb").capacity(100).refill(10, Duration.ofSeconds(1)).build());

  @BeforeAll
  static void startRedis() {
    redis = RedisServer.start();
    admin = RedisClient.create(redis.uri());
    adminConnection = admin.connect();
    redisCli = adminConnection.sync();
  }

  @AfterAll
  static void stopRedis() {
    adminConnection.close();
    admin.shutdown();
    redis.close();
  }

  @BeforeEach
  void empty() {
    redisCli.flushall();
  }

  private RedisCounterStore store() {
    return RedisCounterStore.connect(RedisStoreConfig.builder(redis.uri()).build());
  }

  private static FlushResult flush(CounterStore store, Batch batch) {
    try {
      return store.flush(batch).toCompletableFuture().get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void windowDeltasAddUpAndReturnBothWindows() {
    try (RedisCounterStore store = store()) {
      FlushResult first = flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(
          new Delta(window, "alice", 100, 7), new Delta(window, "bob", 100, 2))));
      assertThat(first.applied()).isTrue();
      assertThat(first.current(0)).isEqualTo(7);
      assertThat(first.current(1)).isEqualTo(2);
      FlushResult second = flush(store, new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(window, "alice", 101, 3))));
      assertThat(second.current(0)).isEqualTo(3);
      assertThat(second.previous(0)).isEqualTo(7);
    }
  }

  @Test
  void aRetriedBatchIsNotAppliedTwice() {
    try (RedisCounterStore store = store()) {
      Batch batch = new Batch("n1", 0, 5, NOW_MICROS, List.of(new Delta(window, "alice", 100, 7),
          new Delta(bucket, "alice", 0, 4)));
      assertThat(flush(store, batch).applied()).isTrue();
      FlushResult replay = flush(store, batch);
      assertThat(replay.applied()).isFalse();
      assertThat(replay.current(0)).isEqualTo(7);
      // an older sequence is a replay too
      FlushResult older = flush(store, new Batch("n1", 0, 4, NOW_MICROS, List.of(new Delta(window, "alice", 100, 50))));
      assertThat(older.applied()).isFalse();
      assertThat(older.current(0)).isEqualTo(7);
      // another node's sequence is its own
      assertThat(flush(store, new Batch("n2", 0, 1, NOW_MICROS, List.of(new Delta(window, "alice", 100, 1)))).current(0))
          .isEqualTo(8);
    }
  }

  @Test
  void oldWindowsAreDroppedAndCountersExpire() {
    try (RedisCounterStore store = store()) {
      flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(window, "alice", 100, 1))));
      flush(store, new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(window, "alice", 101, 1))));
      flush(store, new Batch("n1", 0, 3, NOW_MICROS, List.of(new Delta(window, "alice", 102, 1))));
      assertThat(redisCli.hkeys("sluice:{api:alice}")).containsExactlyInAnyOrder("101", "102");
      assertThat(redisCli.pttl("sluice:{api:alice}")).isBetween(1L, 121_000L);
      assertThat(redisCli.ttl("sluice:seq:n1:0")).isBetween(1L, 86_400L);
    }
  }

  @Test
  void gcraBacklogGrowsWithPermitsAndDrainsWithTime() {
    // 10 per second: scale 1, interval 100,000 us per permit
    assertThat(bucket.scale()).isEqualTo(1);
    assertThat(bucket.interval()).isEqualTo(100_000);
    try (RedisCounterStore store = store()) {
      FlushResult r = flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(bucket, "k", 0, 30))));
      assertThat(r.current(0)).isEqualTo(3_000_000);
      // 1.5 s later: 1.5 s of backlog drained, 5 more permits added
      r = flush(store, new Batch("n2", 0, 1, NOW_MICROS + 1_500_000, List.of(new Delta(bucket, "k", 0, 5))));
      assertThat(r.current(0)).isEqualTo(3_000_000 - 1_500_000 + 500_000);
      // a node whose clock is behind counts at the newest time seen, not earlier
      r = flush(store, new Batch("n3", 0, 1, NOW_MICROS, List.of(new Delta(bucket, "k", 0, 1))));
      assertThat(r.current(0)).isEqualTo(2_100_000);
      assertThat(redisCli.pttl("sluice:{tb:k}")).isBetween(2_000L, 4_200L);
    }
  }

  /**
   * Several nodes, each on its own connection, flush shared keys from many threads and retry some
   * batches as a reconnect replay would: the store's count is exactly the sum of distinct batches.
   */
  @Test
  void concurrentNodesWithRetriesCountEveryHitExactlyOnce() throws Exception {
    int nodes = 4;
    int batchesPerNode = 300;
    ExecutorService pool = Executors.newFixedThreadPool(nodes);
    List<Future<Long>> sent = new ArrayList<>();
    List<RedisCounterStore> stores = new ArrayList<>();
    try {
      for (int n = 0; n < nodes; n++) {
        RedisCounterStore store = store();
        stores.add(store);
        String node = "node-" + n;
        long seed = n;
        sent.add(pool.submit(() -> {
          SplittableRandom random = new SplittableRandom(seed);
          long total = 0;
          for (long seq = 1; seq <= batchesPerNode; seq++) {
            List<Delta> deltas = new ArrayList<>();
            for (String key : new String[] {"hot", "k" + random.nextInt(5)}) {
              long amount = random.nextLong(1, 20);
              deltas.add(new Delta(window, key, 100, amount));
              total += amount;
            }
            Batch batch = new Batch(node, 0, seq, NOW_MICROS, deltas);
            flush(store, batch);
            if (random.nextInt(4) == 0) {
              assertThat(flush(store, batch).applied()).isFalse(); // a replay
            }
          }
          return total;
        }));
      }
      long expected = 0;
      for (Future<Long> f : sent) {
        expected += f.get(60, TimeUnit.SECONDS);
      }
      long stored = 0;
      for (String key : redisCli.keys("sluice:{api:*")) {
        stored += Long.parseLong(redisCli.hget(key, "100"));
      }
      assertThat(stored).isEqualTo(expected);
    } finally {
      pool.shutdownNow();
      stores.forEach(RedisCounterStore::close);
    }
  }

  @Test
  void scriptsAreReloadedAfterRedisForgetsThem() {
    try (RedisCounterStore store = store()) {
      flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(window, "alice", 100, 1))));
      redisCli.scriptFlush();
      FlushResult r = flush(store, new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(window, "alice", 100, 1))));
      assertThat(r.current(0)).isEqualTo(2);
    }
  }

  @Test
  void hugeBinaryAndUnicodeKeysAreDistinct() {
    String huge = "x".repeat(100_000);
    String loneSurrogate = "a\uD800b";
    String replaced = "a?b"; // what a lossy UTF-8 encoding would turn the lone surrogate into
    String unicode = "用户-🚦-ключ";
    String braces = "a}b{c";
    try (RedisCounterStore store = store()) {
      List<Delta> deltas = List.of(new Delta(window, huge, 100, 1), new Delta(window, loneSurrogate, 100, 2),
          new Delta(window, replaced, 100, 3), new Delta(window, unicode, 100, 4), new Delta(window, braces, 100, 5));
      FlushResult r = flush(store, new Batch("n1", 0, 1, NOW_MICROS, deltas));
      for (int i = 0; i < deltas.size(); i++) {
        assertThat(r.current(i)).isEqualTo(i + 1);
      }
    }
  }

  @Test
  void theRegistryCountsNodesAliveAndForgetsSilentOnes() throws Exception {
    try (RedisCounterStore store = store()) {
      long now = NOW_MICROS / 1000;
      assertThat(store.heartbeat("a", now, Duration.ofSeconds(3)).toCompletableFuture().get()).isEqualTo(1);
      assertThat(store.heartbeat("b", now + 1_000, Duration.ofSeconds(3)).toCompletableFuture().get()).isEqualTo(2);
      assertThat(store.heartbeat("a", now + 2_000, Duration.ofSeconds(3)).toCompletableFuture().get()).isEqualTo(2);
      // b said nothing for more than its 3 s
      assertThat(store.heartbeat("a", now + 4_500, Duration.ofSeconds(3)).toCompletableFuture().get()).isEqualTo(1);
    }
  }

  @Test
  void unreachableOrWrongStoreFailsFastWithAClearError() {
    long start = System.nanoTime();
    assertThatThrownBy(() -> RedisCounterStore.connect(RedisStoreConfig.builder("redis://127.0.0.1:1")
        .connectTimeout(Duration.ofMillis(500)).build()))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("127.0.0.1:1");
    assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(30)); // never a hang
    assertThatThrownBy(() -> RedisStoreConfig.builder("http://localhost")).hasMessageStartingWith("uri:");
    assertThatThrownBy(() -> RedisStoreConfig.builder(redis.uri()).commandTimeout(Duration.ZERO))
        .hasMessageStartingWith("commandTimeout:");
  }

  @Test
  void oversizeBatchesAndBadDeltasAreRejected() {
    try (RedisCounterStore store = RedisCounterStore.connect(RedisStoreConfig.builder(redis.uri()).maxBatchSize(2).build())) {
      List<Delta> three = List.of(new Delta(window, "a", 1, 1), new Delta(window, "b", 1, 1), new Delta(window, "c", 1, 1));
      assertThatThrownBy(() -> store.flush(new Batch("n1", 0, 1, NOW_MICROS, three))).hasMessageStartingWith("batch:");
    }
    assertThatThrownBy(() -> new Delta(window, "", 1, 1)).hasMessageStartingWith("key:");
    assertThatThrownBy(() -> new Delta(window, "k", 1, -1)).hasMessageStartingWith("amount:");
    assertThatThrownBy(() -> new Batch("n1", 0, 1, NOW_MICROS, List.of())).hasMessageStartingWith("deltas:");
    assertThatThrownBy(() -> Counter.of(Limit.slidingWindowLog("log").limit(5).window(Duration.ofSeconds(1)).build()))
        .hasMessageStartingWith("algorithm:");
    assertThatThrownBy(() -> Counter.of(Limit.tokenBucket("t").capacity(5).refill(1, Duration.ofNanos(1_500)).build()))
        .hasMessageStartingWith("refill.period:");
  }

}
