package io.sluice.sync;

import io.sluice.sync.hazelcast.HazelcastCounterStore;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.TokenStore;
import io.sluice.sync.testkit.TokenStoreContract;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Token claims on a real Hazelcast cluster: the token claims' contract ({@link TokenStoreContract}, the
 * same vectors and traces as {@code token_claim.lua}), with the nodes on two members and two clients of
 * one cluster, so the processor runs on each key's owner, sent from members and through the client
 * protocol, with backups on the other member.
 */
class HazelcastTokenIT extends TokenStoreContract {
  @RegisterExtension
  static final HazelcastFixture hazelcast = new HazelcastFixture("token-it");
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
  protected TokenStore tokens(int n) {
    return stores.get(n);
  }

  @Override
  protected ExactStore exact(int n) {
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
}
