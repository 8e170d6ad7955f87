package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Found by {@code WindowProbe} (seeds 2, 19, 22, 30: reservation mode, a key with costs up to the
 * limit). In reservation mode a request whose cost is larger than what is free is denied, and the
 * node that denied it is left holding a lease of everything that was free: every other node denies
 * the key, far below its limit, until the window ends (unused grants are not given back). The
 * approximate mode's answer to the same case is {@code EveryKeyScenarios.aDeniedLargeCostLeavesWhatIsLeftToTheOthers}.
 */
class ReservationDeniedLargeCostTest {

  /**
   * Fixed window of 100 per minute, two nodes in reservation mode: node 0 admits 1 permit, then is
   * asked for 100 (denied: 99 are free, the exact algorithm denies it too). Node 1 is then asked for 1
   * permit five times over the rest of the minute, with the key at 1 of 100: the exact algorithm admits
   * all five. On the code of 2026-12-02 node 1 denied all five (each with a retry-after to the window's
   * end): node 0's denied request had leased the 99 free permits.
   */
  @Test
  void aDeniedLargeCostLeavesTheFreeBudgetToTheOtherNodes() {
    Limit limit = Limit.fixedWindow("lease-large").limit(100).window(Duration.ofMinutes(1)).build();
    try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), true)) {
      sim.startNode();
      sim.startNode();
      sim.heartbeatAll();
      sim.at(0);
      assertThat(sim.acquire(0, "k", 1)).isTrue();
      sim.at(ProbeSim.MS);
      assertThat(sim.acquire(0, "k", 100)).as("100 on a key with 1 counted").isFalse();
      long[] offsetsMs = {2, 3, 1_000, 10_000, 30_000};
      for (long ms : offsetsMs) {
        sim.at(ms * ProbeSim.MS);
        sim.acquire(1, "k", 1);
      }
      assertThat(sim.exactLetters.toString()).isEqualTo("ADAAAAA");
      assertThat(sim.nodeLetters.toString()).as("node 1's five requests at 1-5 of 100, on a key node 0 was denied 100 on")
          .isEqualTo("ADAAAAA");
    }
  }

  /**
   * Fixed window of 100 per minute, two nodes in reservation mode: node 0 admits 95; node 1 is asked for
   * 10 (denied: 5 are free, the store says so) and again for 10 a moment later. Nothing has come back
   * meanwhile: the second is denied without a store call (it asked the store again at once, and at every
   * such request after it). A request of 5 still asks, and is admitted.
   */
  @Test
  void aCostLargerThanWhatTheStoreLastLeftIsDeniedWithoutAskingAgain() {
    Limit limit = Limit.fixedWindow("lease-left").limit(100).window(Duration.ofMinutes(1)).build();
    try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), true)) {
      sim.startNode();
      sim.startNode();
      sim.heartbeatAll();
      sim.at(0);
      for (int i = 0; i < 95; i++) {
        assertThat(sim.acquire(0, "k", 1)).as("permit %d", i).isTrue();
      }
      sim.at(ProbeSim.MS);
      assertThat(sim.acquire(1, "k", 10)).as("10 with 5 free").isFalse();
      long calls = sim.storeCalls();
      sim.at(2 * ProbeSim.MS);
      assertThat(sim.acquire(1, "k", 10)).as("10 again, nothing given back").isFalse();
      assertThat(sim.storeCalls() - calls).as("store calls for the second request of 10").isZero();
      assertThat(sim.acquire(1, "k", 5)).as("5 fits what was left").isTrue();
      assertThat(sim.exactLetters.toString()).endsWith("DDA");
    }
  }
}
