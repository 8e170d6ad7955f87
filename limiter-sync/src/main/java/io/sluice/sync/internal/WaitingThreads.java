package io.sluice.sync.internal;

import io.sluice.sync.SyncedLimiter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The threads that wait for the store on behalf of {@link SyncedLimiter#acquireAsync} callers, where
 * a decision cannot be made without holding its key's monitor through a store call (a window key's
 * claim, a lease, a batched bucket's token claim): the caller's thread hands the decision over and
 * returns at once. One pool per process, shared by every limiter: a fixed number of daemon threads
 * (twice the processors, at least 4), started on first use, and at most {@link #MAX_QUEUED} decisions
 * handed over and not yet finished; past that, {@link #submit} refuses and the caller's failure policy
 * decides (an overloaded store answers no faster for a longer queue).
 *
 * <p>Concurrency: lock-free on the caller's side once the pool is made: the queue is a {@link
 * LinkedTransferQueue}, whose offer never parks, and every thread is started when the pool is made, so
 * handing a decision over never takes the pool's lock (an event-loop thread must not park, see
 * BlockHound). The pool itself is made once, on first use, under the class's monitor (double-checked
 * on the volatile {@code pool}): only the very first hand-over of the process may wait for it.
 */
final class WaitingThreads {
  static final int MAX_QUEUED = 4096;
  private static final int THREADS = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());

  private static volatile ThreadPoolExecutor pool;
  private static final AtomicInteger QUEUED = new AtomicInteger();

  private WaitingThreads() {
  }

  /**
   * The decision made on a waiting thread, or null when {@link #MAX_QUEUED} are handed over already
   * (then nothing ran: the caller decides otherwise).
   */
  static <T> CompletableFuture<T> submit(Supplier<T> decision) {
    if (QUEUED.incrementAndGet() > MAX_QUEUED) {
      QUEUED.decrementAndGet();
      return null;
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    pool().execute(() -> {
      try {
        result.complete(decision.get());
      } catch (Throwable t) {
        result.completeExceptionally(t);
      } finally {
        QUEUED.decrementAndGet();
      }
    });
    return result;
  }

  /** Decisions handed over and not finished (for tests). */
  static int queued() {
    return QUEUED.get();
  }

  private static ThreadPoolExecutor pool() {
    ThreadPoolExecutor p = pool;
    if (p == null) {
      synchronized (WaitingThreads.class) {
        p = pool;
        if (p == null) {
          AtomicInteger n = new AtomicInteger();
          p = new ThreadPoolExecutor(THREADS, THREADS, 0, TimeUnit.SECONDS, new LinkedTransferQueue<>(), r -> {
            Thread t = new Thread(r, "sluice-store-wait-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
          });
          p.prestartAllCoreThreads();
          pool = p;
        }
      }
    }
    return p;
  }
}
