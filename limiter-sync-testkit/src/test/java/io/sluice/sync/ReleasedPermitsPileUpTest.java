package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Found by {@code WindowProbe}'s store check (seeds 20321 and 20642: store counts beyond what the nodes
 * kept plus one request's permits per node). The README says of {@code release}: permits the store
 * counted already pay for the node's next admissions of the key, so "a request denied again and again
 * holds at most one request's permits per node and key". A decision that asks the store (a take: a cold
 * key, or a cost above what the node holds) does not use the permits given back before: it takes new
 * ones, and its own release adds to those held. Requests of growing cost, each given back, pile up.
 */
class ReleasedPermitsPileUpTest {

  /**
   * Fixed window of 10 per minute, one node, a cold key (requests 200 ms apart, each one a take):
   * costs 1, 2 and 4, each admitted and given back (another limit of the request denied it). The exact
   * algorithm then holds nothing of the key and admits a request of 8. On the code of 2026-12-02 the
   * store counted 7 (1 + 2 + 4, not at most 4) and the node denied the 8.
   */
  @Test
  void permitsGivenBackDoNotPileUpBeyondOneRequest() {
    Limit limit = Limit.fixedWindow("release-pile").limit(10).window(Duration.ofMinutes(1)).build();
    try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), false)) {
      sim.startNode();
      long t = 0;
      for (long cost : new long[] {1, 2, 4}) {
        sim.at(t);
        assertThat(sim.acquire(0, "k", cost)).isTrue();
        sim.releaseLast(0, "k", cost);
        t += 200 * ProbeSim.MS;
      }
      sim.at(t);
      sim.node(0).flushAll();
      long counted = sim.store.count("release-pile", "k", sim.window());
      sim.acquire(0, "k", 8);
      assertThat(sim.lastExact.allowed()).isTrue();
      assertThat(counted).as("permits the store counts after 1, 2 and 4 were given back").isLessThanOrEqualTo(4);
      assertThat(sim.lastNode.allowed()).as("8 on a key whose requests were all given back: %s", sim.lastNode).isTrue();
    }
  }
}
