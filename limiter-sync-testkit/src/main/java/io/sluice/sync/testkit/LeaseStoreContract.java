package io.sluice.sync.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.LeaseStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * Reservation mode's contract, run by the integration test of every {@link LeaseStore} against a real
 * server or cluster (the shared test kit): {@code lease.lua}'s grant rules, leases and flushes sharing
 * one budget, and nodes admitting from grants only never passing the limit together. Subclasses hand
 * out stores, each a {@link CounterStore} and a {@link LeaseStore}, on a store of their own for the
 * class (every test uses limits of its own).
 */
public abstract class LeaseStoreContract {
  protected static final long NOW_MICROS = 1_767_225_600_000_000L; // 2026-01-01T00:00Z

  /** A store as node {@code n} would have it (its own connection, member or client); closed by the test. */
  protected abstract CounterStore newStore(int n);

  /** Time left before the counter of this limit and key expires, in ms; negative when there is none. */
  protected abstract long counterTtlMillis(String limitName, String key);

  static LeaseStore.Lease lease(CounterStore store, Counter c, String key, long w, long elapsed, long want) {
    try {
      return ((LeaseStore) store).lease(c, key, w, elapsed, want).toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("lease " + c.limit() + " key " + key + " window " + w + " want " + want, e);
    }
  }

  /**
   * A lease with a need grants nothing unless that much is free, so that a node asking for a request
   * that does not fit is not left holding what is free (found by WindowProbe: every other node denied
   * the key to the window's end). Fixed and sliding alike.
   */
  @Test
  void aNeedThatDoesNotFitGrantsNothing() {
    Counter fixed = Counter.of(Limit.fixedWindow("ln").limit(10).window(Duration.ofSeconds(10)).build());
    Counter sliding = Counter.of(Limit.slidingWindowCounter("lns").limit(10).window(Duration.ofSeconds(10)).build());
    try (CounterStore store = newStore(0)) {
      LeaseStore leases = (LeaseStore) store;
      assertThat(lease(store, fixed, "k", 5, 0, 8).granted()).isEqualTo(8);
      LeaseStore.Lease refused = leases.lease(fixed, "k", 5, 0, 5, 3).toCompletableFuture().join();
      assertThat(refused.granted()).as("3 needed, 2 free").isZero();
      assertThat(refused.current()).as("nothing counted").isEqualTo(8);
      assertThat(leases.lease(fixed, "k", 5, 0, 4, 2).toCompletableFuture().join().granted()).isEqualTo(2);
      // sliding: 10 in window 5; at half of window 6 the previous weighs 5, so 5 are free
      assertThat(lease(store, sliding, "k", 5, 0, 10).granted()).isEqualTo(10);
      assertThat(leases.lease(sliding, "k", 6, 5_000_000, 6, 6).toCompletableFuture().join().granted()).isZero();
      assertThat(leases.lease(sliding, "k", 6, 5_000_000, 6, 5).toCompletableFuture().join().granted()).isEqualTo(5);
      assertThatThrownBy(() -> leases.lease(fixed, "k", 5, 0, 2, 3)).hasMessageStartingWith("need:");
      assertThatThrownBy(() -> leases.lease(fixed, "k", 5, 0, 2, 0)).hasMessageStartingWith("need:");
    }
  }

  @Test
  void grantsNeverExceedTheBudget() {
    Counter fixed = Counter.of(Limit.fixedWindow("lf").limit(100).window(Duration.ofSeconds(10)).build());
    Counter sliding = Counter.of(Limit.slidingWindowCounter("ls").limit(100).window(Duration.ofSeconds(10)).build());
    try (CounterStore store = newStore(0); CounterStore other = newStore(1)) {
      assertThat(lease(store, fixed, "k", 5, 0, 60).granted()).isEqualTo(60);
      LeaseStore.Lease second = lease(other, fixed, "k", 5, 0, 60);
      assertThat(second.granted()).isEqualTo(40);
      assertThat(second.current()).isEqualTo(100);
      assertThat(lease(store, fixed, "k", 5, 0, 1).granted()).isZero();
      assertThat(lease(store, fixed, "k", 6, 0, 30).granted()).isEqualTo(30); // a new window

      // sliding: 100 used in window 5; in window 6 at 25% elapsed the previous still weighs 75
      assertThat(lease(store, sliding, "k", 5, 0, 100).granted()).isEqualTo(100);
      assertThat(lease(other, sliding, "k", 6, 2_500_000, 100).granted()).isEqualTo(25);
      assertThat(lease(store, sliding, "k", 6, 2_500_000, 100).granted()).isZero();
      // at 60% elapsed the previous weighs 40: 60 - 25 = 35 more
      LeaseStore.Lease late = lease(other, sliding, "k", 6, 6_000_000, 100);
      assertThat(late.granted()).isEqualTo(35);
      assertThat(late.current()).isEqualTo(60);
      assertThat(late.previous()).isEqualTo(100);
    }
  }

