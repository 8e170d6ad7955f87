package io.sluice.sync;

import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.testkit.ExactStoreContract;
import io.sluice.sync.sim.MemoryStore;

/** The in-memory double keeps the exact scripts' contract (traces against the reference models, bad input). */
class MemoryStoreExactTest extends ExactStoreContract {
  private final MemoryStore store = new MemoryStore();

  @Override
  protected ExactStore node(int n) {
    return store;
  }

  @Override
  protected long ttlMillis(String limitName, String key) {
    return store.ttlMillis(limitName, key);
  }

  @Override
  protected boolean exists(String limitName, String key) {
    return store.exists(limitName, key);
  }

  @Override
  protected long logSize(String limitName, String key) {
    return store.logSize(limitName, key);
  }
}
