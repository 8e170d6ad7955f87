package io.sluice.sync;

import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.testkit.LeaseStoreContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Reservation mode against a real redis-server: the lease contract ({@link LeaseStoreContract}) on {@code lease.lua}. */
class LeaseIT extends LeaseStoreContract {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();

  @Override
  protected CounterStore newStore(int n) {
    return redis.newStore();
  }

  @Override
  protected long counterTtlMillis(String limitName, String key) {
    return redis.cli().pttl(RedisFixture.counterKey(limitName, key));
  }
}
