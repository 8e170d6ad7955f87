package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Limit;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.StoreUnavailableException;
import io.sluice.sync.testkit.CounterStoreContract;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The flush script and the Redis store against a real redis-server: the store contract
 * ({@link CounterStoreContract}), then what only Redis has (key layout and TTLs, script reloads,
 * connection errors).
 */
class RedisCounterStoreIT extends CounterStoreContract {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();

  @BeforeEach
  void empty() {
    redis.cli().flushall();
  }

  private RedisCounterStore store() {
    return RedisCounterStore.connect(RedisStoreConfig.builder(redis.uri()).build());
  }

  /** Every node has its own connection. */
  @Override
  protected CounterStore store(int node) {
    return store();
  }

  @Override
  protected long counterTtlMillis(String limitName, String key) {
    return redis.cli().pttl(RedisFixture.counterKey(limitName, key));
  }

  @Test
  void keysAreHashesOfTheirLiveWindowsAndSequencesExpireInADay() {
    try (RedisCounterStore store = store()) {
      for (long w = 100; w <= 103; w++) {
        flush(store, new Batch("n1", 0, w - 99, NOW_MICROS, List.of(new Delta(window, "alice", w, 1))));
      }
      // (a sliding window keeps the window before the previous one too: see aSlidingWindowKeepsTheWindowBeforeThePrevious)
      String alice = RedisFixture.counterKey("api", "alice");
      assertThat(alice).isEqualTo("sluice:{3:api:alice}");
      // older windows are dropped at every fourth window written ('h': the window they were last
      // dropped in, or the key's first, and the windows written since), so that a key written window
      // after window costs no HKEYS at each one
      // ('P': the window after which the key's TTL reaches, see everyNinthWindowSetsTheTtl)
      assertThat(redis.cli().hkeys(alice)).containsExactlyInAnyOrder("100", "101", "102", "103", "h", "P");
      flush(store, new Batch("n1", 0, 5, NOW_MICROS, List.of(new Delta(window, "alice", 104, 1))));
      assertThat(redis.cli().hkeys(alice)).containsExactlyInAnyOrder("102", "103", "104", "h", "P");
      assertThat(redis.cli().hget(alice, "h")).isEqualTo("104:0");
      assertThat(redis.cli().pttl(alice)).isBetween(1L, 121_000L);
      assertThat(redis.cli().ttl("sluice:seq:n1:0")).isBetween(1L, 86_400L);
    }
  }