  /**
   * What a lease answers and keeps: the counts after the grant, in the flush's layout (one budget for
   * both), the window before the previous one dropped by a grant, and the counter's TTL (two windows
   * and a second, up to two more where a flush made the key live longer).
   */
  @Test
  void aGrantCountsInTheFlushLayoutAndExpires() {
    Counter sliding = Counter.of(Limit.slidingWindowCounter("lease-layout").limit(10).window(Duration.ofSeconds(10)).build());
    try (CounterStore store = newStore(0)) {
      // a flush and a lease of one key draw on one budget
      FlushResult f = CounterStoreContract.flush(store, new Batch("n1", 0, 1, NOW_MICROS,
          List.of(new Delta(sliding, "k", 8, 4))));
      assertThat(f.current(0)).isEqualTo(4);
      LeaseStore.Lease l = lease(store, sliding, "k", 8, 0, 10);
      assertThat(l.granted()).isEqualTo(6);
      assertThat(l.current()).isEqualTo(10);
      assertThat(l.previous()).isZero();
      assertThat(CounterStoreContract.readWindow(store, sliding, "k", 8)).isEqualTo(10);
      // (on Redis the flush's TTL reaches up to two windows further, and the lease never shortens it)
      assertThat(counterTtlMillis("lease-layout", "k")).isBetween(1L, 41_000L);
      // a window later at 90% elapsed, the previous 10 weigh 1
      l = lease(store, sliding, "k", 9, 9_000_000, 10);
      assertThat(l.granted()).isEqualTo(9);
      assertThat(l.previous()).isEqualTo(10);
      // two windows on: window 8 is dropped when window 10 is granted
      l = lease(store, sliding, "k", 10, 0, 1);
      assertThat(l.granted()).isEqualTo(1);
      assertThat(l.previous()).isEqualTo(9);
      assertThat(lease(store, sliding, "k", 9, 0, 1).previous()).as("window 8, dropped").isZero();
    }
  }

