package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The registry drops every node whose beats stop, and in an outage all of them stop: the first beat
 * through afterwards finds the others gone although they are still admitting on their local shares. A
 * node must not take that smaller count at once (it would size its share or its claims as if it were
 * alone, and the nodes together pass the limit: 1,130 admitted in a window of a limit of 600 on three
 * nodes after a frozen Redis thawed), while a node that leaves in calm weather is believed at once.
 */
class NodeCountAfterFaultTest {
  private static final Duration INTERVAL = Duration.ofSeconds(1);

  @Test
  void aSmallerCountRightAfterAnOutageIsNotBelieved() throws Exception {
    MemoryStore memory = new MemoryStore();
    CutLink link = new CutLink(memory);
    try (SyncedLimiter node = limiter(link)) {
      // another node, whose entry will run out while the store is unreachable
      memory.heartbeat("other", System.currentTimeMillis(), Duration.ofMillis(200)).toCompletableFuture().join();
      node.heartbeatNow();
      assertThat(node.registeredNodes()).as("before the outage").isEqualTo(2);

      link.cut = true;
      node.heartbeatNow();
      Thread.sleep(300); // the other node's entry runs out
      link.cut = false;

      node.heartbeatNow();
      assertThat(memory.heartbeat("probe", System.currentTimeMillis(), Duration.ofMillis(1)).toCompletableFuture()
          .join()).as("the registry itself: this node and the probe").isEqualTo(2);
      assertThat(node.registeredNodes()).as("the first count through after the outage says 1; held at 2")
          .isEqualTo(2);
      assertThat(node.activeNodes()).isEqualTo(2);
    }
  }

  @Test
  void aSmallerCountWithoutAFaultIsBelievedAtOnce() throws Exception {
    MemoryStore memory = new MemoryStore();
    try (SyncedLimiter node = limiter(new CutLink(memory))) {
      memory.heartbeat("other", System.currentTimeMillis(), Duration.ofMillis(200)).toCompletableFuture().join();
      node.heartbeatNow();
      assertThat(node.registeredNodes()).isEqualTo(2);
      Thread.sleep(300);
      node.heartbeatNow();
      assertThat(node.registeredNodes()).as("the other node left, and this one had no fault").isEqualTo(1);
    }
  }

  @Test
  void aLargerCountIsBelievedAtOnceEvenRightAfterAnOutage() {
    MemoryStore memory = new MemoryStore();
    CutLink link = new CutLink(memory);
    try (SyncedLimiter node = limiter(link)) {
      node.heartbeatNow();
      assertThat(node.registeredNodes()).isEqualTo(1);
      link.cut = true;
      node.heartbeatNow();
      link.cut = false;
      memory.heartbeat("other", System.currentTimeMillis(), Duration.ofMinutes(1)).toCompletableFuture().join();
      node.heartbeatNow();
      assertThat(node.registeredNodes()).as("more nodes: smaller shares, never over the limit").isEqualTo(2);
    }
  }

  private static SyncedLimiter limiter(CounterStore store) {
    return SyncedLimiter.builder(Limit.fixedWindow("count").limit(600).window(Duration.ofSeconds(1)).build(), store)
        .nodeId("n").autoSync(false).heartbeatInterval(INTERVAL)
        .storeBreaker(StoreBreakerConfig.custom().waitInOpenState(Duration.ofSeconds(60)).slowCallDuration(Duration.ofSeconds(60))
              .slowCallRateThreshold(100).permittedCallsInHalfOpenState(10).slidingWindowSize(100).minimumNumberOfCalls(100).build())
        .build();
  }
}
