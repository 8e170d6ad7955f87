package io.sluice.sync;

import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link EveryKeyScenarios} as a user runs them: the README's defaults, the wall clock, each node with
 * its own flusher thread and connection to a real redis-server.
 */
class EveryKeyRedisIT extends EveryKeyScenarios {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();

  @Override
  CounterStore store(int n) {
    return redis.newStore();
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
