package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A node killed and started again under the same node id (the README's {@code nodeId("web-1")}, a pod
 * name) while its claim is still in the store. The killed process admitted permits under that claim
 * that it never flushed; the store still holds the claim for it, which is what keeps the other nodes
 * from spending those permits again. The new process must not take the claim over as its own.
 */
class RestartedNodeClaimTest {

  /**
   * Fixed window of 100 per minute. The first process admits a request every 10 ms for 300 ms (30
   * permits; far below the limit, so it holds a claim for the rest of the window and sends its permits
   * only when the claim runs low), and is killed. A process with the same id starts and is asked 100
   * times. On the code of 2026-12-02 (claims owned by node id and limit) the second process inherited
   * the claim and admitted up to what the store showed free, the dead process's unflushed permits
   * included: 100 + those permits in the window.
   */
  @Test
  void aRestartedNodeDoesNotSpendItsPredecessorsClaim() {
    Limit limit = Limit.fixedWindow("restart-claim").limit(100).window(Duration.ofMinutes(1)).build();
    try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), false)) {
      sim.startNode("web-1");
      int admitted = 0;
      for (int i = 0; i < 30; i++) {
        sim.at(i * 10 * ProbeSim.MS);
        admitted += sim.acquire(0, "k", 1) ? 1 : 0;
      }
      assertThat(admitted).isEqualTo(30);
      long counted = sim.store.count("restart-claim", "k", sim.window());
      assertThat(counted).as("permits of the first process the store counted before it was killed").isLessThan(30);
      assertThat(sim.store.claims("restart-claim", "k", sim.window())).as("its claim").isPositive();
      sim.at(295 * ProbeSim.MS);
      sim.crash(0);

      sim.at(300 * ProbeSim.MS);
      int second = sim.startNode("web-1");
      for (int i = 0; i < 100; i++) {
        sim.at((300 + i) * ProbeSim.MS);
        admitted += sim.acquire(second, "k", 1) ? 1 : 0;
      }
      assertThat(admitted).as("permits both processes admitted in the window (%d of the first's never counted)",
          30 - counted).isLessThanOrEqualTo(100);
    }
  }

  /**
   * Two limiters of one limit under one node id at once (a process that built its limiter twice, two
   * processes given the same id by mistake): each numbers its own flushes. On the code of 2026-12-02
   * they numbered under one owner, from the wall clock at start, so the store took the second one's
   * batches for replays of the first one's and dropped them: permits admitted and never counted.
   */
  @Test
  void twoLimitersUnderOneIdBothHaveTheirPermitsCounted() {
    Limit limit = Limit.fixedWindow("same-id").limit(1_000).window(Duration.ofMinutes(1)).build();
    try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), false)) {
      int a = sim.startNode("web-1");
      int b = sim.startNode("web-1");
      int admitted = 0;
      for (int i = 0; i < 400; i++) {
        sim.at(i * ProbeSim.MS);
        admitted += sim.acquire(i % 2 == 0 ? a : b, "k" + (i % 4), 1) ? 1 : 0;
      }
      sim.close(a);
      sim.close(b);
      long counted = 0;
      for (int k = 0; k < 4; k++) {
        counted += sim.store.count("same-id", "k" + k, sim.window());
      }
      assertThat(admitted).isEqualTo(400);
      assertThat(counted).as("permits the store counted of the %d both admitted", admitted).isEqualTo(admitted);
    }
  }
}
