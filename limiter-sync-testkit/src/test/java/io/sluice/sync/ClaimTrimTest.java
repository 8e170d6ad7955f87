package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A node's claim granted far from the limit, sized by its demand then, used to stay whole with it near
 * the limit: the store kept all of a claim that a flush's amount had not used. Here node a starts busy
 * and then asks once every 100 ms while node b takes the key to its limit: a held 14 permits to the
 * window's end, and b was denied them (86 of 100 admitted; the exact algorithm admits 100). Now a fixed
 * window's flush near the limit keeps only what its node may admit before the answer (Delta#keeping),
 * and the store grants the rest anew, so b's requests get them.
 */
class ClaimTrimTest {

  @Test
  void aNodeNearTheLimitKeepsOnlyWhatItWillAdmitBeforeTheAnswer() {
    Limit limit = Limit.fixedWindow("trim").limit(100).window(Duration.ofMinutes(1)).build();
    MemoryStore store = new MemoryStore();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    try (SyncedLimiter a = node("a", limit, store, ticker); SyncedLimiter b = node("b", limit, store, ticker)) {
      // a busy start on a: its claim is sized by that demand
      for (int i = 0; i < 30; i++) {
        ticker.advance(Duration.ofMillis(2));
        assertThat(a.tryAcquire("k")).isTrue();
      }
      a.syncNow();
      // b takes the key near its limit, one request at a time, while a asks now and then
      int admittedByB = 0;
      int admittedByA = 30;
      for (int i = 0; i < 200; i++) {
        ticker.advance(Duration.ofMillis(5));
        admittedByB += b.tryAcquire("k") ? 1 : 0;
        if (i % 20 == 0) {
          admittedByA += a.tryAcquire("k") ? 1 : 0;
        }
        if (i % 20 == 10) {
          a.syncNow();
          b.syncNow();
        }
      }
      a.syncNow();
      b.syncNow();
      assertThat(admittedByA + admittedByB).as("never past the limit").isLessThanOrEqualTo(100);
      // every permit but what a kept for itself at its last flush went to a request
      assertThat(admittedByA + admittedByB).as("admitted a %d, b %d", admittedByA, admittedByB)
          .isGreaterThanOrEqualTo(97);
    }
  }

  private static SyncedLimiter node(String id, Limit limit, MemoryStore store, ManualTicker ticker) {
    return SyncedLimiter.builder(limit, store).nodeId(id).ticker(ticker).autoSync(false).activeNodes(() -> 2).build();
  }
}