  @Test
  void badLeasesAreRejectedWithTheField() {
    Counter fixed = Counter.of(Limit.fixedWindow("lease-bad").limit(10).window(Duration.ofSeconds(1)).build());
    Counter bucket = Counter.of(Limit.tokenBucket("lease-bad-tb").capacity(10).refill(1, Duration.ofSeconds(1)).build());
    try (CounterStore store = newStore(0)) {
      LeaseStore leases = (LeaseStore) store;
      assertThatThrownBy(() -> leases.lease(fixed, "k", 1, 0, 0)).hasMessageStartingWith("want:");
      assertThatThrownBy(() -> leases.lease(fixed, "k", 1, 0, 11)).hasMessageStartingWith("want:");
      assertThatThrownBy(() -> leases.lease(fixed, "", 1, 0, 1)).hasMessageStartingWith("key:");
      assertThatThrownBy(() -> leases.lease(bucket, "k", 1, 0, 1)).hasMessageStartingWith("counter:");
      Counter nanoWindow = Counter.of(Limit.fixedWindow("lease-bad").limit(5).window(Duration.ofNanos(10_000_000_001L)).build());
      assertThatThrownBy(() -> leases.lease(nanoWindow, "k", 1, 0, 1)).hasMessageStartingWith("window:");
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
    List<CounterStore> stores = new ArrayList<>();
    for (int n = 0; n < nodes; n++) {
      CounterStore store = newStore(n);
      stores.add(store);
      limiters.add(SyncedLimiter.builder(limit, store).nodeId("res-" + n).ticker(ticker).activeNodes(() -> nodes)
          .syncInterval(Duration.ofMillis(20)).reservation().build());
    }
    hammer(limiters, 2, 40_000, "hot", admitted);
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
    long fallbacks = limiters.stream().mapToLong(SyncedLimiter::fallbackDecisions).sum();
    limiters.forEach(SyncedLimiter::close);
    stores.forEach(CounterStore::close);
    System.out.printf("%s: admitted %d of %d (%.1f%%) with %d store calls, %d decisions by the failure policy%n",
        getClass().getSimpleName(), admitted.sum(), limit.capacity(), admitted.sum() * 100.0 / limit.capacity(),
        storeCalls, fallbacks);
    // (a machine so loaded that a grant's call times out hands the decision to the failure policy,
    // whose permits are not the store's grants: 2,002 once at a load average of 14 on two cores)
    assertThat(admitted.sum()).as("admitted (%d decisions by the failure policy)", fallbacks)
        .isLessThanOrEqualTo(limit.capacity() + fallbacks);
    assertThat(admitted.sum()).isGreaterThanOrEqualTo(limit.capacity() * 97 / 100);
  }

  /**
   * A node's grant on a sliding window left unused when the window ends is given back as the node
   * rolls into the next one, on the key the grants counted in (the same as {@code ReservationSlidingTest},
   * on this store): the previous window then weighs what the node admitted, not what it was granted.
   */
  @Test
  void aSlidingGrantLeftUnusedIsGivenBackAtTheWindowsEnd() throws Exception {
    Limit limit = Limit.slidingWindowCounter("leftover").limit(100).window(Duration.ofSeconds(10)).build();
    Counter counter = Counter.of(limit);
    long windowNanos = TimeUnit.SECONDS.toNanos(10);
    long w = 177_000;
    ManualTicker ticker = new ManualTicker(w * windowNanos);
    try (CounterStore store = newStore(0); CounterStore other = newStore(1);
        SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("leftover-0").ticker(ticker).autoSync(false)
            .activeNodes(() -> 1).reservation().build()) {
      ticker.advance(Duration.ofSeconds(9));
      // each grant asked for within a sync interval of the last asks twice as much ahead: 1, 2, 3, 5,
      // 9 and 17 permits, the last for the 21st request and 16 more
      for (int i = 0; i < 21; i++) {
        assertThat(node.tryAcquire("k")).isTrue();
        ticker.advance(Duration.ofMillis(1));
      }
      LeaseStore leases = (LeaseStore) other;
      // a lease that needs the whole limit grants nothing and reads the window gone by
      assertThat(leases.lease(counter, "k", w + 1, 0, 100, 100).toCompletableFuture().get(10, TimeUnit.SECONDS)
          .previous()).as("granted ahead of the requests").isGreaterThan(21);
      ticker.advance(Duration.ofMillis(1_000)); // into window w + 1
      assertThat(node.tryAcquire("k")).isTrue();
      long previous = -1;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); // (the give-back is not waited for)
      while (previous != 21 && System.nanoTime() < deadline) {
        previous = leases.lease(counter, "k", w + 1, 1_000, 100, 100).toCompletableFuture().get(10, TimeUnit.SECONDS)
            .previous();
        if (previous != 21) {
          Thread.sleep(20);
        }
      }
      assertThat(previous).as("the previous window counts what was admitted").isEqualTo(21);
    }
  }

  /**
   * {@code threadsPerNode} threads per node, started together, each trying {@code key} {@code attempts}
   * times; {@code admitted} counts what the nodes admitted.
   */
  public static void hammer(List<SyncedLimiter> nodes, int threadsPerNode, int attempts, String key, LongAdder admitted)
      throws InterruptedException {
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < nodes.size() * threadsPerNode; t++) {
      SyncedLimiter node = nodes.get(t % nodes.size());
      Thread thread = new Thread(() -> {
        for (int i = 0; i < attempts; i++) {
          if (node.tryAcquire(key)) {
            admitted.increment();
          }
        }
      });
      thread.start();
      threads.add(thread);
    }
    for (Thread thread : threads) {
      thread.join();
    }
  }
}
