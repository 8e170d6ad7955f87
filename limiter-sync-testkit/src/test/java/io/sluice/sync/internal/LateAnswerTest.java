package io.sluice.sync.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.CoreAccess;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A flush applied by the store but answered late, after a decision's claim call (with a take) that
 * went out later and came back first: the flush's answer shows a claim from before the take. Taking it
 * as the view's claim would let the node admit permits the store no longer reserves; the view keeps
 * the smaller claim. The store here is a script of answers (the real stores' grant arithmetic is
 * checked by the store contract): what matters is the order in which the node takes them in.
 */
class LateAnswerTest {

  @Test
  void aFlushAnsweredAfterALaterClaimCallDoesNotRaiseTheClaimBack() throws Exception {
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos() + Duration.ofMinutes(1).toNanos());
    CountDownLatch flushSent = new CountDownLatch(1);
    CompletableFuture<FlushResult> heldAnswer = new CompletableFuture<>();
    java.util.concurrent.atomic.AtomicBoolean hold = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.atomic.AtomicBoolean takeNext = new java.util.concurrent.atomic.AtomicBoolean();
    CounterStore store = new CounterStore() {
      private long counted;

      @Override
      public int group(Counter counter, String key) {
        return 0;
      }

      @Override
      public int maxBatchSize() {
        return 100;
      }

      @Override
      public boolean countsTakes() {
        return true;
      }

      @Override
      public boolean keepsClaims() {
        return true;
      }

      @Override
      public synchronized CompletionStage<FlushResult> flush(Batch batch) {
        int n = batch.deltas().size();
        Delta d = batch.deltas().get(n - 1);
        if (batch.claimOnly()) {
          // before the race: what it needs and 5 ahead (the take not counted: the decision admits
          // under the claim); in it: the take counted, no claim left
          boolean take = takeNext.get();
          return CompletableFuture.completedFuture(answer(n, take ? counted + d.amount() : counted,
              take ? 0 : d.need() + 5, take));
        }
        counted += d.amount();
        if (!hold.get()) {
          return CompletableFuture.completedFuture(answer(n, counted, 5, false));
        }
        // the flush in the race: applied, its answer (a claim of 100 from before the take) held
        flushSent.countDown();
        return heldAnswer;
      }

      @Override
      public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
        return CompletableFuture.completedFuture(1);
      }

      @Override
      public void close() {
      }
    };
    Limit limit = Limit.fixedWindow("late").limit(1_000).window(Duration.ofHours(1)).build();
    SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("n").ticker(ticker).autoSync(false)
        .activeNodes(() -> 1).flushTimeout(Duration.ofSeconds(10)).claimTimeout(Duration.ofSeconds(5)).build();
    // a key asked every 10 ms: its flushes renew its claim (they do not give it up)
    for (int i = 0; i < 30; i++) {
      assertThat(node.tryAcquire("k", 1)).isTrue();
      ticker.advance(Duration.ofMillis(10));
      if (i % 10 == 9) {
        node.flushAll();
      }
    }
    assertThat(node.tryAcquire("k", 1)).isTrue(); // one permit for the flush to carry
    KeyView view = CoreAccess.core(node).viewOf("k");
    hold.set(true);
    takeNext.set(true);
    CompletableFuture<Boolean> flushing = CompletableFuture.supplyAsync(node::flushAll);
    assertThat(flushSent.await(10, TimeUnit.SECONDS)).isTrue();
    synchronized (view) {
      assertThat(view.releaseInFlight()).as("the flush renews the claim").isFalse();
    }
    // the claim cannot pay for 6 more: the claim call counts them and leaves no claim
    assertThat(node.tryAcquire("k", 6)).isTrue();
    synchronized (view) {
      assertThat(view.claim()).isZero();
    }
    long countedBefore;
    synchronized (view) {
      countedBefore = view.globalCur();
    }
    heldAnswer.complete(answer(1, countedBefore - 6, 100, false)); // the flush's answer, from before the take
    assertThat(flushing.get(10, TimeUnit.SECONDS)).isTrue();
    synchronized (view) {
      assertThat(view.claim()).as("the late answer's claim is from before the take").isZero();
      assertThat(view.globalCur()).as("the larger count of the two answers").isEqualTo(countedBefore);
    }
    node.close();
  }

  /** An answer for {@code n} deltas, the last one on the key: its count, the node's claim, taken or not. */
  private static FlushResult answer(int n, long current, long claim, boolean taken) {
    long[] values = new long[2 * n];
    long[] claims = new long[n];
    long[] splits = new long[n];
    long[] takenFlags = new long[n];
    values[2 * (n - 1)] = current;
    claims[n - 1] = claim;
    takenFlags[n - 1] = taken ? 1 : 0;
    return new FlushResult(true, values, null, claims, splits, takenFlags);
  }
}
