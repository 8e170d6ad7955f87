package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import com.hazelcast.map.IMap;
import io.sluice.node.Limit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The synchronized burst ({@link SyncedLimiterBurstCheck}) on the embedded default: the nodes' stores
 * are members of a two-member Hazelcast cluster in this JVM (exactly once, though Hazelcast applies a
 * batch key by key).
 */
class HazelcastSyncedLimiterIT extends SyncedLimiterBurstCheck {
  private static final HazelcastCounterStore.Settings SETTINGS = HazelcastCounterStore.Settings.builder()
      .clusterName("sluice-limiter-it-" + UUID.randomUUID()).build();
  private static final List<HazelcastCounterStore> MEMBERS = new ArrayList<>();

  @BeforeAll
  static void startCluster() {
    MEMBERS.add(HazelcastCounterStore.embedded(SETTINGS));
    MEMBERS.add(HazelcastCounterStore.embedded(SETTINGS));
    assertThat(MEMBERS.get(0).instance().getCluster().getMembers()).hasSize(2);
  }

  @AfterAll
  static void stopCluster() {
    MEMBERS.forEach(HazelcastCounterStore::close);
    MEMBERS.clear();
  }

  @Override
  CounterStore nodeStore(int n) throws Exception {
    // node n works through member n % 2; these stores leave the members running when closed
    CounterStore store = HazelcastCounterStore.of(MEMBERS.get(n % 2).instance(), SETTINGS);
    // a first call loads classes and creates partition containers, hundreds of ms on a small
    // machine (the Redis store does its first calls when it connects, loading the scripts)
    Counter warmUp = Counter.of(Limit.fixedWindow("warm-up").limit(1).window(Duration.ofMinutes(1)).build());
    store.flush(new Batch("warm-up-" + n, 0, 1, 0, List.of(new Delta(warmUp, "k" + n, 0, 1))))
        .toCompletableFuture().get(30, TimeUnit.SECONDS);
    return store;
  }

  @Override
  Long storedCount(String limitName, String key, long window) {
    // read straight from the map, through the other member than most writes
    IMap<byte[], CounterEntry> counters = MEMBERS.get(1).instance().getMap(SETTINGS.mapPrefix() + ".counters");
    CounterEntry entry = counters.get(StoreKeys.counterKey(SETTINGS.mapPrefix(), limitName, key));
    return entry == null ? null : entry.count(window);
  }
}
