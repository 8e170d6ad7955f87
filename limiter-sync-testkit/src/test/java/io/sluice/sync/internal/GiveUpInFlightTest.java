package io.sluice.sync.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.AccuracyKit;
import io.sluice.sync.AnswerLaterStore;
import io.sluice.sync.CoreAccess;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A flush that gives a node's claim up (its key went idle near the limit) is applied by the store
 * before the node hears of it: from then on the store holds no claim for the node and grants what was
 * in it to the others. A decision that comes to the node while that flush travels must not admit
 * under the claim being given up (found by `tune --algorithm fixed`, mixed profile, 4 nodes: a node
 * idle for a moment admitted its last 4 permits so, and a key-window ended at 104 of a limit of 100).
 */
class GiveUpInFlightTest {

  @Test
  void aClaimBeingGivenUpPaysForNothingMore() throws Exception {
    Limit limit = Limit.fixedWindow("give-up").limit(100).window(Duration.ofSeconds(1)).build();
    ManualTicker ticker = new ManualTicker(AccuracyKit.START_NANOS);
    MemoryStore memory = new MemoryStore();
    AnswerLaterStore store = AnswerLaterStore.gated(memory);
    store.openGate();
    SyncedLimiter a = SyncedLimiter.builder(limit, store).nodeId("a").ticker(ticker).activeNodes(() -> 2)
        .autoSync(false).syncInterval(Duration.ofMillis(100)).build();
    SyncedLimiter b = SyncedLimiter.builder(limit, memory).nodeId("b").ticker(ticker).activeNodes(() -> 2)
        .autoSync(false).syncInterval(Duration.ofMillis(100)).build();
    try {
      // the other node has counted more than half the limit: near it, an idle key's claim is given up
      for (int i = 0; i < 55; i++) {
        assertThat(b.tryAcquire("k")).isTrue();
      }
      b.flushAll();
      // this node asks every 10 ms and syncs every 100 ms: it holds a claim ahead of its requests
      for (int i = 0; i < 20; i++) {
        assertThat(a.tryAcquire("k")).isTrue();
        ticker.advance(Duration.ofMillis(10));
        if (i % 10 == 9) {
          a.syncNow();
        }
      }
      KeyView v = CoreAccess.core(a).viewOf("k");
      long unused;
      synchronized (v) {
        unused = v.claim() - v.pendingCur();
      }
      assertThat(unused).as("what this node holds unused before it goes idle").isPositive();
      long window = Math.floorDiv(ticker.read(), limit.periodNanos());
      long claimsBefore = memory.claims("give-up", "k", window);

      // idle past a sync interval: the regular sync gives the claim up, and its answer is held
      ticker.advance(Duration.ofMillis(250));
      store.closeGate();
      Thread sync = new Thread(a::syncNow);
      sync.start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (store.held() == 0 && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      assertThat(store.held()).as("the flush giving the claim up, sent").isEqualTo(1);
      assertThat(memory.claims("give-up", "k", window)).as("the claims the store holds once it applied that flush")
          .isLessThanOrEqualTo(claimsBefore - unused);

      synchronized (v) {
        assertThat(v.claim() - v.pendingCur()).as("what the node may still admit under a claim the store holds no more")
            .isLessThanOrEqualTo(0);
      }
      store.release();
      sync.join();
    } finally {
      store.openGate();
      a.close();
      b.close();
    }
  }
}
