package io.sluice.sync.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.FlakyMemoryStore;
import io.sluice.sync.SyncedLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * The lock-free credit of a key view: decisions take it with compare-and-set while the monitor's
 * holder takes it back and regrants it; every permit taken is counted exactly once.
 */
class KeyViewCreditTest {

  /**
   * Threads take permits of random cost while another thread revokes and regrants over and over:
   * the permits the takers were paid equal the permits the revocations say were used, and no grant
   * pays out more than it held.
   */
  @Test
  void everyPermitTakenIsCountedByExactlyOneRevocation() throws Exception {
    KeyView view = new KeyView("k");
    int takers = 4;
    LongAdder paid = new LongAdder();
    LongAdder batchesFilled = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch started = new CountDownLatch(takers);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < takers; t++) {
      SplittableRandom random = new SplittableRandom(t);
      Thread thread = new Thread(() -> {
        started.countDown();
        while (!stop.get()) {
          long cost = 1 + random.nextInt(3);
          int outcome = view.takeCredit(0, cost);
          if (outcome != KeyView.UNPAID) {
            paid.add(cost);
          }
          if (outcome == KeyView.PAID_SYNC) {
            batchesFilled.increment();
          }
        }
      });
      thread.start();
      threads.add(thread);
    }
    started.await();
    long used = 0;
    long grants = 0;
    long crossedGrants = 0;
    SplittableRandom random = new SplittableRandom(99);
    // (at least 20,000 rounds, and on until the takers have taken something: on a busy 2-core machine
    // 20,000 rounds ended once before a taker ran, CI 2026-12-06 18:27 UTC; a minute at most)
    long deadline = System.nanoTime() + 60_000_000_000L;
    for (int round = 0; round < 20_000 || (paid.sum() == 0 && System.nanoTime() < deadline); round++) {
      long amount = 1 + random.nextInt(200);
      synchronized (view) {
        long u = view.revokeCredit();
        assertThat(u).isBetween(0L, 200L);
        used += u;
        view.grantCredit(amount, 1, 1 + random.nextInt(250));
      }
      grants++;
      Thread.onSpinWait();
    }
    stop.set(true);
    for (Thread thread : threads) {
      thread.join();
    }
    synchronized (view) {
      used += view.revokeCredit();
    }
    assertThat(paid.sum()).isEqualTo(used);
    assertThat(paid.sum()).as("the takers ran").isPositive();
    // at most one decision fills the batch of one grant
    assertThat(batchesFilled.sum()).isLessThanOrEqualTo(grants);
  }

  @Test
  void theCreditIsNotUsedFromItsDeadlineOnAndTheBatchIsFilledOnce() {
    KeyView view = new KeyView("k");
    synchronized (view) {
      view.grantCredit(10, 1_000, 4);
    }
    assertThat(view.takeCredit(1_000, 1)).isEqualTo(KeyView.UNPAID);
    assertThat(view.takeCredit(999, 2)).isEqualTo(KeyView.PAID);
    assertThat(view.takeCredit(999, 3)).isEqualTo(KeyView.PAID_SYNC); // 5 taken: past the batch of 4
    assertThat(view.takeCredit(999, 5)).isEqualTo(KeyView.PAID);
    assertThat(view.takeCredit(999, 1)).isEqualTo(KeyView.UNPAID); // 10 taken: nothing left
    synchronized (view) {
      assertThat(view.revokeCredit()).isEqualTo(10);
      assertThat(view.revokeCredit()).isZero();
    }
    assertThat(view.takeCredit(0, 1)).isEqualTo(KeyView.UNPAID);
  }

  /**
   * The limiter's fast path with the store failing and losing answers: threads admit from credit
   * while another thread syncs; after healing, the store holds exactly what was admitted, and the
   * limit is never passed in a frozen window with one node.
   */
  @Test
  void creditAdmissionsReachTheStoreExactlyOnceThroughFailingFlushes() throws Exception {
    ManualTicker ticker = new ManualTicker();
    Limit limit = Limit.slidingWindowCounter("credit").limit(200_000).window(Duration.ofMinutes(1)).build();
    FlakyMemoryStore store = new FlakyMemoryStore(21);
    store.faults(0.2, 0.2);
    SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("n").ticker(ticker).autoSync(false)
        .activeNodes(() -> 1).batchSize(100).build();
    LongAdder admitted = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    Thread syncer = new Thread(() -> {
      while (!stop.get()) {
        node.syncNow();
      }
    });
    syncer.start();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 3; t++) {
      Thread thread = new Thread(() -> {
        for (int i = 0; i < 150_000; i++) {
          if (node.tryAcquire("k")) {
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
    stop.set(true);
    syncer.join();
    store.faults(0, 0);
    while (!node.syncNow()) {
      Thread.onSpinWait();
    }
    long window = Math.floorDiv(ticker.read(), limit.periodNanos());
    assertThat(store.count("k", window)).isEqualTo(admitted.sum());
    assertThat(node.pending()).isZero();
    assertThat(admitted.sum()).isLessThanOrEqualTo(limit.capacity()).isPositive();
    node.close();
  }
}
