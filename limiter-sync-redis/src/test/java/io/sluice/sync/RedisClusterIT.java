package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.sluice.node.Limit;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Redis store on a real three-master Redis Cluster: batches are grouped by hash slot, each
 * node's sequence key lands in its batch's slot, and the synchronized burst of
 * {@link SyncedLimiterBurstCheck} counts every permit exactly once across shards.
 */
class RedisClusterIT extends SyncedLimiterBurstCheck {
  private static RedisClusterServers servers;
  private static RedisClusterClient admin;
  private static StatefulRedisClusterConnection<String, String> adminConnection;

  @BeforeAll
  static void startCluster() throws Exception {
    servers = RedisClusterServers.start();
    admin = RedisClusterClient.create(servers.uri());
    adminConnection = admin.connect();
  }

  @AfterAll
  static void stopCluster() {
    if (adminConnection != null) {
      adminConnection.close();
      admin.shutdown();
    }
    if (servers != null) {
      servers.close();
    }
  }

  private static RedisCounterStore store() {
    return RedisCounterStore.connect(RedisStoreConfig.builder(servers.uri()).cluster(true).build());
  }

  @Override
  CounterStore nodeStore(int n) {
    return store();
  }

  @Override
  Long storedCount(String limitName, String key, long window) {
    String stored = adminConnection.sync().hget(RedisFixture.counterKey(limitName, key), Long.toString(window));
    return stored == null ? null : Long.parseLong(stored);
  }

  /** Batches are grouped by hash slot: cold keys in different slots each take their own claim call. */
  @Override
  boolean keysShareStoreCalls() {
    return false;
  }

  @Test
  void keysSpreadOverSlotsAndEachGroupFlushesOnItsShard() throws Exception {
    Counter counter = Counter.of(Limit.fixedWindow("spread").limit(1_000).window(Duration.ofMinutes(1)).build());
    try (RedisCounterStore store = store()) {
      Set<Integer> groups = new HashSet<>();
      for (int k = 0; k < 20; k++) {
        String key = "user-" + k;
        int group = store.group(counter, key);
        groups.add(group);
        // the hash tag: <length of the limit name>:<limit>:<key>
        assertThat(group).isEqualTo(SlotHash.getSlot(("6:spread:" + key).getBytes(StandardCharsets.UTF_8)));
        FlushResult r = store.flush(new Batch("n1", group, 1, 0, List.of(new Delta(counter, key, 7, k + 1))))
            .toCompletableFuture().get(5, TimeUnit.SECONDS);
        assertThat(r.current(0)).isEqualTo(k + 1);
        // the sequence key sits in the batch's slot: a replay is recognised on that shard
        FlushResult replay = store.flush(new Batch("n1", group, 1, 0, List.of(new Delta(counter, key, 7, 50))))
            .toCompletableFuture().get(5, TimeUnit.SECONDS);
        assertThat(replay.applied()).isFalse();
        assertThat(replay.current(0)).isEqualTo(k + 1);
      }
      assertThat(groups.size()).isGreaterThan(10); // spread, not one slot
    }
  }

  /**
   * A sync over keys in many slots sends every slot's batch before it waits for any answer (one round
   * trip per wave, not per slot): every permit reaches the cluster once; the time is printed beside
   * one batch's round trip (what each slot cost when they went one after the other).
   */
  @Test
  void aSyncOverManySlotsSendsThemTogether() throws Exception {
    Limit limit = Limit.fixedWindow("waves").limit(1_000).window(Duration.ofHours(1)).build();
    io.sluice.node.ManualTicker ticker = new io.sluice.node.ManualTicker();
    try (RedisCounterStore store = store()) {
      SyncedLimiter node = SyncedLimiter.builder(limit, store).ticker(ticker).autoSync(false).build();
      int keys = 1_000;
      int admitted = 0;
      // rounds over every key, a request each: a key's demand earns it a claim ahead, so that its
      // later permits wait for a sync
      for (int round = 0; round < 4; round++) {
        for (int k = 0; k < keys; k++) {
          admitted += node.tryAcquire("user-" + k) ? 1 : 0;
        }
        ticker.advance(Duration.ofMillis(20));
      }
      long callsBefore = node.storeCalls();
      long start = System.nanoTime();
      node.close(); // flushes every key's permits not sent yet
      long syncMicros = (System.nanoTime() - start) / 1_000;
      long batches = node.storeCalls() - callsBefore;
      assertThat(batches).as("batches of the closing sync").isGreaterThanOrEqualTo(keys);
      long one = System.nanoTime();
      store.flush(new Batch("probe", store.group(Counter.of(limit), "probe"), 1, 0,
          List.of(new Delta(Counter.of(limit), "probe", 0, 0)))).toCompletableFuture().get(5, TimeUnit.SECONDS);
      long oneMicros = (System.nanoTime() - one) / 1_000;
      System.out.printf("RedisClusterIT: the closing sync of %d keys in %d batches took %d us; one batch's round"
          + " trip %d us%n", keys, batches, syncMicros, oneMicros);
      long window = Math.floorDiv(ticker.read(), limit.periodNanos());
      long counted = 0;
      for (int k = 0; k < keys; k++) {
        Long c = storedCount("waves", "user-" + k, window);
        counted += c == null ? 0 : c;
      }
      assertThat(counted).as("every admission counted once").isEqualTo(admitted);
    }
  }
}
