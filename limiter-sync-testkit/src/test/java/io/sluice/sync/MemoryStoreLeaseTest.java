package io.sluice.sync;

import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.testkit.LeaseStoreContract;
import io.sluice.sync.sim.MemoryStore;

/** The in-memory double keeps the lease script's contract (reservation mode). */
class MemoryStoreLeaseTest extends LeaseStoreContract {
  private final MemoryStore store = new MemoryStore();

  @Override
  protected CounterStore newStore(int n) {
    return store;
  }

  @Override
  protected long counterTtlMillis(String limitName, String key) {
    return store.ttlMillis(limitName, key);
  }
}
