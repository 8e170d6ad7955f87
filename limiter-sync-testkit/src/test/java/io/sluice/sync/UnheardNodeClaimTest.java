package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Nodes that start together beat one after the other, so the first counts itself alone until its next
 * beat (a second later until 2026-12-07, two sync intervals now, see StartedTogetherTest; ProbeSim still
 * beats once a second, as a node whose second beat failed counts itself alone longer; see
 * StartupAloneLargeCostTest). Found by {@code sluice tune --simulate --profile
 * steady --nodes 256 --seed 1}: in the second window of a sliding window at its limit, that node's claim
 * split the fading by the one node it counted, so the store gave it all of what the previous window
 * frees, 1,000 permits a second where its own requests came at 8 a second, and denied every other
 * node's request for two sync intervals, until that node's claim went idle and was given up (16.8% of
 * the limit short in that window).
 */
class UnheardNodeClaimTest {

  /**
   * Sliding window of 50 per 500 ms, sync 100 ms, eight nodes started together: node 0 beats first and
   * counts itself alone until its next beat, a second later; the others beat again and count all
   * eight. Window 0: the nodes are asked in turn every millisecond, and the limit is reached at 50 ms;
   * node 0 is then asked every 100 ms,
   * a tenth of the rate at which the window's budget frees. In window 1 the previous window's 50 fade at a permit per 10 ms,
   * in parts too small for a node that counts eight to hold one (2.5 permits over two sync intervals:
   * {@link ClaimSizing#fadingPartTooSmall}), so the store keeps them for whichever node asks. Node 0's
   * request at the window's start is a claim call (it holds no claim there); from 5 ms nodes 1 to 7 are
   * asked in turn every 5 ms for 200 ms. The exact algorithm admits a request per permit faded.
   */
  @Test
  void aNodeThatCountsItselfAloneDoesNotTakeTheFadingItsRequestsDoNotNeed() {
    Limit limit = Limit.slidingWindowCounter("unheard").limit(50).window(Duration.ofMillis(500)).build();
    try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), false)) {
      for (int i = 0; i < 8; i++) {
        sim.startNode();
      }
      for (int i = 1; i < 8; i++) {
        sim.node(i).heartbeatNow();
      }
      assertThat(sim.node(0).activeNodes()).as("node 0's count after its first heartbeat").isEqualTo(1);
      assertThat(sim.node(1).activeNodes()).as("node 1's after its second").isEqualTo(8);
      for (int ms = 0; ms < 100; ms++) {
        sim.at(ms * ProbeSim.MS);
        sim.acquire(ms % 8, "k", 1);
      }
      for (int ms = 100; ms <= 500; ms += 100) {
        sim.at(ms * ProbeSim.MS);
        sim.acquire(0, "k", 1);
      }
      long window = 500 * ProbeSim.MS;
      assertThat(sim.node(0).activeNodes()).as("node 0's count in window 1").isEqualTo(1);
      int exactBefore = count(sim.exactLetters);
      int nodesBefore = count(sim.nodeLetters);
      for (int i = 0; i < 40; i++) {
        sim.at(window + 5 * ProbeSim.MS + i * 5 * ProbeSim.MS);
        sim.acquire(1 + i % 7, "k", 1);
      }
      int exact = count(sim.exactLetters) - exactBefore;
      int nodes = count(sim.nodeLetters) - nodesBefore;
      assertThat(exact).as("the exact algorithm's admissions from 5 ms").isGreaterThanOrEqualTo(15);
      // (a permit or two may sit in a node's part as the fading frees it between two requests)
      assertThat(nodes).as("nodes 1 to 7's admissions from 5 ms (exact: %d); nodes %s, exact %s", exact,
          sim.nodeLetters, sim.exactLetters).isGreaterThanOrEqualTo(exact - 2);
    }
  }

  private static int count(CharSequence letters) {
    int n = 0;
    for (int i = 0; i < letters.length(); i++) {
      n += letters.charAt(i) == 'A' ? 1 : 0;
    }
    return n;
  }
}
