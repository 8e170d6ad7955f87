package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.testkit.CounterStoreContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link StoreLossTest} against the real stores: a real redis-server emptied with {@code FLUSHALL} (what
 * a restart without persistence leaves, but for the scripts; the chaos suite restarts the process), and
 * a real Hazelcast cluster whose maps are cleared (a cluster started again). Three nodes, each with a
 * store connection of its own, on a one-hour window: after the loss every node finds its sequence gone
 * in its next flush's answer and sends again what it had admitted, so the store counts every admitted
 * permit exactly once.
 */
class StoreLossIT {
  private static final Duration HOUR = Duration.ofHours(1);
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();
  @RegisterExtension
  static final HazelcastFixture hazelcast = new HazelcastFixture("store-loss");

  @ParameterizedTest
  @ValueSource(strings = {"redis", "hazelcast"})
  void everyAdmittedPermitIsCountedOnceAfterTheStoreLosesItsData(String storeName) {
    Limit limit = Limit.fixedWindow("loss-" + UUID.randomUUID().toString().substring(0, 8)).limit(1_000_000_000L)
        .window(HOUR).build();
    Counter counter = Counter.of(limit);
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos() + Duration.ofMinutes(1).toNanos());
    List<CounterStore> stores = new ArrayList<>();
    List<SyncedLimiter> nodes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      CounterStore store = storeName.equals("redis") ? redis.newStore() : hazelcast.store(i);
      stores.add(store);
      nodes.add(SyncedLimiter.builder(limit, store).nodeId("n" + i).ticker(ticker).autoSync(false)
          .activeNodes(() -> 3).build());
    }
    try {
      Map<String, Long> admitted = new HashMap<>();
      SplittableRandom random = new SplittableRandom(3);
      drive(nodes, ticker, random, admitted, 1_500);
      nodes.forEach(SyncedLimiter::flushAll);
      if (storeName.equals("redis")) {
        redis.cli().flushall();
      } else {
        hazelcast.counters().clear();
        hazelcast.instance(0).getMap(hazelcast.settings().mapPrefix() + ".sequences").clear();
      }
      drive(nodes, ticker, random, admitted, 1_500);
      for (int round = 0; round < 3; round++) {
        ticker.advance(Duration.ofMillis(100));
        nodes.forEach(SyncedLimiter::syncNow);
        nodes.forEach(SyncedLimiter::flushAll);
      }
      long window = Math.floorDiv(ticker.read(), HOUR.toNanos());
      for (Map.Entry<String, Long> e : admitted.entrySet()) {
        assertThat(CounterStoreContract.readWindow(stores.get(0), counter, e.getKey(), window))
            .as("%s, key %s", storeName, e.getKey()).isEqualTo(e.getValue());
      }
      assertThat(nodes.stream().mapToLong(SyncedLimiter::storeDataLosses).sum()).as("nodes that saw the loss")
          .isEqualTo(nodes.size());
    } finally {
      nodes.forEach(SyncedLimiter::close);
      stores.forEach(CounterStore::close);
    }
  }

  /**
   * Lettuce replays a command that was on the wire when the connection broke, once it reconnects: after
   * a restart the first batch the empty Redis runs may be such a replay, whose answer nobody reads, and
   * the node's own retry of it is then refused as a replay. The loss must show in that retry's answer.
   */
  @Test
  void aLossMaskedByAReplayedBatchStillShows() {
    Limit limit = Limit.fixedWindow("replay-" + UUID.randomUUID().toString().substring(0, 8)).limit(100)
        .window(HOUR).build();
    Counter counter = Counter.of(limit);
    try (RedisCounterStore node = redis.newStore(); RedisCounterStore wire = redis.newStore()) {
      long w = 490_000;
      Batch first = new Batch("n", 0, 1, 0, List.of(new Delta(counter, "k", w, 2)));
      Batch second = new Batch("n", 0, 2, 0, List.of(new Delta(counter, "k", w, 3)));
      assertThat(node.flush(first).toCompletableFuture().join().storeForgot()).isFalse();
      assertThat(node.flush(second).toCompletableFuture().join().storeForgot()).isFalse();
      redis.cli().flushall();
      Batch third = new Batch("n", 0, 3, 0, List.of(new Delta(counter, "k", w, 4)));
      // the replay, run on a connection whose answers this node's store never sees
      assertThat(wire.flush(third).toCompletableFuture().join().applied()).isTrue();
      FlushResult retry = node.flush(third).toCompletableFuture().join();
      assertThat(retry.applied()).as("the retry of a batch the replay applied").isFalse();
      assertThat(retry.storeForgot()).as("the loss, seen through the replay").isTrue();
      assertThat(retry.current(0)).isEqualTo(4);
      Batch fourth = new Batch("n", 0, 4, 0, List.of(new Delta(counter, "k", w, 1)));
      assertThat(node.flush(fourth).toCompletableFuture().join().storeForgot()).as("told once").isFalse();
    }
  }

  private static void drive(List<SyncedLimiter> nodes, ManualTicker ticker, SplittableRandom random,
      Map<String, Long> admitted, int decisions) {
    for (int i = 0; i < decisions; i++) {
      ticker.advance(Duration.ofMillis(1 + random.nextInt(5)));
      String key = random.nextInt(3) == 0 ? "hot" : "k" + random.nextInt(200);
      long cost = 1 + random.nextInt(3);
      if (nodes.get(random.nextInt(nodes.size())).tryAcquire(key, cost)) {
        admitted.merge(key, cost, Long::sum);
      }
      if (i % 10 == 9) {
        nodes.get(random.nextInt(nodes.size())).syncNow();
      }
    }
  }
}
