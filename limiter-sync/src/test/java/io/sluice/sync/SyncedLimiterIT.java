package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The distributed limiter against a real redis-server: the synchronized burst of
 * {@link SyncedLimiterBurstCheck} in approximate mode, and exact mode (batch size 1).
 */
class SyncedLimiterIT extends SyncedLimiterBurstCheck {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();

  @Override
  CounterStore nodeStore(int n) {
    return redis.newStore();
  }

  @Override
  Long storedCount(String limitName, String key, long window) {
    String stored = redis.cli().hget("sluice:{" + limitName + ":" + key + "}", Long.toString(window));
    return stored == null ? null : Long.parseLong(stored);
  }

  /** Batch size 1: every decision is one script call, so the nodes together never pass the limit. */
  @Test
  void exactModeNeverOverAdmits() throws Exception {
    Limit limit = Limit.slidingWindowCounter("exact").limit(500).window(Duration.ofMinutes(1)).build();
    ManualTicker ticker = new ManualTicker();
    LongAdder admitted = new LongAdder();
    List<SyncedLimiter> nodes = new ArrayList<>();
    List<RedisCounterStore> stores = new ArrayList<>();
    for (int n = 0; n < NODES; n++) {
      RedisCounterStore store = redis.newStore();
      stores.add(store);
      nodes.add(SyncedLimiter.builder(limit, store).nodeId("exact-" + n).ticker(ticker).batchSize(1).build());
    }
    hammer(nodes, THREADS_PER_NODE, 300, "hot", admitted);
    long storeCalls = nodes.stream().mapToLong(SyncedLimiter::storeCalls).sum();
    nodes.forEach(SyncedLimiter::close);
    stores.forEach(RedisCounterStore::close);
    assertThat(admitted.sum()).isEqualTo(limit.capacity());
    assertThat(storeCalls).isGreaterThanOrEqualTo((long) NODES * THREADS_PER_NODE * 300);
    long window = Math.floorDiv(ticker.read(), limit.periodNanos());
    assertThat(storedCount("exact", "hot", window)).isEqualTo(limit.capacity());
  }
}
