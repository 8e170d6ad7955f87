package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.sync.sim.SimulatedNodes;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A hot key, asked at twice a fixed window's limit on four nodes: near the limit each node's claim
 * runs out between its regular syncs and the node asks the store for more. The store used to count
 * every claim as held ahead of demand, though the nodes had admitted all of it, so near the limit it
 * had nothing to grant beyond the request's own permit: the last tenth of every window went one store
 * call per request (about 54 store calls per 1,000 decisions). Now a take tells the store what the
 * node admitted under its claim (its need less the take), and claims are sized as if that were
 * counted until the node's flush counts it.
 */
class HotKeyClaimTest {

  @Test
  void aHotKeyNearItsLimitRefillsItsClaimsWithoutAStoreCallPerRequest() {
    int limitPerSecond = 2_000;
    int nodes = 4;
    Limit limit = Limit.fixedWindow("hot").limit(limitPerSecond).window(Duration.ofSeconds(1)).build();
    MemoryStore store = new MemoryStore();
    long start = Duration.ofHours(490_000).toNanos();
    SplittableRandom random = new SplittableRandom(7);
    long decisions = 0;
    long falseDenials = 0;
    long admitted = 0;
    try (SimulatedNodes sim = new SimulatedNodes(nodes, Duration.ofMillis(100), Duration.ofMillis(1), start,
        new SplittableRandom(3), i -> store, (i, s) -> SyncedLimiter.builder(limit, s).nodeId("n" + i))) {
      long exactWindow = -1;
      long exactCount = 0;
      double perSecond = 2.0 * limitPerSecond;
      // ten windows of Poisson requests at twice the limit, each to a node drawn at random
      for (long at = start; at < start + Duration.ofSeconds(10).toNanos();
          at += (long) (-Math.log(1 - random.nextDouble()) / perSecond * 1e9)) {
        sim.advanceTo(at);
        boolean allowed = sim.decide(random.nextInt(nodes), "k", 1).allowed();
        long w = at / 1_000_000_000L;
        if (w != exactWindow) {
          exactWindow = w;
          exactCount = 0;
        }
        boolean exact = exactCount < limitPerSecond; // the exact fixed window: the first 2,000 of each
        exactCount += exact ? 1 : 0;
        falseDenials += exact && !allowed ? 1 : 0;
        admitted += allowed ? 1 : 0;
        decisions++;
      }
      double callsPerThousand = sim.storeCalls() * 1000.0 / decisions;
      assertThat(admitted).as("never past the limit: 2,000 in each of ten windows").isEqualTo(10L * limitPerSecond);
      // (seeds 1-7: 52.7-55.3 calls when an admitted claim counted as held ahead of demand, 30.3-34.0 now)
      assertThat(callsPerThousand).as("store calls per 1,000 decisions").isLessThan(40);
      // (the same seeds: 0.07-0.14% before, 0.04-0.17% now: the requests of the window's last permits
      // reach nodes other than the ones holding them; not the kit's bound of 0.1%, see the README)
      assertThat(100.0 * falseDenials / decisions).as("false denials, %% of requests").isLessThan(0.25);
    }
  }
}
