package io.sluice.sync;

import static io.sluice.sync.ProbeSim.MS;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Found by {@code WindowProbe} (2026-12-06, 141 decisions in the cases from seed 900,000, all one node
 * in reservation mode on fixed windows): a request larger than what is left of its window, denied on a
 * node the registry has confirmed alone, said to retry after one sync interval, where the exact
 * algorithm says the window's end; nothing but another node's grant coming back frees a fixed window's
 * permits, and there is no other node, so a client that honours {@code Retry-After} was denied again
 * at each retry.
 */
class ReservationRetryAfterTest {

  @Test
  void aCostLargerThanWhatIsLeftOfAFixedWindowRetriesWhenTheWindowEnds() {
    Limit limit = Limit.fixedWindow("leased").limit(10).window(Duration.ofMinutes(1)).build();
    try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), true)) {
      sim.startNode();
      sim.at(1_000 * MS);
      sim.heartbeatAll(); // (the registry's second answer: the node is confirmed alone)
      for (int i = 0; i < 4; i++) {
        sim.at((2_000 + i * 10) * MS);
        assertThat(sim.acquire(0, "k", 1)).isTrue();
      }
      sim.at(10_000 * MS);
      assertThat(sim.acquire(0, "k", 8)).as("8 of the 6 left").isFalse();
      assertThat(sim.lastExact.allowed()).isFalse();
      assertThat(sim.lastNode.retryAfterNanos()).as("retry-after, the exact algorithm's %d ns",
          sim.lastExact.retryAfterNanos()).isEqualTo(sim.lastExact.retryAfterNanos());
    }
  }
}
