package io.sluice.sync.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.sluice.node.Limit;
import io.sluice.sync.AnswerLaterStore;
import io.sluice.sync.CoreAccess;
import io.sluice.sync.StoreBreaker;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A store that answers every call, but slowly (over half the flush timeout, under it), opens the
 * breaker by the slow-call rate alone: the failure policy decides then, as it does for a store that
 * fails. (The chaos suite's latency fault shows it against a real Redis behind Toxiproxy only now
 * and then: on a 2-core machine its 400-500 ms replies queue behind one another on a node's one
 * connection and mostly run out of time, which opens the breakers by the failure rate instead.)
 */
class SlowStoreBreakerTest {

  @Test
  void callsSlowerThanHalfTheFlushTimeoutOpenTheBreakerByThemselves() {
    Limit limit = Limit.fixedWindow("slow").limit(1_000_000).window(Duration.ofMinutes(1)).build();
    // answers 600 ms after each call; flushes and claim calls time out after 1 s, and a call is slow
    // from 500 ms (half the flush timeout)
    AnswerLaterStore store = AnswerLaterStore.answeringOn(new MemoryStore(),
        r -> CompletableFuture.delayedExecutor(600, TimeUnit.MILLISECONDS).execute(r));
    try (SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("n").autoSync(false)
        .flushTimeout(Duration.ofSeconds(1)).claimTimeout(Duration.ofSeconds(1)).build()) {
      // (the breaker itself, inside: the public view does not tell slow calls apart)
      CircuitBreaker breaker = CoreAccess.core(node).setup.calls.breaker();
      for (int i = 0; i < 6 && node.storeBreaker().state() == StoreBreaker.State.CLOSED; i++) {
        node.tryAcquire("k" + i);
        node.syncNow();
      }
      assertThat(breaker.getMetrics().getNumberOfFailedCalls()).as("calls failed").isZero();
      assertThat(breaker.getMetrics().getNumberOfSlowSuccessfulCalls()).as("slow calls that succeeded")
          .isGreaterThanOrEqualTo(5);
      assertThat(node.storeBreaker().state()).isEqualTo(StoreBreaker.State.OPEN);
    }
  }
}
