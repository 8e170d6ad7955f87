package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Limit;
import io.sluice.sync.sim.SimulatedNodes;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A window follows the clock of the node that decides: every mode sends the store the node's time, so
 * nodes whose clocks are not in step disagree, near a window's edge, about which window a request falls
 * in (the README's "Nodes' clocks"; measured with the accuracy kit's {@code -Dsluice.kit.clockStepMs}).
 * Here two nodes 10 ms apart on a fixed window of one permit a second, in exact mode: each on its own
 * clock, the node ahead is in the next window 10 ms early, and admits its permit there while the other
 * node has just admitted the window's permit, two permits within one second of the simulation's time;
 * both set to the store's clock (the simulation's), they decide as one clock would.
 */
class NodeClocksTest {

  @Test
  void aNodeWhoseClockIsAheadStartsTheNextWindowEarly() {
    Limit limit = Limit.fixedWindow("clocks").limit(1).window(Duration.ofSeconds(1)).build();
    MemoryStore store = new MemoryStore();
    long start = AccuracyKit.START_NANOS; // a window's start
    long[] offsets = {0, Duration.ofMillis(10).toNanos()};
    try (SimulatedNodes sim = new SimulatedNodes(2, Duration.ofMillis(100), Duration.ZERO, start, new SplittableRandom(1),
        i -> store, (i, s) -> SyncedLimiter.builder(limit, s).nodeId("c" + i).batchSize(1), offsets)) {
      sim.advanceTo(start + Duration.ofMillis(985).toNanos());
      assertThat(sim.decide(0, "k", 1).allowed()).as("node 0, at 985 ms of window 0 by its clock").isTrue();
      assertThat(sim.decide(1, "k", 1).allowed()).as("node 1, at 995 ms of window 0 by its clock").isFalse();
      sim.advanceTo(start + Duration.ofMillis(992).toNanos());
      assertThat(sim.decide(1, "k", 1).allowed()).as("node 1, 2 ms into window 1 by its clock").isTrue();
      assertThat(sim.decide(0, "k", 1).allowed()).as("node 0, still in window 0").isFalse();
    }
  }

  @Test
  void nodesThatAlignTheirClocksToTheStoresDecideAsOneClockWould() {
    Limit limit = Limit.fixedWindow("clocks").limit(1).window(Duration.ofSeconds(1)).build();
    MemoryStore store = new MemoryStore();
    long start = AccuracyKit.START_NANOS;
    long[] offsets = {0, Duration.ofMillis(10).toNanos()};
    try (SimulatedNodes sim = new SimulatedNodes(2, Duration.ofMillis(100), Duration.ZERO, start, new SplittableRandom(1),
        i -> store, (i, s) -> SyncedLimiter.builder(limit, s).nodeId("c" + i).batchSize(1).alignClockToStore(true),
        offsets)) {
      sim.advanceTo(start + Duration.ofMillis(985).toNanos());
      // (the simulation's clock is the store's: node 1 set back by its 10 ms)
      assertThat(sim.node(1).clockOffset().toNanos()).isBetween(-10_001_000L, -9_999_000L);
      assertThat(sim.decide(0, "k", 1).allowed()).as("node 0, at 985 ms of window 0").isTrue();
      assertThat(sim.decide(1, "k", 1).allowed()).as("node 1, at 985 ms of window 0 by the store's clock").isFalse();
      sim.advanceTo(start + Duration.ofMillis(992).toNanos());
      assertThat(sim.decide(1, "k", 1).allowed()).as("node 1, still in window 0 by the store's clock").isFalse();
      sim.advanceTo(start + Duration.ofMillis(1_001).toNanos());
      assertThat(sim.decide(1, "k", 1).allowed()).as("node 1, 1 ms into window 1").isTrue();
      assertThat(sim.decide(0, "k", 1).allowed()).as("node 0, 1 ms into window 1").isFalse();
    }
  }

  @Test
  void offsetsAreOnePerNode() {
    MemoryStore store = new MemoryStore();
    Limit limit = Limit.fixedWindow("clocks").limit(1).window(Duration.ofSeconds(1)).build();
    assertThatThrownBy(() -> new SimulatedNodes(2, Duration.ofMillis(100), Duration.ZERO,
        AccuracyKit.START_NANOS, new SplittableRandom(1), i -> store, (i, s) -> SyncedLimiter.builder(limit, s),
        new long[3])).isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("clockOffsetsNanos:");
  }
}
