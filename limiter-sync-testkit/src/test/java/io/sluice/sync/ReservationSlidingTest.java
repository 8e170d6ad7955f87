package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.node.RateLimiter;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Reservation mode on a sliding window, one node, against the exact algorithm on the same clock. Two
 * ways it denied where the exact algorithm admits, both at a limit that the previous window frees
 * as it fades (the accuracy kit's sliding profiles, one node: up to 9.0% of requests denied that the
 * exact algorithm admitted):
 * <ul>
 *   <li>after the store answered that nothing was free, the node did not ask again until a whole
 *       permit's fading time had passed since that answer, and denied the request that came when the
 *       fading crossed a permit sooner;</li>
 *   <li>a grant left unused when its window ended stayed counted in the store, and as the previous
 *       window's count it weighed in the next one.</li>
 * </ul>
 */
class ReservationSlidingTest {
  private static final long SECOND = 1_000_000_000L;
  /** A window start (windows are aligned to the epoch). */
  private static final long START = 1_000 * SECOND;

  private final ManualTicker ticker = new ManualTicker(START);
  private final ManualTicker exactTicker = new ManualTicker(START);
  private final MemoryStore store = new MemoryStore();

  private SyncedLimiter node(Limit limit) {
    return SyncedLimiter.builder(limit, store).nodeId("r").ticker(ticker).autoSync(false).activeNodes(() -> 1)
        .batchSize(100).reservation().build();
  }

  private void at(long nanosFromStart) {
    ticker.advanceNanos(START + nanosFromStart - ticker.read());
    exactTicker.advanceNanos(START + nanosFromStart - exactTicker.read());
  }

  @Test
  void aRequestIsAskedForAsSoonAsTheFadingHasFreedIt() {
    Limit limit = Limit.slidingWindowCounter("fade").limit(10).window(Duration.ofSeconds(1)).build();
    RateLimiter exact = RateLimiter.builder(limit).ticker(exactTicker).build();
    try (SyncedLimiter node = node(limit)) {
      for (int i = 0; i < 10; i++) { // the first window full
        at(500_000_000L + i);
        assertThat(exact.tryAcquire("k")).isTrue();
        assertThat(node.tryAcquire("k")).isTrue();
      }
      // 50 ms into the next one: 10 x 0.95 = 9.5 counted, no room for a permit; the store says so
      at(SECOND + 50_000_000L);
      assertThat(exact.tryAcquire("k")).isFalse();
      assertThat(node.tryAcquire("k")).isFalse();
      // 100.1 ms in: 10 x 0.8999 < 9, a permit has faded, 50.1 ms after the store's answer (a
      // permit's fading time is 100 ms)
      at(SECOND + 100_100_000L);
      assertThat(exact.tryAcquire("k")).isTrue();
      assertThat(node.tryAcquire("k")).as("admitted as the exact algorithm admits it").isTrue();
    }
  }

  @Test
  void aGrantLeftUnusedAtTheWindowsEndIsGivenBack() {
    Limit limit = Limit.slidingWindowCounter("left").limit(100).window(Duration.ofSeconds(1)).build();
    try (SyncedLimiter node = node(limit)) {
      long w = START / SECOND;
      // a burst: each grant asked for within a sync interval of the last asks for twice as much ahead
      // (grants of 1, 2, 3, 5, 9 and 17: the last covers the 21st request and 16 more)
      for (int i = 0; i < 21; i++) {
        at(900_000_000L + i * 1_000_000L);
        assertThat(node.tryAcquire("k")).isTrue();
      }
      assertThat(store.count("left", "k", w)).as("granted ahead of the burst's requests").isGreaterThan(21);
      at(SECOND + 1_000_000L);
      assertThat(node.tryAcquire("k")).isTrue();
      assertThat(store.count("left", "k", w)).as("the previous window counts what was admitted").isEqualTo(21);
    }
  }
}
