package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.sync.hazelcast.HazelcastCounterStore;
import io.sluice.sync.spi.ExactResult;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.state.CounterEntry;
import io.sluice.sync.testkit.ExactStoreContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The exact mode (batch size 1) on a real Hazelcast cluster: the exact store contract
 * ({@link ExactStoreContract}), the same traces against the same models as the Redis scripts, with the
 * nodes on two members and two clients of one cluster (so the entry processors run on the owner of
 * each key, sent from members and through the client protocol, with backups on the other member).
 */
class HazelcastExactIT extends ExactStoreContract {
  @RegisterExtension
  static final HazelcastFixture hazelcast = new HazelcastFixture("exact-it");
  private static final List<HazelcastCounterStore> stores = new ArrayList<>();

  @BeforeAll
  static void open() {
    for (int n = 0; n < NODES; n++) {
      stores.add(hazelcast.store(n));
    }
  }

  @AfterAll
  static void close() {
    stores.forEach(HazelcastCounterStore::close);
    stores.clear();
  }

  @Override
  protected ExactStore node(int n) {
    return stores.get(n);
  }

  @Override
  protected long ttlMillis(String limitName, String key) {
    return hazelcast.ttlMillis(limitName, key);
  }

  @Override
  protected boolean exists(String limitName, String key) {
    return hazelcast.counter(limitName, key) != null;
  }

  @Override
  protected long logSize(String limitName, String key) {
    CounterEntry entry = hazelcast.counter(limitName, key);
    return entry == null ? 0 : entry.log().size();
  }

  /**
   * A continuation may call the store again (its answer never completes on a Hazelcast partition
   * thread, which may not call another member), and a store closed over a running member still answers
   * (on the caller's thread), as its flushes do.
   */
  @Test
  void continuationsCallAgainAndAClosedStoreStillAnswers() throws Exception {
    Limit limit = Limit.fixedWindow("chained").limit(100).window(Duration.ofMinutes(1)).build();
    HazelcastCounterStore store = hazelcast.store(0);
    for (int k = 0; k < 20; k++) { // keys on both members
      String next = "k" + (k + 1);
      ExactResult second = store.acquire(limit, "k" + k, 1, EPOCH_2026_MICROS)
          .thenCompose(first -> store.acquire(limit, next, 1, EPOCH_2026_MICROS))
          .toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertThat(second.allowed()).isTrue();
    }
    store.close();
    assertThat(acquire(store, limit, "after-close", 3, EPOCH_2026_MICROS).remaining()).isEqualTo(97);
    assertThat(hazelcast.instance(0).getLifecycleService().isRunning()).isTrue();
  }
}
