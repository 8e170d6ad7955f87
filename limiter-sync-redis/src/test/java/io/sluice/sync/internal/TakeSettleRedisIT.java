package io.sluice.sync.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.CoreAccess;
import io.sluice.sync.ForwardingStore;
import io.sluice.sync.RedisFixture;
import io.sluice.sync.StoreBreakerConfig;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.StoreUnavailableException;
import io.sluice.sync.testkit.CounterStoreContract;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A take whose answer was lost, settled by a flush that fails once and is sent again, two windows
 * later, against a real {@code redis-server} (which keeps old windows until its next clean-up): the
 * settle must take the denied request's permit back exactly once. (A requeued settle for an old window
 * was once orphaned with its settle while the view sent it again: the permit taken back twice.)
 */
class TakeSettleRedisIT {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();

  @Test
  void aSettleRequeuedBehindAFailedPartIsAppliedOnce() {
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    String prefix = "settle-" + UUID.randomUUID().toString().substring(0, 8);
    RedisCounterStore redisStore = RedisCounterStore.connect(RedisStoreConfig.builder(redis.uri()).keyPrefix(prefix).build());
    AtomicInteger loseNextTakeAnswer = new AtomicInteger();
    AtomicInteger failNextNumbered = new AtomicInteger();
    CounterStore store = new ForwardingStore(redisStore) {
      @Override
      public int maxBatchSize() {
        return 1; // every delta a part of its own: one failing part requeues the rest
      }

      @Override
      public CompletionStage<FlushResult> flush(Batch batch) {
        if (!batch.claimOnly() && failNextNumbered.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
          return CompletableFuture.failedFuture(new StoreUnavailableException("injected: not applied", null));
        }
        FlushResult r = redisStore.flush(batch).toCompletableFuture().join();
        if (batch.claimOnly() && batch.deltas().stream().anyMatch(d -> d.token() > 0)
            && loseNextTakeAnswer.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
          return CompletableFuture.failedFuture(new StoreUnavailableException("injected: applied, answer lost", null));
        }
        return CompletableFuture.completedFuture(r);
      }
    };
    Limit limit = Limit.fixedWindow("settle").limit(5).window(Duration.ofSeconds(1)).build();
    Counter counter = Counter.of(limit);
    try (SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("n").ticker(ticker).autoSync(false)
        .activeNodes(() -> 1).onStoreFailure(StoreFailurePolicy.FAIL_CLOSED)
        .storeBreaker(StoreBreakerConfig.custom().waitInOpenState(Duration.ofSeconds(60)).slowCallDuration(Duration.ofSeconds(60))
              .slowCallRateThreshold(100).permittedCallsInHalfOpenState(10).slidingWindowSize(1_000).minimumNumberOfCalls(1_000).build())
        .build()) {
      long w = Math.floorDiv(ticker.read(), Duration.ofSeconds(1).toNanos());
      // window w: key a asked twice at once holds a claim (it waits for a flush, first in line); k's
      // take is counted and its answer lost: FAIL_CLOSED denies the request
      assertThat(node.tryAcquire("a")).isTrue();
      assertThat(node.tryAcquire("a")).isTrue();
      assertThat(CoreAccess.core(node).viewOf("a").queued()).as("a waits for a flush").isTrue();
      loseNextTakeAnswer.set(1);
      assertThat(node.tryAcquire("k")).isFalse();
      assertThat(CounterStoreContract.readWindow(redisStore, counter, "k", w)).as("the take counted").isEqualTo(1);
      // two windows on, k's view jumps to w + 2 with the settle of w pending
      ticker.advance(Duration.ofMillis(2_100));
      assertThat(node.tryAcquire("k")).isTrue();
      // the first part of the next sync (a's) fails: the rest, the settle of w among them, is requeued
      failNextNumbered.set(1);
      node.flushAll();
      for (int i = 0; i < 3; i++) {
        node.flushAll();
      }
      assertThat(node.pending()).isZero();
      assertThat(CounterStoreContract.readWindow(redisStore, counter, "k", w))
          .as("the denied request's permit taken back once").isZero();
    }
  }
}
