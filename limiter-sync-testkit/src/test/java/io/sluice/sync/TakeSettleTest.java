package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.StoreUnavailableException;
import io.sluice.sync.testkit.CounterStoreContract;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Takes whose answers are lost. A decision on a key without a claim that pays asks the store for one
 * with the decision's permit (a take); when the store counts it and the answer never comes back, the
 * failure policy decides the request, and the key's next flush settles the take. Whatever the policy
 * decided, the store ends up counting exactly the permits the node admitted: nothing lost, nothing
 * counted twice. (The store is the in-memory double that runs the Hazelcast store's processors; the
 * same settle runs in flush.lua, checked by the store contract against real Redis.)
 */
class TakeSettleTest {

  @ParameterizedTest
  @EnumSource(StoreFailurePolicy.class)
  void aTakeWhoseAnswerIsLostIsCountedOnceWhateverThePolicyDecided(StoreFailurePolicy policy) {
    Limit limit = Limit.fixedWindow("cold").limit(5).window(Duration.ofHours(1)).build();
    Counter counter = Counter.of(limit);
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos() + Duration.ofMinutes(1).toNanos());
    MemoryStore memory = new MemoryStore();
    LosingStore store = new LosingStore(memory, 42);
    SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("n").ticker(ticker).autoSync(false)
        .activeNodes(() -> 1).onStoreFailure(policy)
        // the breaker stays closed: every decision meets the store, and its faults
        .storeBreaker(StoreBreakerConfig.custom().waitInOpenState(Duration.ofSeconds(60)).slowCallDuration(Duration.ofSeconds(60))
              .slowCallRateThreshold(100).permittedCallsInHalfOpenState(10).slidingWindowSize(100_000).minimumNumberOfCalls(100_000).build())
        .build();
    SplittableRandom random = new SplittableRandom(7);
    Map<String, Long> admitted = new HashMap<>();
    for (int i = 0; i < 3_000; i++) {
      ticker.advance(Duration.ofMillis(1 + random.nextInt(20)));
      String key = "k" + random.nextInt(400);
      long cost = 1 + random.nextInt(2);
      if (node.tryAcquire(key, cost)) {
        admitted.merge(key, cost, Long::sum);
      }
      if (i % 10 == 9) {
        node.syncNow();
      }
    }
    store.faults = false;
    for (int i = 0; i < 10 && !node.flushAll(); i++) {
      ticker.advance(Duration.ofMillis(100));
    }
    assertThat(store.lostTakes).as("takes counted whose answers were lost").isGreaterThan(20);
    long window = Math.floorDiv(ticker.read(), Duration.ofHours(1).toNanos());
    long stored = 0;
    long total = 0;
    for (Map.Entry<String, Long> e : admitted.entrySet()) {
      long inStore = CounterStoreContract.readWindow(memory, counter, e.getKey(), window);
      assertThat(inStore).as("key %s under %s", e.getKey(), policy).isEqualTo(e.getValue());
      stored += inStore;
      total += e.getValue();
    }
    assertThat(stored).isEqualTo(total).isPositive();
    node.close();
  }

  /**
   * A store that loses the answers of calls it applied (claim-only calls with a take: 30%; numbered
   * flushes: 10%) or fails them before applying (10% of each), as a network that drops replies would.
   */
  private static final class LosingStore extends ForwardingStore {
    private final SplittableRandom random;
    volatile boolean faults = true;
    int lostTakes;

    LosingStore(CounterStore inner, long seed) {
      super(inner);
      this.random = new SplittableRandom(seed);
    }

    @Override
    public synchronized CompletionStage<FlushResult> flush(Batch batch) {
      if (faults && random.nextDouble() < 0.1) {
        return CompletableFuture.failedFuture(new StoreUnavailableException("injected: not applied", null));
      }
      FlushResult r = inner.flush(batch).toCompletableFuture().join();
      boolean take = batch.claimOnly() && batch.deltas().stream().anyMatch(d -> d.token() > 0);
      if (faults && random.nextDouble() < (take ? 0.3 : 0.1)) {
        if (take && r.taken(batch.deltas().size() - 1)) {
          lostTakes++;
        }
        return CompletableFuture.failedFuture(new StoreUnavailableException("injected: applied, answer lost", null));
      }
      return CompletableFuture.completedFuture(r);
    }
  }
}