  /**
   * A flush reads each key once and writes it once (a fixed window's previous count never weighs, so
   * it is not read), and the fields of a window's claims go with the window.
   */
  @Test
  void aFlushReadsAndWritesEachKeyOnceAndClaimsGoWithTheirWindow() {
    Counter fixed = Counter.of(Limit.fixedWindow("fw").limit(1_000).window(Duration.ofMinutes(1)).build());
    try (RedisCounterStore store = store()) {
      flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(fixed, "alice", 100, 4).claiming(50, 2))));
      flush(store, new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(fixed, "alice", 101, 2).claiming(50, 2))));
      redis.cli().configResetstat();
      FlushResult r = flush(store, new Batch("n1", 0, 3, NOW_MICROS, List.of(new Delta(fixed, "alice", 101, 3).claiming(50, 2))));
      assertThat(r.current(0)).isEqualTo(5);
      assertThat(r.previous(0)).isZero();
      assertThat(r.claim(0)).isEqualTo(50);
      String stats = redis.cli().info("commandstats");
      assertThat(stats).contains("cmdstat_hmget:calls=1,").contains("cmdstat_hset:calls=1,")
          .contains("cmdstat_set:calls=1,").doesNotContain("cmdstat_hget:").doesNotContain("cmdstat_hincrby:");
      String alice = RedisFixture.counterKey("fw", "alice");
      assertThat(redis.cli().hgetall(alice)).containsOnlyKeys("100", "c100:n1", "C100", "101", "c101:n1", "C101", "h", "P");
      // a window's first write: one PEXPIRE more (windows of a minute: 'P' reaches no further than the
      // window after), no HKEYS or PTTL until the fourth window written after the last drop
      redis.cli().configResetstat();
      flush(store, new Batch("n1", 0, 4, NOW_MICROS, List.of(new Delta(fixed, "alice", 102, 1))));
      assertThat(redis.cli().info("commandstats")).contains("cmdstat_pexpire:calls=1,").doesNotContain("cmdstat_hkeys:")
          .doesNotContain("cmdstat_pttl:");
      flush(store, new Batch("n1", 0, 5, NOW_MICROS, List.of(new Delta(fixed, "alice", 103, 1))));
      flush(store, new Batch("n1", 0, 6, NOW_MICROS, List.of(new Delta(fixed, "alice", 104, 1))));
      assertThat(redis.cli().hgetall(alice)).containsOnlyKeys("103", "104", "h", "P");
    }
  }

  /**
   * A limit whose window changes under its name (1 s, then 1 h) sets its key's TTL for the new window:
   * the 'P' left by the 1-second windows, millions of windows past any 1-hour window, says nothing
   * about them (trusted, it kept the key's TTL at seconds while a window of an hour counted in it).
   */
  @Test
  void aWindowThatChangesUnderItsNameSetsTheKeysTtlForTheNewWindow() {
    Counter second = Counter.of(Limit.fixedWindow("re").limit(1_000).window(Duration.ofSeconds(1)).build());
    Counter hour = Counter.of(Limit.fixedWindow("re").limit(1_000).window(Duration.ofHours(1)).build());
    String key = RedisFixture.counterKey("re", "k");
    try (RedisCounterStore store = store()) {
      long s = NOW_MICROS / 1_000_000;
      flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(second, "k", s, 1).claiming(10, 1)
          .claimingAhead(8, 3))));
      assertThat(redis.cli().pttl(key)).isLessThan(60_000L);
      flush(store, new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(hour, "k", NOW_MICROS / 3_600_000_000L, 1))));
      assertThat(redis.cli().pttl(key)).as("through the hour window and the next").isGreaterThan(3_600_000L);
    }
  }

  /**
   * A key written now and then drops its older windows at every fourth window written, not at every
   * write once four windows have passed (an HKEYS and an HDEL per write of a cold key).
   */
  @Test
  void aKeyWrittenNowAndThenDropsOlderWindowsAtEveryFourthWindowWritten() {
    Counter fixed = Counter.of(Limit.fixedWindow("fw").limit(1_000).window(Duration.ofMinutes(1)).build());
    String key = RedisFixture.counterKey("fw", "cold");
    try (RedisCounterStore store = store()) {
      redis.cli().configResetstat();
      for (long w = 100; w <= 130; w += 10) {
        flush(store, new Batch("n1", 0, w, NOW_MICROS, List.of(new Delta(fixed, "cold", w, 1))));
      }
      assertThat(redis.cli().info("commandstats")).doesNotContain("cmdstat_hkeys:").doesNotContain("cmdstat_hdel:");
      assertThat(redis.cli().hget(key, "h")).isEqualTo("100:3");
      flush(store, new Batch("n1", 0, 140, NOW_MICROS, List.of(new Delta(fixed, "cold", 140, 1))));
      assertThat(redis.cli().info("commandstats")).contains("cmdstat_hkeys:calls=1,");
      assertThat(redis.cli().hgetall(key)).containsOnlyKeys("140", "h", "P");
    }
  }

  /**
   * A key written window after window sets its TTL every ninth window (short windows: its TTL then
   * reaches eight windows further than it must, 'P' saying how far), and a claim ahead in the same call
   * as the claim it goes with costs no command of its own: one read, one write.
   */
  @Test
  void everyNinthWindowSetsTheTtlAndClaimsAheadRideOnTheKeysWrite() {
    Counter second = Counter.of(Limit.fixedWindow("fs").limit(1_000).window(Duration.ofSeconds(1)).build());
    String key = RedisFixture.counterKey("fs", "k");
    try (RedisCounterStore store = store()) {
      redis.cli().configResetstat();
      for (long w = 100; w < 110; w++) {
        flush(store, new Batch("n1", 0, w, (w * 1_000_000) + 10, List.of(new Delta(second, "k", w, 1))));
        assertThat(redis.cli().pttl(key)).as("window %d", w).isGreaterThan(4_000L);
      }
      assertThat(redis.cli().info("commandstats")).contains("cmdstat_pexpire:calls=2,");
      assertThat(redis.cli().hget(key, "P")).isEqualTo("117");
      // a claim ahead of 8 windows: the TTL reaches past the last of them, in the same read and write
      redis.cli().configResetstat();
      FlushResult r = flush(store, new Batch("n1", 0, 200, 110_000_010L,
          List.of(new Delta(second, "k", 110, 1).claiming(10, 1).claimingAhead(8, 3))));
      assertThat(r.ahead(0)).isEqualTo(3);
      assertThat(redis.cli().info("commandstats")).contains("cmdstat_hmget:calls=1,").contains("cmdstat_hset:calls=1,")
          .contains("cmdstat_pexpire:calls=1,").doesNotContain("cmdstat_pttl:");
      assertThat(redis.cli().hget(key, "c118:n1")).isEqualTo("3");
      assertThat(redis.cli().hget(key, "P")).isEqualTo("126");
      assertThat(redis.cli().pttl(key)).isGreaterThan(10_000L);
    }
  }

  /**
   * A server that may evict Sluice's keys is refused at connect, naming the policy (every Sluice key
   * has a TTL, so volatile-* policies count too), unless asked to warn; with memory not capped yet it
   * is only a warning.
   */
  @Test
  void aServerThatMayEvictKeysIsRefusedUnlessAskedToWarn() {
    try {
      redis.cli().configSet("maxmemory-policy", "allkeys-lru");
      redis.cli().configSet("maxmemory", "512mb");
      assertThatThrownBy(() -> store()).isInstanceOf(IllegalStateException.class)
          .hasMessageStartingWith("evictionCheck: Redis at").hasMessageContaining("maxmemory-policy allkeys-lru");
      redis.cli().configSet("maxmemory-policy", "volatile-ttl");
      assertThatThrownBy(() -> store()).hasMessageContaining("maxmemory-policy volatile-ttl");
      try (RedisCounterStore warned = RedisCounterStore.connect(RedisStoreConfig.builder(redis.uri())
          .evictionCheck(RedisStoreConfig.EvictionCheck.WARN).build())) {
        assertThat(flush(warned, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(window, "ev", 100, 1)))).current(0))
            .isEqualTo(1);
      }
      redis.cli().configSet("maxmemory", "0"); // not capped: a warning only
      store().close();
    } finally {
      redis.cli().configSet("maxmemory", "0");
      redis.cli().configSet("maxmemory-policy", "noeviction");
    }
  }

  /** Redis refusing script calls for want of memory (noeviction, maxmemory reached): counted by the store. */
  @Test
  void scriptCallsRefusedForWantOfMemoryAreCounted() {
    try (RedisCounterStore store = store()) {
      redis.cli().configSet("maxmemory", "1"); // every write is over it
      assertThatThrownBy(() -> flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(window, "oom", 100, 1)))))
          .hasMessageContaining("OOM");
      assertThat(store.outOfMemoryErrors()).isEqualTo(1);
    } finally {
      redis.cli().configSet("maxmemory", "0");
    }
  }

  @Test
  void scriptsAreReloadedAfterRedisForgetsThem() {
    try (RedisCounterStore store = store()) {
      flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(window, "alice", 100, 1))));
      redis.cli().scriptFlush();
      FlushResult r = flush(store, new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(window, "alice", 100, 1))));
      assertThat(r.current(0)).isEqualTo(2);
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

  /**
   * A server that comes up while a node connects (several processes starting at once) is reached: the
   * attempts are retried for up to the connect timeout, and the handshake has the connect timeout too.
   */
  @Test
  void connectingRetriesUntilTheServerIsUpWithinTheConnectTimeout() throws Exception {
    int port = RedisServer.freePort();
    java.util.concurrent.CompletableFuture<RedisCounterStore> connecting = java.util.concurrent.CompletableFuture.supplyAsync(
        () -> RedisCounterStore.connect(RedisStoreConfig.builder("redis://127.0.0.1:" + port)
            .connectTimeout(Duration.ofSeconds(20)).build()));
    Thread.sleep(700);
    assertThat(connecting).as("still trying while nothing listens").isNotDone();
    try (RedisServer late = RedisServer.start(port);
        RedisCounterStore store = connecting.get(30, TimeUnit.SECONDS)) {
      assertThat(flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(window, "late", 100, 2)))).current(0))
          .isEqualTo(2);
    }
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
