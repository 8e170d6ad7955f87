package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.Ticker;
import io.sluice.sync.spi.CounterStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Nodes set their clocks to the clock of the member that owns the Hazelcast store's registry entry
 * ({@code NodeRegistry.ReadClock}), through a member and through a client alike: two nodes 40 ms either
 * side of this machine's clock (the members' clock) end up within a few milliseconds of it.
 */
class HazelcastStoreClockIT {
  @RegisterExtension
  static final HazelcastFixture hazelcast = new HazelcastFixture("store-clock");

  private static final long MS = 1_000_000L;
  private static final Limit LIMIT = Limit.fixedWindow("store-clock").limit(100).window(Duration.ofSeconds(1)).build();

  @Test
  void theRegistrysMemberTellsItsTimeInMicroseconds() throws Exception {
    for (int n = 0; n < 4; n++) {
      CounterStore store = hazelcast.store(n);
      assertThat(store.tellsTime()).isTrue();
      long before = System.currentTimeMillis() * 1_000;
      long micros = store.timeMicros().toCompletableFuture().get(30, TimeUnit.SECONDS);
      long after = System.currentTimeMillis() * 1_000;
      assertThat(micros).as("through node " + n + "'s member or client").isBetween(before - 1_000, after + 1_000);
    }
  }

  @Test
  void nodesWhoseClocksAreApartReadTheMembersTime() throws Exception {
    // (a first call loads the processor's class on the members: hundreds of ms on a small machine)
    hazelcast.store(0).timeMicros().toCompletableFuture().get(30, TimeUnit.SECONDS);
    hazelcast.store(2).timeMicros().toCompletableFuture().get(30, TimeUnit.SECONDS);
    Ticker ahead = () -> Ticker.system().read() + 40 * MS;
    Ticker behind = () -> Ticker.system().read() - 40 * MS;
    try (SyncedLimiter a = SyncedLimiter.builder(LIMIT, hazelcast.store(0)).nodeId("hz-clock-a").ticker(ahead)
            .alignClockToStore(true).build();
        SyncedLimiter b = SyncedLimiter.builder(LIMIT, hazelcast.store(2)).nodeId("hz-clock-b").ticker(behind)
            .alignClockToStore(true).build()) {
      assertThat(a.clockOffset().toNanos()).isBetween(-45 * MS, -35 * MS);
      assertThat(b.clockOffset().toNanos()).isBetween(35 * MS, 45 * MS);
    }
  }
}
