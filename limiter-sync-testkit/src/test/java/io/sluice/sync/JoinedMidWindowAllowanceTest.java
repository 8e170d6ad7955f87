package io.sluice.sync;

import static io.sluice.sync.ProbeSim.MS;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Found by {@code WindowProbe} (2026-12-06, seed 802684 with unit costs: a fixed window of 100 an
 * hour on four nodes, two more started after the key's count reached 100, each admitted a permit under
 * its allowance: 102). The nodes there before had spent their allowances within the reserve of their
 * own count; a node the others count only from within the window has no part of that reserve, so its
 * allowance holds from the next window on.
 */
class JoinedMidWindowAllowanceTest {

  @Test
  void nodesStartedInAWindowWhoseCountsFillTheLimitAdmitNothingThere() {
    Limit limit = Limit.fixedWindow("api").limit(100).window(Duration.ofMinutes(1)).build();
    try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), false)) {
      sim.startNode();
      sim.startNode();
      sim.at(3_000 * MS);
      long admitted = 0;
      for (int i = 0; i < 110; i++) {
        sim.at(3_000 * MS + i * 50 * MS);
        admitted += sim.acquire(i % 2, "k", 1) ? 1 : 0;
      }
      assertThat(admitted).isEqualTo(100);
      int third = sim.startNode();
      int fourth = sim.startNode();
      sim.at(12_000 * MS); // (the new nodes counted by the others: two beats after they joined)
      assertThat(sim.acquire(third, "k", 1)).as("the third node, on a key its window has filled").isFalse();
      assertThat(sim.acquire(fourth, "k", 1)).as("the fourth node").isFalse();
      sim.at(12_500 * MS);
      assertThat(sim.store.count("api", "k", sim.window())).isEqualTo(100);
      // in the next window the new nodes' allowances hold
      sim.at(60_000 * MS + 10 * MS);
      long calls = sim.node(third).storeCalls();
      assertThat(sim.acquire(third, "k", 1)).isTrue();
      assertThat(sim.node(third).storeCalls()).as("admitted under its allowance").isEqualTo(calls);
    }
  }
}
