package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * An open breaker closes again once the store is back, under a failure policy that admits nothing.
 * Resilience4j leaves the open state only when a call asks it for a permission. With the breaker open
 * every decision was the policy's, made without asking; under FAIL_CLOSED nothing was admitted, so
 * nothing was flushed, and the node's heartbeat was the only call left, skipped whenever another
 * limiter of the node had beaten within half an interval before: the breaker stayed open with the
 * store long back (the chaos suite's latency fault: one node's breaker still open 30 s after the fault
 * ended, in 2 runs of 3 with a claim given up as its flush goes out). A decision now asks the breaker
 * once its wait is over, and its own store call is the one that tries the store again.
 */
class BreakerRecoveryTest {

  @Test
  void failClosedDecisionsTryTheStoreAgainOnceTheBreakersWaitIsOver() {
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    SlowLink link = new SlowLink(new MemoryStore(), ticker);
    Limit limit = Limit.fixedWindow("recover").limit(1_000).window(Duration.ofMinutes(1)).build();
    // (no heartbeats: this limiter is driven by hand and the test beats for it never)
    try (SyncedLimiter node = SyncedLimiter.builder(limit, link).nodeId("n").ticker(ticker).autoSync(false)
        .onStoreFailure(StoreFailurePolicy.FAIL_CLOSED)
        .storeBreaker(StoreBreakerConfig.custom().slidingWindowSize(2).minimumNumberOfCalls(2)
            .slowCallDuration(Duration.ofMillis(50)).slowCallRateThreshold(100)
            .waitInOpenState(Duration.ofMillis(200)).permittedCallsInHalfOpenState(1).build())
        .breakerClock(new TickerClock(ticker))
        .build()) {
      // every answer takes 100 ms (slow from 50 ms): the breaker opens on slow calls that all
      // succeed, so that no batch is kept to be sent again
      link.slow = true;
      for (int i = 0; i < 10 && node.storeBreaker().state() != StoreBreaker.State.OPEN; i++) {
        step(node, ticker, "s" + i);
      }
      assertThat(node.storeBreaker().state()).as("opened by slow calls").isEqualTo(StoreBreaker.State.OPEN);
      long callsWhenOpened = node.storeCalls();

      link.slow = false;
      int admitted = 0;
      int denied = 0;
      for (int i = 0; i < 20; i++) {
        boolean a = step(node, ticker, "b" + i);
        admitted += a ? 1 : 0;
        denied += a ? 0 : 1;
      }
      assertThat(node.storeCalls()).as("store calls once the store was back").isGreaterThan(callsWhenOpened);
      assertThat(node.storeBreaker().state()).as("closed again").isEqualTo(StoreBreaker.State.CLOSED);
      // the breaker's wait of 200 ms: the decisions within it are the policy's, the rest the store's
      assertThat(denied).as("denied, of 20 requests 50 ms apart far below the limit").isBetween(1, 5);
      assertThat(admitted).isEqualTo(20 - denied);
    }
  }

  /** 50 ms later: a decision on {@code key}, then a sync; whether it was admitted. */
  private static boolean step(SyncedLimiter node, ManualTicker ticker, String key) {
    ticker.advance(Duration.ofMillis(50));
    boolean admitted = node.tryAcquire(key);
    node.syncNow();
    return admitted;
  }

  /** A link whose answers, while {@code slow}, take 100 ms of the test's clock (the calls' clock without a flusher thread). */
  private static final class SlowLink extends ForwardingStore {
    private final ManualTicker ticker;
    volatile boolean slow;

    SlowLink(CounterStore inner, ManualTicker ticker) {
      super(inner);
      this.ticker = ticker;
    }

    @Override
    public CompletionStage<FlushResult> flush(Batch batch) {
      if (slow) {
        ticker.advance(Duration.ofMillis(100));
      }
      return inner.flush(batch);
    }
  }
}
