package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Algorithm;
import io.sluice.node.Limit;
import io.sluice.sync.AccuracyKit.Mode;
import io.sluice.sync.AccuracyKit.Profile;
import io.sluice.sync.AccuracyKit.Report;
import io.sluice.sync.AccuracyKit.Setup;
import io.sluice.sync.AccuracyKit.Traffic;
import io.sluice.sync.sim.MemoryStore;
import io.sluice.sync.sim.SimulatedNodes;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Nodes started together beat one after the other at their first rounds, each counting the nodes that
 * beat before it, so the first counts itself alone. Until its second beat it divides what claims may
 * hold by that one node: its claims take all of the half of what is free that claims may hold, where
 * the others' take an even part of it. The second beat came a whole beat interval (a second) after the
 * first; it now comes two sync intervals after it ({@code NodeBeat#beatDueNanos}).
 */
class StartedTogetherTest {
  private static final Duration SYNC = Duration.ofMillis(100);

  /** Eight nodes through the flusher's own heartbeat step: every one counts all eight within three sync intervals. */
  @Test
  void everyNodeStartedTogetherCountsAllOfThemWithinAFewSyncIntervals() {
    Limit limit = Limit.fixedWindow("together").limit(500).window(Duration.ofSeconds(1)).build();
    MemoryStore store = new MemoryStore();
    try (SimulatedNodes nodes = new SimulatedNodes(8, SYNC, Duration.ofMillis(1), AccuracyKit.START_NANOS,
        new SplittableRandom(1), n -> store, (n, s) -> SyncedLimiter.builder(limit, s).nodeId("node-" + n))) {
      assertThat(nodes.node(0).activeNodes()).as("node 0's count after its first beat").isEqualTo(1);
      assertThat(nodes.node(7).activeNodes()).as("node 7's").isEqualTo(8);
      for (int ms = 0; ms <= 300; ms++) { // (a request a millisecond keeps every node working: none is quiet)
        nodes.advanceTo(AccuracyKit.START_NANOS + ms * 1_000_000L);
        nodes.decide(ms % 8, "k" + ms, 1);
      }
      for (int i = 0; i < 8; i++) {
        assertThat(nodes.node(i).activeNodes()).as("node %d's count 300 ms after the start", i).isEqualTo(8);
      }
    }
  }

  /**
   * The accuracy kit's shapes profile, fixed window of 500 a second, 8 nodes, decisions through
   * {@code tryAcquire}, on a seed the kit does not run (76097, found with {@code
   * -Dsluice.kit.seedOffset=76000}): the burst key's first burst, at three times the limit from 350 ms.
   * Node 0, counting itself alone, claimed 100 permits at 452 ms, paid its requests from that claim
   * for the next 200 ms (a claim that lasts waits for later syncs), and the seven others were told
   * nothing was free from 621 ms while the exact algorithm admitted 42 more: 42 requests not made up
   * in their window (0.391% of the profile's), 0.792% false denials. Now every request is made up in
   * its window.
   */
  @Test
  void aNodeThatCountedItselfAloneNoLongerHoldsTheBurstsLastPermits() {
    Traffic traffic = Profile.SHAPES.traffic(Algorithm.FIXED_WINDOW, 76_097);
    Setup setup = Setup.of(8, Mode.APPROXIMATE).viaTryAcquire();
    Report r = AccuracyKit.run(traffic, setup, MemoryStore::new);
    assertThat(r.netFalseDenials()).as("requests denied and not made up in their key-window: %s", r).isZero();
    assertThat(r.falseDenialPercent()).as("false denials: %s", r).isLessThan(0.2);
  }
}
