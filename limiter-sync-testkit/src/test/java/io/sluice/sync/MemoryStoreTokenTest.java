package io.sluice.sync;

import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.TokenStore;
import io.sluice.sync.sim.MemoryStore;
import io.sluice.sync.testkit.TokenStoreContract;

/** The in-memory double keeps the token claims' contract (the Java processor against the model). */
class MemoryStoreTokenTest extends TokenStoreContract {
  private final MemoryStore store = new MemoryStore();

  @Override
  protected TokenStore tokens(int n) {
    return store;
  }

  @Override
  protected ExactStore exact(int n) {
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
}
