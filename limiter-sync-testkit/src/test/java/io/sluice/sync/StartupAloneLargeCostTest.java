package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Found by {@code WindowProbe} (a scratch replay of seed 5's large cost, nodes started together).
 * Nodes that start together heartbeat one after the other, so the first counts itself alone until its
 * next heartbeat (a second later until 2026-12-07; two sync intervals now, see StartedTogetherTest). A request of that node whose cost does not fit asks the store for
 * what it needs, and the store, told the node is alone, grants it everything that is free though the
 * request is denied: the other nodes deny the key, far below its limit, until that node gives the claim
 * up (when the key goes idle on it, at one of its regular syncs).
 */
class StartupAloneLargeCostTest {

  /**
   * Fixed window of 100 per minute, three nodes started together (node 0 heartbeats first and counts
   * 1 node): node 0 admits 1 permit at 0, and at 500 ms (its view stale) is asked for 100 (denied: 99
   * are free; the exact algorithm denies it too). Nodes 1 and 2 are then asked for 1 permit each, in
   * turn, every millisecond for 20 ms: the exact algorithm admits all 20 (the key ends at 21 of 100).
   * On the code of 2026-12-02 all 20 were denied: node 0 held a claim of the 99 free permits.
   */
  @Test
  void aDeniedLargeCostOnANodeThatCountsItselfAloneLeavesTheOthersTheirPart() {
    Limit limit = Limit.fixedWindow("startup-large").limit(100).window(Duration.ofMinutes(1)).build();
    try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), false)) {
      sim.startNode();
      sim.startNode();
      sim.startNode();
      assertThat(sim.node(0).activeNodes()).as("node 0's count after its first heartbeat").isEqualTo(1);
      sim.at(0);
      sim.acquire(0, "k", 1);
      sim.at(500 * ProbeSim.MS);
      sim.acquire(0, "k", 100);
      for (int i = 1; i <= 20; i++) {
        sim.at(500 * ProbeSim.MS + i * ProbeSim.MS);
        sim.acquire(1 + i % 2, "k", 1);
      }
      assertThat(sim.exactLetters.toString()).isEqualTo("AD" + "A".repeat(20));
      assertThat(sim.nodeLetters.toString()).isEqualTo("AD" + "A".repeat(20));
    }
  }
}
