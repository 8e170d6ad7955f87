package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.Ticker;
import io.sluice.sync.redis.RedisCounterStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Nodes whose clocks are apart set them to Redis's ({@code time.lua}, {@code SyncConfig.Builder#alignClockToStore}):
 * two nodes 40 ms either side of the machine's clock end up reading the same time within a few
 * milliseconds (the round trip to a local redis-server is well under one), and a node on the wall
 * clock aligns by default.
 */
class StoreClockIT {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();

  private static final long MS = 1_000_000L;
  private static final Limit LIMIT = Limit.fixedWindow("store-clock").limit(100).window(Duration.ofSeconds(1)).build();

  @Test
  void redisTellsItsTimeInMicroseconds() throws Exception {
    try (RedisCounterStore store = redis.newStore()) {
      assertThat(store.tellsTime()).isTrue();
      long before = System.currentTimeMillis() * 1_000;
      long micros = store.timeMicros().toCompletableFuture().get(10, TimeUnit.SECONDS);
      long after = System.currentTimeMillis() * 1_000;
      // (the same machine's clock: within the call and a millisecond of rounding)
      assertThat(micros).isBetween(before - 1_000, after + 1_000);
    }
  }

  @Test
  void nodesWhoseClocksAreApartReadTheStoresTime() {
    Ticker ahead = () -> Ticker.system().read() + 40 * MS;
    Ticker behind = () -> Ticker.system().read() - 40 * MS;
    try (RedisCounterStore storeA = redis.newStore(); RedisCounterStore storeB = redis.newStore();
        SyncedLimiter a = SyncedLimiter.builder(LIMIT, storeA).nodeId("clock-a").ticker(ahead).alignClockToStore(true).build();
        SyncedLimiter b = SyncedLimiter.builder(LIMIT, storeB).nodeId("clock-b").ticker(behind).alignClockToStore(true).build();
        SyncedLimiter own = SyncedLimiter.builder(LIMIT, storeB).nodeId("clock-c").ticker(ahead).build()) {
      // the first reading is taken while the limiter is built
      assertThat(a.clockOffset().toNanos()).isBetween(-45 * MS, -35 * MS);
      assertThat(b.clockOffset().toNanos()).isBetween(35 * MS, 45 * MS);
      assertThat(own.clockOffset()).as("a ticker of one's own is taken as it is unless told").isZero();
      a.tryAcquire("k");
      b.tryAcquire("k");
    }
  }

  @Test
  void limitersOnTheWallClockAlignByDefault() throws Exception {
    try (RedisCounterStore first = redis.newStore(); RedisCounterStore second = redis.newStore();
        SyncedLimiter a = SyncedLimiter.builder(LIMIT, first).nodeId("clock-d").build();
        SyncedLimiter b = SyncedLimiter.builder(LIMIT, second).nodeId("clock-e").build()) {
      assertThat(a.config().alignsClockToStore()).isTrue();
      // the machine's own clock, and Redis's: the same, within the rounding and a call (the process's
      // limiters on the wall clock share one clock: StoreClockTest)
      assertThat(Math.abs(a.clockOffset().toNanos())).isLessThan(5 * MS);
      assertThat(Math.abs(b.clockOffset().toNanos())).isLessThan(5 * MS);
      assertThat(a.tryAcquire("k")).isTrue();
    }
    List<String> stats = List.of(redis.cli().info("commandstats").split("\r?\n"));
    assertThat(stats).as("the nodes of this class read the server's TIME").anyMatch(line -> line.startsWith("cmdstat_time:"));
  }
}
