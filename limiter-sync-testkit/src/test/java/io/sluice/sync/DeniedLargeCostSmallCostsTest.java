package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Found by {@code WindowProbe} (seeds 5 and 7: approximate mode, 3-4 nodes, a key sticky to one node
 * with costs of 1 and now and then the whole limit). A request whose cost does not fit asks the store,
 * which has less free than it needs: the node then denies every decision its claim cannot pay without
 * asking again for a sync interval (twice as long after each such answer, up to eight), whatever their
 * cost. The requests of cost 1 that follow, once the node's claim is spent, are denied on a key far
 * below its limit, where the store has plenty free for them (token claims had the same fault: "a large
 * denial no longer denies small costs").
 */
class DeniedLargeCostSmallCostsTest {

  /**
   * Fixed window of 100 per minute, three nodes, all requests to node 0: 1 permit at 0, then at 1 s
   * (its view is stale) a request of 100 (denied: 99 are free; the exact algorithm denies it too), then
   * 25 requests of 1, 0.1 ms apart (a burst): the exact algorithm admits all 25, the key ending at 26
   * of 100. On the code of 2026-12-02 node 0 admitted the first 16 (its claim) and denied the next 9
   * until its flusher's sync, asked for by the denials, answered a millisecond later.
   */
  @Test
  void aDeniedLargeCostDoesNotDenySmallCostsThatFit() {
    Limit limit = Limit.fixedWindow("large-then-small").limit(100).window(Duration.ofMinutes(1)).build();
    assertThat(pattern(limit)).isEqualTo("AD" + "A".repeat(25));
  }

  /** The same on a sliding window of 100 per minute. */
  @Test
  void aDeniedLargeCostDoesNotDenySmallCostsThatFitOnASlidingWindow() {
    Limit limit = Limit.slidingWindowCounter("large-then-small-sliding").limit(100).window(Duration.ofMinutes(1)).build();
    assertThat(pattern(limit)).isEqualTo("AD" + "A".repeat(25));
  }

  private static String pattern(Limit limit) {
    try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), false)) {
      sim.startNode();
      sim.startNode();
      sim.startNode();
      sim.heartbeatAll();
      sim.at(0);
      sim.acquire(0, "k", 1);
      sim.at(1_000 * ProbeSim.MS);
      sim.acquire(0, "k", 100);
      for (int i = 1; i <= 25; i++) {
        sim.at(1_000 * ProbeSim.MS + i * ProbeSim.MS / 10);
        sim.acquire(0, "k", 1);
      }
      assertThat(sim.exactLetters.toString()).isEqualTo("AD" + "A".repeat(25));
      return sim.nodeLetters.toString();
    }
  }
}
