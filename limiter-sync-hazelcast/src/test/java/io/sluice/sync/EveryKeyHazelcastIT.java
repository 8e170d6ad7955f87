package io.sluice.sync;

import io.sluice.sync.spi.CounterStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link EveryKeyScenarios} as a user runs them: the README's defaults, the wall clock, each node with
 * its own flusher thread and store on a real Hazelcast cluster (members and clients).
 */
class EveryKeyHazelcastIT extends EveryKeyScenarios.WallClock {
  @RegisterExtension
  static final HazelcastFixture hazelcast = new HazelcastFixture("every-key");

  @Override
  CounterStore store(int n) {
    return hazelcast.store(n);
  }
}
