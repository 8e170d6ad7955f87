package io.sluice.sync;

import io.sluice.sync.spi.CounterStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link EveryKeyScenarios} as a user runs them: the README's defaults, the wall clock, each node with
 * its own flusher thread and connection to a real redis-server.
 */
class EveryKeyRedisIT extends EveryKeyScenarios.WallClock {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();

  @Override
  CounterStore store(int n) {
    return redis.newStore();
  }
}
