package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.LeaseStore;
import io.sluice.sync.spi.StoreUnavailableException;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A sync over many store groups (a Redis Cluster's slots) sends every group's batch before it waits
 * for any answer: with 16 groups answering after 500 ms each, the batches are out together, not one
 * round trip after the other; and every permit still reaches the store once. (With answers 20 ms late
 * a loaded machine once took longer than that to send the 16 batches, and the first answer came back
 * before the last batch went: 15 out at once. Half a second leaves room for any machine, and a sync
 * that waited for each answer would still show one batch out at a time.)
 */
class FlushWavesTest {

  @Test
  void everyGroupsBatchIsSentBeforeAnyAnswerIsAwaited() throws Exception {
    ScheduledExecutorService answers = Executors.newSingleThreadScheduledExecutor();
    try {
      MemoryStore memory = new MemoryStore(16);
      SlowStore store = new SlowStore(memory, answers);
      Limit limit = Limit.fixedWindow("waves").limit(1_000).window(Duration.ofHours(1)).build();
      ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
      SyncedLimiter node = SyncedLimiter.builder(limit, store).ticker(ticker).autoSync(false).build();
      int admitted = admitOnEveryKey(node);
      store.slow = true;
      store.maxOutstanding.set(0);
      node.syncNow();
      assertThat(store.batches.get()).as("batches of the sync").isGreaterThan(1);
      assertThat(store.maxOutstanding.get()).as("batches out at once").isEqualTo(store.batches.get());
      node.close();
      assertThat(counted(memory, limit, ticker)).as("every admission counted once").isEqualTo(admitted);
    } finally {
      answers.shutdownNow();
    }
  }

  /**
   * A batch that fails keeps its group's later batches back (requeued, sent at the next sync in order)
   * while the other groups' go on; the kept batches go again together first; every permit reaches the
   * store once in the end.
   */
  @Test
  void aFailedGroupWaitsAndTheOthersGoOn() throws Exception {
    ScheduledExecutorService answers = Executors.newSingleThreadScheduledExecutor();
    try {
      MemoryStore memory = new MemoryStore(8);
      SlowStore store = new SlowStore(memory, answers);
      Limit limit = Limit.fixedWindow("waves-fail").limit(1_000).window(Duration.ofHours(1)).build();
      ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
      SyncedLimiter node = SyncedLimiter.builder(limit, store).ticker(ticker).autoSync(false)
          .storeBreaker(StoreBreakerConfig.custom().waitInOpenState(Duration.ofSeconds(60)).slowCallDuration(Duration.ofSeconds(60))
              .slowCallRateThreshold(100).permittedCallsInHalfOpenState(10)
              .slidingWindowSize(100).minimumNumberOfCalls(100).build())
          .build();
      int admitted = admitOnEveryKey(node);
      store.slow = true;
      store.failGroup = memory.group(null, "key-0");
      node.syncNow();
      int firstSync = store.batches.get();
      assertThat(store.failed.get()).as("the failed group's batch").isEqualTo(1);
      store.failGroup = -1;
      node.syncNow();
      node.close();
      assertThat(store.batches.get()).isGreaterThan(firstSync);
      assertThat(counted(memory, limit, ticker)).as("every admission counted once").isEqualTo(admitted);
    } finally {
      answers.shutdownNow();
    }
  }

  /**
   * Reservation mode: the leases a sync asks for (one per key whose grant runs low) go out together
   * before any answer is awaited, as flushes do: a sync once asked them one after the other, each a
   * round trip before the next key's went and before the sync's flushes, so a node with leases to renew
   * on a hundred keys spent a hundred round trips per sync. A sync asks ahead for the keys whose rate
   * the flusher has measured (here: synced while the failure policy admitted, the store refusing
   * leases); with answers 500 ms late, 16 leases out at once, one at a time on the code before.
   */
  @Test
  void everyKeysLeaseIsAskedBeforeAnyAnswerIsAwaited() throws Exception {
    ScheduledExecutorService answers = Executors.newSingleThreadScheduledExecutor();
    try {
      MemoryStore memory = new MemoryStore();
      SlowLeaseStore store = new SlowLeaseStore(memory, answers);
      Limit limit = Limit.fixedWindow("lease-waves").limit(100_000).window(Duration.ofHours(1)).build();
      ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
      try (SyncedLimiter node = aloneInReservation(limit, store, ticker)) {
        int keys = 16;
        warmUp(node, store, ticker, keys);
        long granted = granted(memory, limit, ticker, keys);
        store.slow = true;
        node.syncNow();
        assertThat(store.leases.get()).as("leases the sync asked for").isGreaterThan(1);
        assertThat(store.maxOutstanding.get()).as("leases out at once").isEqualTo(store.leases.get());
        assertThat(granted(memory, limit, ticker, keys)).as("granted by the sync's leases").isGreaterThan(granted);
      }
    } finally {
      answers.shutdownNow();
    }
  }

  /**
   * Reservation mode: a lease's time as the breaker and the claims' sizing hear it is its own call's,
   * to its answer, not the time until a sync that asked several leases got to reading it. Of a sync's
   * 16 leases the first is answered 300 ms late (on the limiter's clock), the others at once: 300 ms of
   * store time in all, where the code before counted each later lease as long as the first (4.8 s;
   * with the breaker's slow-call threshold below that, one slow answer opened it for every lease).
   */
  @Test
  void aLeaseTakesTheTimeOfItsOwnCall() throws Exception {
    ScheduledExecutorService answers = Executors.newSingleThreadScheduledExecutor();
    try {
      MemoryStore memory = new MemoryStore();
      SlowLeaseStore store = new SlowLeaseStore(memory, answers);
      Limit limit = Limit.fixedWindow("lease-time").limit(100_000).window(Duration.ofHours(1)).build();
      ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
      try (SyncedLimiter node = aloneInReservation(limit, store, ticker)) {
        warmUp(node, store, ticker, 16);
        store.firstLate = ticker;
        long before = node.storeNanos();
        node.syncNow();
        assertThat(store.leases.get()).as("leases the sync asked for").isGreaterThan(1);
        assertThat(node.storeNanos() - before).as("store time of the sync's leases, ns")
            .isEqualTo(Duration.ofMillis(300).toNanos());
      }
    } finally {
      answers.shutdownNow();
    }
  }

  /** A node in reservation mode, alone, synced by the test; a breaker that the failures of warmUp leave closed. */
  private static SyncedLimiter aloneInReservation(Limit limit, SlowLeaseStore store, ManualTicker ticker) {
    return SyncedLimiter.builder(limit, store).ticker(ticker).autoSync(false).activeNodes(() -> 1)
        .storeBreaker(StoreBreakerConfig.custom().slidingWindowSize(1_000).minimumNumberOfCalls(1_000).build())
        .reservation().build();
  }

  /**
   * Sixteen keys at 200 a second each, synced every 100 ms: the flusher measures a key's rate when it
   * syncs the key, here the admissions the failure policy made while the store refused leases; then the
   * leases come, and the next ones are asked for ahead, at the syncs (at the sync that follows this).
   */
  private static void warmUp(SyncedLimiter node, SlowLeaseStore store, ManualTicker ticker, int keys) {
    store.failing = true;
    for (int round = 1; round <= 100; round++) {
      if (round == 40) {
        store.failing = false;
      }
      for (int k = 0; k < keys; k++) {
        node.tryAcquire("key-" + k);
      }
      ticker.advance(Duration.ofMillis(5));
      if (round % 20 == 0 && round < 100) {
        node.syncNow();
      }
    }
  }

  private static long granted(MemoryStore memory, Limit limit, ManualTicker ticker, int keys) {
    long window = Math.floorDiv(ticker.read(), limit.periodNanos());
    long granted = 0;
    for (int k = 0; k < keys; k++) {
      granted += memory.count(limit.name(), "key-" + k, window);
    }
    return granted;
  }

  /** Answers leases 500 ms late on another thread once slow, and counts the leases out at once. */
  private static final class SlowLeaseStore extends ForwardingStore implements LeaseStore {
    private final MemoryStore memory;
    private final ScheduledExecutorService answers;
    volatile boolean slow;
    volatile boolean failing;
    /** Set: the next lease is answered 300 ms late on this clock, every other at once (and counted). */
    volatile ManualTicker firstLate;
    final AtomicInteger outstanding = new AtomicInteger();
    final AtomicInteger maxOutstanding = new AtomicInteger();
    final AtomicInteger leases = new AtomicInteger();

    SlowLeaseStore(MemoryStore memory, ScheduledExecutorService answers) {
      super(memory);
      this.memory = memory;
      this.answers = answers;
    }

    @Override
    public CompletionStage<Lease> lease(Counter counter, String key, long window, long elapsedMicros, long want,
        long need) {
      if (failing) {
        return CompletableFuture.failedFuture(new StoreUnavailableException("leases refused", null));
      }
      ManualTicker late = firstLate;
      if (late != null) {
        leases.incrementAndGet();
        CompletionStage<Lease> lease = memory.lease(counter, key, window, elapsedMicros, want, need);
        if (leases.get() > 1) {
          return lease;
        }
        CompletableFuture<Lease> answer = new CompletableFuture<>();
        answers.schedule(() -> {
          late.advance(Duration.ofMillis(300));
          answer.complete(lease.toCompletableFuture().join());
        }, 50, TimeUnit.MILLISECONDS);
        return answer;
      }
      if (!slow) {
        return memory.lease(counter, key, window, elapsedMicros, want, need);
      }
      leases.incrementAndGet();
      maxOutstanding.accumulateAndGet(outstanding.incrementAndGet(), Math::max);
      Lease lease = memory.lease(counter, key, window, elapsedMicros, want, need).toCompletableFuture().join();
      CompletableFuture<Lease> answer = new CompletableFuture<>();
      answers.schedule(() -> {
        outstanding.decrementAndGet();
        answer.complete(lease);
      }, 500, TimeUnit.MILLISECONDS);
      return answer;
    }
  }

  /** Three requests on each of 64 keys; answers how many were admitted. */
  private static int admitOnEveryKey(SyncedLimiter node) {
    int admitted = 0;
    for (int k = 0; k < 64; k++) {
      for (int i = 0; i < 3; i++) {
        admitted += node.tryAcquire("key-" + k) ? 1 : 0;
      }
    }
    return admitted;
  }

  /** What the store counted of the 64 keys in the current window. */
  private static long counted(MemoryStore memory, Limit limit, ManualTicker ticker) {
    long window = Math.floorDiv(ticker.read(), limit.periodNanos());
    long counted = 0;
    for (int k = 0; k < 64; k++) {
      counted += memory.count(limit.name(), "key-" + k, window);
    }
    return counted;
  }

  /** Answers flushes 500 ms late on another thread once slow, and counts the batches out at once. */
  private static final class SlowStore extends ForwardingStore {
    private final ScheduledExecutorService answers;
    volatile boolean slow;
    final AtomicInteger outstanding = new AtomicInteger();
    final AtomicInteger maxOutstanding = new AtomicInteger();
    final AtomicInteger batches = new AtomicInteger();
    final AtomicInteger failed = new AtomicInteger();
    volatile int failGroup = -1;

    SlowStore(CounterStore inner, ScheduledExecutorService answers) {
      super(inner);
      this.answers = answers;
    }

    @Override
    public CompletionStage<FlushResult> flush(Batch batch) {
      if (!slow) {
        return inner.flush(batch);
      }
      batches.incrementAndGet();
      if (batch.group() == failGroup && !batch.claimOnly()) {
        failed.incrementAndGet();
        return CompletableFuture.failedFuture(new StoreUnavailableException("group " + failGroup + " down", null));
      }
      maxOutstanding.accumulateAndGet(outstanding.incrementAndGet(), Math::max);
      CompletableFuture<FlushResult> answer = new CompletableFuture<>();
      FlushResult result = inner.flush(batch).toCompletableFuture().join();
      answers.schedule(() -> {
        outstanding.decrementAndGet();
        answer.complete(result);
      }, 500, TimeUnit.MILLISECONDS);
      return answer;
    }
  }
}
