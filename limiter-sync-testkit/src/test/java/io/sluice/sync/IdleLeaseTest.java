package io.sluice.sync;

import static io.sluice.sync.ProbeSim.MS;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Reservation mode's grants held by a node that no longer uses them. Found by {@code WindowProbe}
 * (2026-12-06, seed 606228: a fixed window of 1,000 an hour, requests of 1 and of the whole limit, the
 * key's requests moved to a node started beside the first): every denial of a cost of 1,000 took
 * another grant of 100 ahead of the one the node held unused, and once the requests went to the other
 * node, 808 permits stayed granted to a node nobody asked, for the rest of the hour; the other node's
 * requests were denied from 192 admitted, where the exact algorithm admitted the whole limit.
 */
class IdleLeaseTest {
  private static final Limit LIMIT = Limit.fixedWindow("leased").limit(1_000).window(Duration.ofHours(1)).build();

  @Test
  void aDeniedCostNoGrantAheadCanPayTakesNoGrantAhead() {
    try (ProbeSim sim = new ProbeSim(LIMIT, Duration.ofSeconds(1), true)) {
      sim.startNode();
      long t = 1_000;
      for (int i = 0; i < 40; i++, t += 20) {
        sim.at(t * MS);
        assertThat(sim.acquire(0, "k", 1)).isTrue();
      }
      sim.at((t += 2_000) * MS);
      long counted = sim.store.count("leased", "k", sim.window());
      for (int i = 0; i < 5; i++, t += 2_000) {
        sim.at(t * MS);
        assertThat(sim.acquire(0, "k", 1_000)).as("the exact algorithm denies it too").isFalse();
        sim.at((t + 1_500) * MS);
      }
      assertThat(sim.store.count("leased", "k", sim.window()))
          .as("no grant was taken for the denials: what the node holds did not change").isEqualTo(counted);
    }
  }

  @Test
  void aNodeNoLongerAskedGivesItsGrantBack() {
    try (ProbeSim sim = new ProbeSim(LIMIT, Duration.ofSeconds(1), true)) {
      sim.batchSize = 1_000;
      sim.startNode();
      long t = 1_000;
      int admitted = 0;
      // a node alone at 200 requests a second for two seconds: it holds grants ahead of them
      for (int i = 0; i < 400; i++, t += 5) {
        sim.at(t * MS);
        admitted += sim.acquire(0, "k", 1) ? 1 : 0;
      }
      long w = sim.window();
      assertThat(sim.store.count("leased", "k", w)).as("granted ahead of the node's requests").isGreaterThan(admitted);
      // a second node starts and every request goes there from now on, one every 100 ms
      int second = sim.startNode();
      sim.heartbeatAll();
      for (int i = 0; i < 1_000; i++, t += 100) {
        sim.at(t * MS);
        admitted += sim.acquire(second, "k", 1) ? 1 : 0;
      }
      assertThat(sim.window()).isEqualTo(w);
      assertThat(admitted).as("the whole limit, as the exact algorithm: " + sim.exactLetters.chars()
          .filter(c -> c == 'A').count() + " admitted there").isEqualTo(1_000);
      assertThat(sim.store.count("leased", "k", w)).isEqualTo(1_000);
    }
  }
}
