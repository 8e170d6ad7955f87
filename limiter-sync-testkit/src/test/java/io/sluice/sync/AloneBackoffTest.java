package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Found by the accuracy kit on a seed it does not run (large limit, sliding window, one node, seed
 * 16118): a node that counts itself alone, before the registry has confirmed it, holds no part of a
 * sliding window's fading, so its asks take what fades. After an ask that found less free than it
 * needed, it denied without asking until the fading had freed the whole need, as if nothing had been
 * free at the ask: a request of 1,900 at +2.2 ms of a window was denied with 2,164 free, and 70
 * requests were swapped after it (1.167% of requests). It now asks again as soon as what the answer's
 * counts leave, and what has faded since, covers the need (WindowClaims#noteAsked).
 */
class AloneBackoffTest {
  private static final Duration SECOND = Duration.ofSeconds(1);

  /**
   * A sliding window of 100,000 a second, full in the window gone by: 100 permits fade free each ms.
   * At +0.84 ms 84 are free and a request of 144 is denied (the exact algorithm denies it too); at
   * +2.18 ms 218 are free, and the exact algorithm admits a request of 190.
   */
  @Test
  void aNodeAloneAsksAgainOnceTheFadingCoversTheNeed() {
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    Limit limit = Limit.slidingWindowCounter("api").limit(100_000).window(SECOND).build();
    MemoryStore store = new MemoryStore();
    long w = Math.floorDiv(ticker.read(), SECOND.toNanos());
    long next = (w + 1) * SECOND.toNanos();
    // (no heartbeat answered: the node counts itself alone, unconfirmed)
    try (SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("n").ticker(ticker).autoSync(false).build()) {
      ticker.advanceNanos(w * SECOND.toNanos() + 10_000_000 - ticker.read());
      for (int i = 0; i < 100; i++) {
        assertThat(node.tryAcquire("k", 1_000)).as("the window gone by, %d", i).isTrue();
      }
      node.syncNow();
      assertThat(store.count("api", "k", w)).isEqualTo(100_000);

      ticker.advanceNanos(next + 840_000 - ticker.read());
      assertThat(node.tryAcquire("k", 144)).as("84 free at +0.84 ms").isFalse();
      ticker.advanceNanos(next + 2_180_000 - ticker.read());
      assertThat(node.tryAcquire("k", 190)).as("218 free at +2.18 ms").isTrue();
      assertThat(node.tryAcquire("k", 100)).as("28 free after it").isFalse();
    }
  }
}
