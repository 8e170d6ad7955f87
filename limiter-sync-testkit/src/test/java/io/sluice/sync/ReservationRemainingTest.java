package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Reservation mode's remaining permits (the RateLimit headers' remaining): what this node holds of its
 * grants and what the store had granted no node at its last answer, not the grant alone. (The grant
 * alone, seen through the sidecar with a limit of 5 a minute: remaining 0, 1, 0, 1, 0 for five admitted
 * requests, where the approximate mode and the exact algorithm say 4, 3, 2, 1, 0.)
 */
class ReservationRemainingTest {

  private static List<Long> remainingOfFiveAdmitted(Limit limit) {
    ManualTicker ticker = new ManualTicker(1_000_000_000_000L); // a window's start
    List<Long> remaining = new ArrayList<>();
    try (MemoryStore store = new MemoryStore();
        SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("a").ticker(ticker).autoSync(false)
            .activeNodes(() -> 1).reservation().build()) {
      for (int i = 0; i < 6; i++) {
        ticker.advance(Duration.ofMillis(10));
        Decision d = node.acquire("k");
        assertThat(d.allowed()).as("request %d", i).isEqualTo(i < 5);
        remaining.add(d.remaining());
      }
    }
    return remaining;
  }

  @Test
  void aFixedWindowsRemainingCountsDownAsTheExactAlgorithms() {
    Limit limit = Limit.fixedWindow("res5").limit(5).window(Duration.ofMinutes(1)).build();
    assertThat(remainingOfFiveAdmitted(limit)).containsExactly(4L, 3L, 2L, 1L, 0L, 0L);
  }

  @Test
  void aSlidingWindowsRemainingCountsDownToo() {
    Limit limit = Limit.slidingWindowCounter("res5s").limit(5).window(Duration.ofMinutes(1)).build();
    assertThat(remainingOfFiveAdmitted(limit)).containsExactly(4L, 3L, 2L, 1L, 0L, 0L);
  }
}
