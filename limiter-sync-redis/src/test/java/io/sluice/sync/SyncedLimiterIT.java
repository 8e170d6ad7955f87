package io.sluice.sync;

import io.sluice.sync.spi.CounterStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The distributed limiter against a real redis-server: the synchronized burst of
 * {@link SyncedLimiterBurstCheck} in approximate and exact mode (batch size 1).
 */
class SyncedLimiterIT extends SyncedLimiterBurstCheck {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();

  @Override
  CounterStore nodeStore(int n) {
    return redis.newStore();
  }

  @Override
  Long storedCount(String limitName, String key, long window) {
    String stored = redis.cli().hget(RedisFixture.counterKey(limitName, key), Long.toString(window));
    return stored == null ? null : Long.parseLong(stored);
  }
}
