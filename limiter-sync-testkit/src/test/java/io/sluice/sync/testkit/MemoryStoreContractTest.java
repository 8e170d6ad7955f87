package io.sluice.sync.testkit;

import io.sluice.sync.sim.MemoryStore;
import io.sluice.sync.spi.CounterStore;
import org.junit.jupiter.api.BeforeEach;

/**
 * The in-memory double keeps the store contract the real stores keep (the same updates run in
 * Hazelcast's entry processors, and the Lua scripts they mirror, pass it in their modules' ITs):
 * what the limiter's unit tests learn on it holds on Redis and Hazelcast.
 */
class MemoryStoreContractTest extends CounterStoreContract {
  private MemoryStore store;

  @BeforeEach
  void emptyStore() {
    store = new MemoryStore();
  }

  @Override
  protected CounterStore store(int node) {
    return store; // one store that every "node" reaches, as a server that every connection reaches
  }

  @Override
  protected long counterTtlMillis(String limitName, String key) {
    return store.ttlMillis(limitName, key);
  }
}
