package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The synchronizer's accounting and bounds, driven step by step with a manual clock. */
class SyncedLimiterTest {
  private final ManualTicker ticker = new ManualTicker();
  private final Limit perMinute = Limit.fixedWindow("api").limit(1_000).window(Duration.ofMinutes(1)).build();

  private SyncedLimiter node(CounterStore store, String id, int nodes) {
    return SyncedLimiter.builder(perMinute, store).nodeId(id).ticker(ticker).autoSync(false)
        .activeNodes(() -> nodes).batchSize(50).syncInterval(Duration.ofMillis(100)).build();
  }

  /** Lost requests and lost answers, healed later: every admitted permit is counted exactly once. */
  @Test
  void failedAndIndeterminateFlushesNeitherLoseNorDoubleCount() {
    FlakyMemoryStore store = new FlakyMemoryStore(7);
    store.faults(0.3, 0.3);
    List<SyncedLimiter> nodes = new ArrayList<>();
    for (int n = 0; n < 3; n++) {
      nodes.add(node(store, "n" + n, 3));
    }
    SplittableRandom random = new SplittableRandom(1);
    for (int step = 0; step < 2_000; step++) {
      SyncedLimiter node = nodes.get(random.nextInt(3));
      node.tryAcquire("k" + random.nextInt(12));
      if (step % 20 == 0) {
        nodes.forEach(SyncedLimiter::syncNow);
      }
      ticker.advance(Duration.ofMillis(5)); // ten seconds in all: one window
    }
    store.faults(0, 0);
    for (SyncedLimiter node : nodes) {
      assertThat(node.syncNow()).isTrue();
      assertThat(node.syncNow()).isTrue(); // the retry of a failed batch, then the rest
      assertThat(node.pending()).isZero();
    }
    long admitted = nodes.stream().mapToLong(SyncedLimiter::admitted).sum();
    assertThat(store.total()).isEqualTo(admitted);
    assertThat(nodes.stream().mapToLong(SyncedLimiter::storeFailures).sum()).isPositive();
  }

  /**
   * Four nodes syncing only every ten rounds (no urgent syncs: the stalest views this test can make)
   * stay within 1% of the limit; with the flusher's urgent syncs the error is far smaller (see the
   * Redis integration test).
   */
  @Test
  void nodesWithStaleViewsStayWithinOnePercentOfTheLimit() {
    FlakyMemoryStore store = new FlakyMemoryStore(3);
    int n = 4;
    List<SyncedLimiter> nodes = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      nodes.add(node(store, "n" + i, n));
    }
    long admitted = 0;
    // demand far above the limit, interleaved across nodes, syncing every 10 decisions per node
    for (int round = 0; round < 5_000; round++) {
      for (SyncedLimiter node : nodes) {
        if (node.tryAcquire("hot")) {
          admitted++;
        }
        if (round % 10 == 0) {
          node.syncNow();
        }
      }
    }
    nodes.forEach(SyncedLimiter::close);
    assertThat(admitted).isBetween(perMinute.capacity() - n, perMinute.capacity() + perMinute.capacity() / 100);
    assertThat(store.total()).isEqualTo(admitted);
  }

  @Test
  void aKeyOverItsLimitIsDeniedFromTheCacheUntilTheWindowEnds() {
    FlakyMemoryStore store = new FlakyMemoryStore(5);
    SyncedLimiter node = node(store, "n0", 1);
    while (node.tryAcquire("k")) {
      node.syncNow();
    }
    node.syncNow();
    int callsBefore = store.calls;
    Decision d = node.acquire("k");
    assertThat(d.allowed()).isFalse();
    assertThat(d.retryAfterNanos()).isPositive().isLessThanOrEqualTo(Duration.ofMinutes(1).toNanos());
    for (int i = 0; i < 1_000; i++) {
      assertThat(node.tryAcquire("k")).isFalse();
    }
    assertThat(node.cachedDenials()).isGreaterThanOrEqualTo(1_000);
    node.syncNow();
    assertThat(store.calls - callsBefore).isLessThanOrEqualTo(1);
    ticker.advance(Duration.ofMinutes(1));
    node.syncNow(); // a fresh view of the new window
    assertThat(node.tryAcquire("k")).isTrue();
  }

  @Test
  void rejectsBadSettings() {
    FlakyMemoryStore store = new FlakyMemoryStore(1);
    assertThatThrownBy(() -> SyncedLimiter.builder(Limit.tokenBucket("tb").capacity(1).refill(1, Duration.ofSeconds(1)).build(), store))
        .hasMessageStartingWith("limit:");
    assertThatThrownBy(() -> SyncedLimiter.builder(perMinute, null)).hasMessageStartingWith("store:");
    assertThatThrownBy(() -> SyncedLimiter.builder(perMinute, store).batchSize(0)).hasMessageStartingWith("batchSize:");
    assertThatThrownBy(() -> SyncedLimiter.builder(perMinute, store).syncInterval(Duration.ofMinutes(1)))
        .hasMessageStartingWith("syncInterval:");
    assertThatThrownBy(() -> SyncedLimiter.builder(perMinute, store).nodeId("bad id")).hasMessageStartingWith("nodeId:");
    assertThatThrownBy(() -> SyncedLimiter.builder(perMinute, store).maxError(0)).hasMessageStartingWith("maxError:");
    SyncedLimiter node = node(store, "n", 1);
    assertThatThrownBy(() -> node.tryAcquire("")).hasMessageStartingWith("key:");
    assertThatThrownBy(() -> node.tryAcquire("k", 1_001)).hasMessageStartingWith("cost:");
  }
}
