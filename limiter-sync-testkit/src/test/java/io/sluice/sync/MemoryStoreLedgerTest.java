package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The in-memory store's ledger ({@link MemoryStore#counted}), which the accuracy kit compares with what
 * the nodes admitted: every permit counted on a key's windows, old windows dropped or not, less what
 * was given back; and short of the admissions where a node's counts never reached the store.
 */
class MemoryStoreLedgerTest {
  private final ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
  private final Limit limit = Limit.fixedWindow("ledger").limit(1_000).window(Duration.ofSeconds(1)).build();

  @Test
  void countsEveryPermitOnceWhateverWindowsTheKeyDropped() {
    MemoryStore store = new MemoryStore();
    long admitted = 0;
    try (SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("a").ticker(ticker).autoSync(false).build()) {
      for (int window = 0; window < 12; window++) { // (a key keeps a few windows: the rest are dropped)
        for (int i = 0; i < 7; i++) {
          admitted += node.tryAcquire("k", 2) ? 2 : 0;
          ticker.advance(Duration.ofMillis(100));
        }
        node.syncNow();
        ticker.advance(Duration.ofMillis(300));
      }
      assertThat(store.count(limit.name(), "k", 0)).isZero();
    }
    assertThat(admitted).isEqualTo(12 * 7 * 2);
    assertThat(store.counted(limit.name(), "k")).isEqualTo(admitted);
    long first = Math.floorDiv(Duration.ofHours(490_000).toNanos(), Duration.ofSeconds(1).toNanos());
    for (long w = first; w < first + 12; w++) {
      assertThat(store.counted(limit.name(), "k", w)).as("window %d", w - first).isEqualTo(14);
    }
    assertThat(store.countedInAll()).isEqualTo(admitted);
  }

  @Test
  void anExactReleaseIsTakenOffAndCountsANodeHasNotSentAreMissingUntilItCloses() {
    MemoryStore store = new MemoryStore();
    try (SyncedLimiter exact = SyncedLimiter.builder(limit, store).nodeId("e").ticker(ticker).batchSize(1)
        .autoSync(false).build()) {
      Decision d = exact.acquire("x", 5);
      assertThat(d.allowed()).isTrue();
      exact.release("x", 2, d);
      assertThat(store.counted(limit.name(), "x")).isEqualTo(3);
    }
    SyncedLimiter crashed = SyncedLimiter.builder(limit, store).nodeId("c").ticker(ticker).autoSync(false).build();
    for (int i = 0; i < 40; i++) {
      assertThat(crashed.tryAcquire("y")).isTrue();
    }
    // (never synced nor closed: a node that died with its counts)
    assertThat(store.counted(limit.name(), "y")).isLessThan(40);
    crashed.close(); // (which sends them)
    assertThat(store.counted(limit.name(), "y")).isEqualTo(40);
  }
}
