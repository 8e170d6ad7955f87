package io.sluice.sync.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.AccuracyKit;
import io.sluice.sync.AnswerLaterStore;
import io.sluice.sync.CoreAccess;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * Decisions on cold keys that each ask the store for a claim, at the same time: while one claim call
 * is on its way, the others wait in the limiter's lane and go together in the next call, one batch of
 * many keys, each decision answered from its own place in it (ClaimLanes). Every take is counted once,
 * also where the answers came too late and the failure policy decided.
 */
class ClaimLanesTest {
  private static final Limit LIMIT = Limit.fixedWindow("lanes").limit(100).window(Duration.ofMinutes(1)).build();

  @Test
  void claimCallsAskedWhileOneIsUnderWayGoTogetherInTheNext() throws Exception {
    ManualTicker ticker = new ManualTicker(AccuracyKit.START_NANOS);
    MemoryStore memory = new MemoryStore();
    AnswerLaterStore store = AnswerLaterStore.gated(memory);
    ExecutorService deciders = Executors.newFixedThreadPool(8);
    SyncedLimiter node = SyncedLimiter.builder(LIMIT, store).nodeId("a").ticker(ticker).activeNodes(() -> 1)
        .autoSync(false).claimTimeout(Duration.ofSeconds(30)).flushTimeout(Duration.ofSeconds(30)).build();
    try {
      Future<Boolean> first = deciders.submit(() -> node.tryAcquire("k0"));
      await(() -> store.held() == 1, "the first key's claim call, sent and unanswered");
      List<Future<Boolean>> others = new ArrayList<>();
      for (int k = 1; k < 8; k++) {
        String key = "k" + k;
        others.add(deciders.submit(() -> node.tryAcquire(key)));
      }
      for (int k = 1; k < 8; k++) {
        KeyView v = viewOnceMade(node, "k" + k);
        await(() -> v.storeCallUnderway(), v.key() + "'s decision, waiting for its claim");
      }
      assertThat(store.sent()).as("calls sent while the first is on its way").isEqualTo(1);

      // the first answer comes: its decision goes on, and the seven asked meanwhile go in one call
      assertThat(store.release()).isEqualTo(1);
      assertThat(first.get(10, TimeUnit.SECONDS)).isTrue();
      await(() -> store.held() == 1, "the seven keys' call");
      assertThat(store.sent()).isEqualTo(2);
      assertThat(store.release()).isEqualTo(1);
      for (Future<Boolean> f : others) {
        assertThat(f.get(10, TimeUnit.SECONDS)).isTrue();
      }
      long window = Math.floorDiv(ticker.read(), LIMIT.periodNanos());
      for (int k = 0; k < 8; k++) {
        assertThat(memory.count("lanes", "k" + k, window)).as("k%d's permit, counted by its take", k).isEqualTo(1);
      }
      assertThat(memory.calls()).as("store calls for 8 decisions on 8 cold keys").isEqualTo(2);
      assertThat(node.waitedDecisions()).isEqualTo(8);
    } finally {
      store.openGate();
      deciders.shutdownNow();
      node.close();
    }
  }

  @Test
  void decisionsWhoseCallsTimeOutInALaneAreCountedOnceByTheirNextFlush() throws Exception {
    ManualTicker ticker = new ManualTicker(AccuracyKit.START_NANOS);
    MemoryStore memory = new MemoryStore();
    AnswerLaterStore store = AnswerLaterStore.gated(memory);
    ExecutorService deciders = Executors.newFixedThreadPool(2);
    SyncedLimiter node = SyncedLimiter.builder(LIMIT, store).nodeId("a").ticker(ticker).activeNodes(() -> 1)
        .autoSync(false).onStoreFailure(StoreFailurePolicy.FAIL_OPEN).claimTimeout(Duration.ofMillis(300))
        .flushTimeout(Duration.ofSeconds(30)).build();
    try {
      Future<Boolean> first = deciders.submit(() -> node.tryAcquire("k0"));
      await(() -> store.held() == 1, "the first key's claim call, sent and unanswered");
      // the second key's decision waits behind it, and then for its own call (sent once the first
      // timed out): no answer within the claim timeout, so the failure policy admits both
      assertThat(deciders.submit(() -> node.tryAcquire("k1")).get(10, TimeUnit.SECONDS)).isTrue();
      assertThat(first.get(10, TimeUnit.SECONDS)).isTrue();
      // the answers come late: the takes they carried were applied, and are settled, not counted again
      store.openGate();
      assertThat(node.flushAll()).isTrue();
      long window = Math.floorDiv(ticker.read(), LIMIT.periodNanos());
      for (int k = 0; k < 2; k++) {
        assertThat(memory.count("lanes", "k" + k, window)).as("k%d: admitted once, counted once", k).isEqualTo(1);
      }
      assertThat(node.tryAcquire("k1")).isTrue();
      assertThat(node.flushAll()).isTrue();
      assertThat(memory.count("lanes", "k1", window)).isEqualTo(2);
    } finally {
      store.openGate();
      deciders.shutdownNow();
      node.close();
    }
  }

  private static KeyView viewOnceMade(SyncedLimiter node, String key) {
    KeyView[] v = new KeyView[1];
    await(() -> (v[0] = CoreAccess.core(node).viewOf(key)) != null, key + "'s view");
    return v[0];
  }

  private static void await(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waited 10 s for %s", what).isLessThan(deadline);
      Thread.onSpinWait();
    }
  }
}
