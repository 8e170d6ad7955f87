package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.sync.sim.SimulatedNodes;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A fixed window whose counts alone have reached its limit stays there until it ends: the nodes' counts
 * only grow (a release pays for the releasing node's next admissions, not for the store's count). A
 * node that has seen its key so denies every request until the window ends without asking the store
 * again, however old its view grows. (It asked once every two sync intervals, the view's staleness:
 * on the accuracy kit's small limits that was a tenth of its store calls, with no false denial saved.)
 */
class FullWindowTest {

  @Test
  void aFixedWindowFullByCountsIsDeniedWithoutAskingUntilItEnds() {
    Limit limit = Limit.fixedWindow("login").limit(5).window(Duration.ofMinutes(15)).build();
    MemoryStore store = new MemoryStore();
    long window = Duration.ofMinutes(15).toNanos();
    long start = (Duration.ofHours(490_000).toNanos() / window + 1) * window;
    try (SimulatedNodes sim = new SimulatedNodes(2, Duration.ofMillis(100), Duration.ofMillis(1), start,
        new SplittableRandom(3), i -> store, (i, s) -> SyncedLimiter.builder(limit, s).nodeId("n" + i))) {
      long at = start;
      int admitted = 0;
      for (int i = 0; i < 5; i++) { // the window's five permits, from both nodes
        at += Duration.ofSeconds(1).toNanos();
        sim.advanceTo(at);
        admitted += sim.decide(i % 2, "alice", 1).allowed() ? 1 : 0;
      }
      assertThat(admitted).isEqualTo(5);
      // each node learns the window is full (its first denial may ask), then a minute of attempts
      for (int i = 0; i < 4; i++) {
        at += Duration.ofSeconds(1).toNanos();
        sim.advanceTo(at);
        assertThat(sim.decide(i % 2, "alice", 1).allowed()).isFalse();
      }
      long calls = sim.storeCalls();
      for (int i = 0; i < 200; i++) {
        at += Duration.ofMillis(300).toNanos();
        sim.advanceTo(at);
        assertThat(sim.decide(i % 2, "alice", 1).allowed()).as("attempt %d", i).isFalse();
      }
      assertThat(sim.storeCalls() - calls).as("store calls over a minute of attempts on the full window").isZero();
      // the next window admits again
      sim.advanceTo(start + window + Duration.ofSeconds(1).toNanos());
      assertThat(sim.decide(0, "alice", 1).allowed()).isTrue();
    }
  }
}
