package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Reservation mode against a real redis-server: the lease script and nodes admitting from grants. */
class LeaseIT {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();

  private static LeaseStore.Lease lease(RedisCounterStore store, Counter c, String key, long w, long elapsed, long want)
      throws Exception {
    return store.lease(c, key, w, elapsed, want).toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  @Test
  void grantsNeverExceedTheBudget() throws Exception {
    Counter fixed = Counter.of(Limit.fixedWindow("lf").limit(100).window(Duration.ofSeconds(10)).build());
    Counter sliding = Counter.of(Limit.slidingWindowCounter("ls").limit(100).window(Duration.ofSeconds(10)).build());
    try (RedisCounterStore store = redis.newStore()) {
      assertThat(lease(store, fixed, "k", 5, 0, 60).granted()).isEqualTo(60);
      LeaseStore.Lease second = lease(store, fixed, "k", 5, 0, 60);
      assertThat(second.granted()).isEqualTo(40);
      assertThat(second.current()).isEqualTo(100);
      assertThat(lease(store, fixed, "k", 5, 0, 1).granted()).isZero();
      assertThat(lease(store, fixed, "k", 6, 0, 30).granted()).isEqualTo(30); // a new window

      // sliding: 100 used in window 5; in window 6 at 25% elapsed the previous still weighs 75
      assertThat(lease(store, sliding, "k", 5, 0, 100).granted()).isEqualTo(100);
      assertThat(lease(store, sliding, "k", 6, 2_500_000, 100).granted()).isEqualTo(25);
      assertThat(lease(store, sliding, "k", 6, 2_500_000, 100).granted()).isZero();
      // at 60% elapsed the previous weighs 40: 60 - 25 = 35 more
      assertThat(lease(store, sliding, "k", 6, 6_000_000, 100).granted()).isEqualTo(35);
    }
  }

  /** Four nodes hammer one key from grants only: never over the limit, and the budget is used. */
  @Test
  void reservationNeverOverAdmitsAndUsesTheBudget() throws Exception {
    int nodes = 4;
    Limit limit = Limit.slidingWindowCounter("reserve").limit(2_000).window(Duration.ofMinutes(1)).build();
    ManualTicker ticker = new ManualTicker();
    LongAdder admitted = new LongAdder();
    List<SyncedLimiter> limiters = new ArrayList<>();
    List<RedisCounterStore> stores = new ArrayList<>();
    for (int n = 0; n < nodes; n++) {
      RedisCounterStore store = redis.newStore();
      stores.add(store);
      limiters.add(SyncedLimiter.builder(limit, store).nodeId("res-" + n).ticker(ticker).activeNodes(() -> nodes)
          .syncInterval(Duration.ofMillis(20)).reservation().build());
    }
    SyncedLimiterBurstCheck.hammer(limiters, 2, 40_000, "hot", admitted);
    // the burst ends faster than grants come back: later requests use what is left
    for (int round = 0; round < 20; round++) {
      for (SyncedLimiter node : limiters) {
        node.syncNow();
        while (node.tryAcquire("hot")) {
          admitted.increment();
        }
      }
    }
    long storeCalls = limiters.stream().mapToLong(SyncedLimiter::storeCalls).sum();
    limiters.forEach(SyncedLimiter::close);
    stores.forEach(RedisCounterStore::close);
    System.out.printf("LeaseIT: admitted %d of %d (%.1f%%) with %d store calls%n", admitted.sum(), limit.capacity(),
        admitted.sum() * 100.0 / limit.capacity(), storeCalls);
    assertThat(admitted.sum()).isLessThanOrEqualTo(limit.capacity());
    assertThat(admitted.sum()).isGreaterThanOrEqualTo(limit.capacity() * 97 / 100);
  }
}
