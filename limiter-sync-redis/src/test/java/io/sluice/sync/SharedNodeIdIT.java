package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.redis.RedisCounterStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One process, one node id, several limits: the usual setup (a node is a process; the registry
 * counts processes). Each limit's flushes must count once even though the node's id is shared.
 */
class SharedNodeIdIT {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();

  @Test
  void twoLimitsOfOneNodeAreBothCounted() throws Exception {
    Limit perMinute = Limit.fixedWindow("shared-a").limit(1_000).window(Duration.ofMinutes(1)).build();
    Limit perHour = Limit.fixedWindow("shared-b").limit(1_000).window(Duration.ofHours(1)).build();
    ManualTicker ticker = new ManualTicker();
    try (RedisCounterStore store = redis.newStore()) {
      SyncedLimiter a = SyncedLimiter.builder(perMinute, store).nodeId("web-1").ticker(ticker).autoSync(false).build();
      Thread.sleep(5); // the second limiter's sequences start from a later clock reading
      SyncedLimiter b = SyncedLimiter.builder(perHour, store).nodeId("web-1").ticker(ticker).autoSync(false).build();
      for (int round = 0; round < 3; round++) {
        assertThat(a.tryAcquire("k")).isTrue();
        assertThat(a.syncNow()).isTrue();
        assertThat(b.tryAcquire("k")).isTrue();
        assertThat(b.syncNow()).isTrue();
      }
      a.close();
      b.close();
      long now = ticker.read();
      assertThat(redis.cli().hget(RedisFixture.counterKey("shared-a", "k"),
          Long.toString(Math.floorDiv(now, perMinute.periodNanos())))).isEqualTo("3");
      assertThat(redis.cli().hget(RedisFixture.counterKey("shared-b", "k"),
          Long.toString(Math.floorDiv(now, perHour.periodNanos())))).isEqualTo("3");
    }
  }
}
