package io.sluice.sync;

import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.testkit.LeaseStoreContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Reservation mode on a real Hazelcast cluster: the lease contract ({@link LeaseStoreContract}), the
 * same grant rules as {@code lease.lua}, with nodes on two members and two clients of one cluster.
 */
class HazelcastLeaseIT extends LeaseStoreContract {
  @RegisterExtension
  static final HazelcastFixture hazelcast = new HazelcastFixture("lease-it");

  @Override
  protected CounterStore newStore(int n) {
    return hazelcast.store(n);
  }

  @Override
  protected long counterTtlMillis(String limitName, String key) {
    return hazelcast.ttlMillis(limitName, key);
  }
}
