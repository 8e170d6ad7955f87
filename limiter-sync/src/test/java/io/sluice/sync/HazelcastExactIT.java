package io.sluice.sync;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
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
  ExactStore node(int n) {
    return stores.get(n);
  }

  @Override
  long ttlMillis(String limitName, String key) {
    return hazelcast.ttlMillis(limitName, key);
  }

  @Override
  boolean exists(String limitName, String key) {
    return hazelcast.counter(limitName, key) != null;
  }

  @Override
  long logSize(String limitName, String key) {
    CounterEntry entry = hazelcast.counter(limitName, key);
    return entry == null ? 0 : entry.log().size();
  }
}
