package io.sluice.sync.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Limit;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SimulatedNodesTest {
  static final long START = 1_764_547_200_000_000_000L;
  static final Duration INTERVAL = Duration.ofMillis(100);
  static final Limit LIMIT = Limit.fixedWindow("sim").limit(1_000).window(Duration.ofSeconds(1)).build();

  /** A seed whose first draw puts node 0's first sync between 30 and 90 ms after the start. */
  static long seedWithPhaseInTheMiddle() {
    for (long seed = 1; ; seed++) {
      long phase = new SplittableRandom(seed).nextLong(INTERVAL.toNanos());
      if (phase > 30_000_000L && phase < 90_000_000L) {
        return seed;
      }
    }
  }

  /**
   * The first of node 0's syncs (from its seeded phase) that sends what it holds of the key: the
   * decisions' permits, paid by a claim, wait while the claim lasts (a sync or two here; how long
   * is the claims' business, not the transport's), then one sync sends them.
   */
  private static long syncThatSends(SimulatedNodes nodes, long seed, long trip) {
    SyncedLimiter node = nodes.node(0);
    long sync = START + new SplittableRandom(seed).nextLong(INTERVAL.toNanos());
    for (; sync < START + 1_000_000_000L; sync += INTERVAL.toNanos()) {
      nodes.advanceTo(sync - 1);
      long sent = node.storeCalls();
      nodes.advanceTo(sync + Math.max(0, trip / 2 - 1));
      if (node.storeCalls() > sent) {
        return sync;
      }
    }
    throw new AssertionError("no sync sent the key's permits within their window");
  }

  @Test
  void aSyncsFlushReachesTheStoreHalfARoundTripAfterItWasSent() {
    long seed = seedWithPhaseInTheMiddle();
    long trip = Duration.ofMillis(20).toNanos();
    MemoryStore store = new MemoryStore();
    try (SimulatedNodes nodes = new SimulatedNodes(1, INTERVAL, Duration.ofMillis(20), START,
        new SplittableRandom(seed), n -> store, (n, s) -> SyncedLimiter.builder(LIMIT, s).nodeId("n" + n))) {
      SyncedLimiter node = nodes.node(0);
      for (int i = 0; i < 50; i++) {
        assertThat(nodes.decide(0, "k", 1).allowed()).isTrue();
      }
      long calledBefore = store.calls();
      long sentBefore = node.storeCalls(); // (the node's calls count its first heartbeat, the store's do not)
      long pendingBefore = node.pending();
      long sync = syncThatSends(nodes, seed, trip); // (now half a round trip less a nanosecond after it)
      assertThat(node.storeCalls()).as("one call sent at the sync").isEqualTo(sentBefore + 1);
      assertThat(store.calls()).as("not arrived yet").isEqualTo(calledBefore);
      assertThat(node.pending()).as("not answered yet").isEqualTo(pendingBefore).isPositive();

      nodes.advanceTo(sync + trip / 2);
      assertThat(store.calls()).as("arrived after half the round trip").isEqualTo(calledBefore + 1);
      assertThat(store.count("sim", "k", Math.floorDiv(START, 1_000_000_000L))).isEqualTo(50);
      nodes.advanceTo(sync + trip);
      assertThat(node.pending()).as("answered after the round trip").isZero();
    }
  }

  @Test
  void withoutARoundTripTheFlushArrivesAtTheSync() {
    long seed = seedWithPhaseInTheMiddle();
    MemoryStore store = new MemoryStore();
    try (SimulatedNodes nodes = new SimulatedNodes(1, INTERVAL, Duration.ZERO, START, new SplittableRandom(seed),
        n -> store, (n, s) -> SyncedLimiter.builder(LIMIT, s).nodeId("n" + n))) {
      for (int i = 0; i < 50; i++) {
        nodes.decide(0, "k", 1);
      }
      long calledBefore = store.calls();
      syncThatSends(nodes, seed, 0); // (now at the sync)
      assertThat(store.calls()).isEqualTo(calledBefore + 1);
      assertThat(nodes.node(0).pending()).isZero();
    }
  }

  /**
   * Heartbeats are the flusher's own ({@link SyncedLimiter#heartbeatIfDue()}): a working node's beat rides
   * on its flushes and claim calls, an idle node does not beat, as in a deployment. The simulation used to
   * beat once a simulated second per node as a call of its own: 2 x 6 = 12 heartbeat calls here, and the
   * idle node stayed in the registry.
   */
  @Test
  void aWorkingNodesBeatsRideOnItsFlushesAndAnIdleNodeStopsBeating() {
    MemoryStore store = new MemoryStore();
    try (SimulatedNodes nodes = new SimulatedNodes(2, INTERVAL, Duration.ofMillis(1), START, new SplittableRandom(7),
        n -> store, (n, s) -> SyncedLimiter.builder(LIMIT, s).nodeId("n" + n))) {
      SyncedLimiter working = nodes.node(0);
      SyncedLimiter idle = nodes.node(1);
      assertThat(working.registeredNodes()).as("the second node's first beat came after the first's").isEqualTo(1);
      assertThat(idle.registeredNodes()).isEqualTo(2);
      // node 0 decides 700 times a second on one key for 6 simulated seconds, past half its limit, so
      // that it flushes at its syncs (a key far below its limit holds its permits in a claim and sends
      // nothing, and its node's beat is then a call of its own); node 1 never decides
      for (int i = 0; i < 600; i++) {
        nodes.advanceTo(START + i * 10_000_000L);
        for (int d = 0; d < 7; d++) {
          nodes.decide(0, "k", 1);
        }
      }
      nodes.advanceTo(START + 6_000_000_000L);
      // (the store counts every call but heartbeats of their own; no round trip is on its way now)
      assertThat(nodes.storeCalls() - store.calls()).as("heartbeat calls of their own: each node's first").isEqualTo(2);
      assertThat(idle.storeCalls()).as("the idle node, quiet since its first beat").isEqualTo(1);
      assertThat(working.registeredNodes()).as("the working node's carried beats count it, and the idle one ran out")
          .isEqualTo(1);
    }
  }

  @Test
  void badSettingsAreRefusedByName() {
    MemoryStore store = new MemoryStore();
    assertThatThrownBy(() -> new SimulatedNodes(1_025, INTERVAL, Duration.ZERO, START, new SplittableRandom(1),
        n -> store, (n, s) -> SyncedLimiter.builder(LIMIT, s))).hasMessage("nodes: must be between 1 and 1024, got 1025");
    assertThatThrownBy(() -> new SimulatedNodes(2, INTERVAL, Duration.ofMillis(-1), START, new SplittableRandom(1),
        n -> store, (n, s) -> SyncedLimiter.builder(LIMIT, s))).hasMessageStartingWith("roundTrip: must not be negative");
  }
}
