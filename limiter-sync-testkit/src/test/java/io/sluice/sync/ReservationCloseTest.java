package io.sluice.sync;

import static io.sluice.sync.ProbeSim.MS;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Found by {@code WindowProbe} (2026-12-06, seed 700207 with {@code -Dsluice.probe.hot=true}: reservation
 * mode, a fixed window of 10 per 15 minutes). A node closed holding 6 permits of its lease unused; the
 * store had counted them with the grant and nothing gave them back, so the node started in its place
 * found the window's count at 8 with 2 permits admitted, and denied the key's requests far below its
 * limit to the window's end. A closing limiter now gives back what it holds of its grants.
 */
class ReservationCloseTest {

  @Test
  void aClosedNodeGivesBackWhatItHeldOfItsLease() {
    Limit limit = Limit.fixedWindow("leased").limit(10).window(Duration.ofMinutes(15)).build();
    try (ProbeSim sim = new ProbeSim(limit, Duration.ofSeconds(1), true)) {
      sim.startNode();
      // four requests at the end of the first window (the key's rate), one at the start of the next
      for (long t : new long[] {875_885, 879_158, 885_556, 898_227}) {
        sim.at(t * MS);
        assertThat(sim.acquire(0, "k", 1)).isTrue();
      }
      // four in the next window's first seconds: the node leases ahead of them
      for (long t = 907_000; t <= 907_150; t += 50) {
        sim.at(t * MS);
        assertThat(sim.acquire(0, "k", 1)).isTrue();
      }
      long w = sim.window();
      assertThat(sim.store.count("leased", "k", w)).as("the store counts the lease granted with the permits")
          .isGreaterThan(4);
      sim.close(0);
      assertThat(sim.store.count("leased", "k", w)).as("counted once the node closed").isEqualTo(4);
      int next = sim.startNode();
      sim.at(930_000 * MS);
      int admitted = 0;
      for (int i = 0; i < 12; i++) {
        sim.at((930_000 + i * 100) * MS);
        admitted += sim.acquire(next, "k", 1) ? 1 : 0;
      }
      assertThat(admitted).as("the node started in its place: the rest of the window's limit").isEqualTo(6);
    }
  }
}
