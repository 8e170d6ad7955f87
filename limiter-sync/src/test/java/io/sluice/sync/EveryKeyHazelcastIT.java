package io.sluice.sync;

import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link EveryKeyScenarios} as a user runs them: the README's defaults, the wall clock, each node with
 * its own flusher thread and store on a real Hazelcast cluster (members and clients).
 */
class EveryKeyHazelcastIT extends EveryKeyScenarios {
  @RegisterExtension
  static final HazelcastFixture hazelcast = new HazelcastFixture("every-key");

  @Override
  CounterStore store(int n) {
    return hazelcast.store(n);
  }

  @Override
  SyncedLimiter.Builder configure(SyncedLimiter.Builder builder) {
    return builder;
  }

  @Override
  void pass(long nanos, List<SyncedLimiter> nodes) {
    LockSupport.parkNanos(nanos);
  }
}
