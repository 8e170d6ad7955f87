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

  /**
   * A request larger than what is left, denied: its remaining and retry-after say what the exact
   * algorithm's do (what is left, and when the cost fits), on a node alone. It answered remaining 0 and
   * a retry after one sync interval, where the retry was denied again (a fixed window's retry-after was
   * mended before; a sliding window's and both remainings were not).
   */
  private static Decision[] largeCostDeniedAlone(Limit limit) {
    ManualTicker ticker = new ManualTicker(Duration.ofSeconds(16 * 60 + 20).toNanos()); // 20 s into a window
    try (MemoryStore store = new MemoryStore();
        SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("a").ticker(ticker).autoSync(false)
            .activeNodes(() -> 1).reservation().build()) {
      Decision first = node.acquire("k", 600);
      ticker.advance(Duration.ofMillis(10));
      Decision denied = node.acquire("k", 600);
      ticker.advance(Duration.ofMillis(10));
      Decision fits = node.acquire("k", 300);
      return new Decision[] {first, denied, fits};
    }
  }

  @Test
  void aDeniedLargeCostSaysWhatIsLeftAndWhenItFits() {
    for (Limit limit : new Limit[] {
        Limit.fixedWindow("big").limit(1_000).window(Duration.ofMinutes(1)).build(),
        Limit.slidingWindowCounter("bigs").limit(1_000).window(Duration.ofMinutes(1)).build()}) {
      Decision[] d = largeCostDeniedAlone(limit);
      assertThat(d[0].allowed()).isTrue();
      assertThat(d[1].allowed()).as("%s: 600 more", limit.algorithm()).isFalse();
      assertThat(d[1].remaining()).as("%s: remaining of the denial", limit.algorithm()).isEqualTo(400);
      // the fixed window's count fits the cost at the window's end (40 s on); the sliding window's once
      // the 600 admitted have faded by 200: a third of the next window in, 60 s on
      long expected = limit.algorithm() == io.sluice.node.Algorithm.FIXED_WINDOW ? 40 : 60;
      assertThat(d[1].retryAfterNanos() / 1e9).as("%s: retry-after of the denial, s", limit.algorithm())
          .isCloseTo(expected, org.assertj.core.data.Offset.offset(0.1));
      assertThat(d[2].allowed()).as("%s: 300 fit", limit.algorithm()).isTrue();
      assertThat(d[2].remaining()).isEqualTo(100);
    }
  }
}
