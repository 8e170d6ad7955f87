package io.sluice.sync;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.state.CounterEntry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The synchronized burst ({@link SyncedLimiterBurstCheck}) on the embedded default, in approximate and
 * exact mode: the nodes' stores work through two members and two clients of one Hazelcast cluster in
 * this JVM (exactly once, though Hazelcast applies a batch key by key).
 */
class HazelcastSyncedLimiterIT extends SyncedLimiterBurstCheck {
  @RegisterExtension
  static final HazelcastFixture hazelcast = new HazelcastFixture("limiter-it");

  @Override
  CounterStore nodeStore(int n) throws Exception {
    // node n works through member n or a client (see HazelcastFixture); these stores leave them running
    CounterStore store = hazelcast.store(n);
    // a first call loads classes and creates partition containers, hundreds of ms on a small
    // machine (the Redis store does its first calls when it connects, loading the scripts)
    Counter warmUp = Counter.of(Limit.fixedWindow("warm-up").limit(1).window(Duration.ofMinutes(1)).build());
    store.flush(new Batch("warm-up-" + n, 0, 1, 0, List.of(new Delta(warmUp, "k" + n, 0, 1))))
        .toCompletableFuture().get(30, TimeUnit.SECONDS);
    return store;
  }

  @Override
  Long storedCount(String limitName, String key, long window) {
    // read straight from the map, through a member
    CounterEntry entry = hazelcast.counter(limitName, key);
    return entry == null ? null : entry.count(window);
  }
}
