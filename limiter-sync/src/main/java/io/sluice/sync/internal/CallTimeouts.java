package io.sluice.sync.internal;

import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * Times out asynchronous store calls without taking a lock on the caller's thread.
 *
 * <p>{@link CompletableFuture#orTimeout} schedules on the JDK's one {@code ScheduledThreadPoolExecutor}
 * and cancels that task when the answer comes: both take the executor's queue lock, so an event loop
 * that decides asynchronously could park on it (BlockHound saw it in CI). Here the caller only adds to
 * a lock-free queue (and unparks the timer thread when it sleeps); one daemon thread keeps the
 * deadlines in a heap of its own and completes the late calls exceptionally. A call answered before
 * the thread next looks (every {@link #SWEEP_NANOS} while any call is pending) never reaches the heap;
 * a slower one stays there until its deadline, so the heap is bounded by the rate of calls slower
 * than the sweep times the timeout.
 */
final class CallTimeouts {
  /** How often the thread looks at new calls while any is pending: also the timeout's resolution. */
  static final long SWEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private static final System.Logger LOG = System.getLogger(CallTimeouts.class.getName());
  private static final CallTimeouts SHARED = new CallTimeouts();

  private record Pending(long deadline, CompletableFuture<?> call) {}

  private final ConcurrentLinkedQueue<Pending> arriving = new ConcurrentLinkedQueue<>();
  private final PriorityQueue<Pending> byDeadline =
      new PriorityQueue<>((a, b) -> Long.compare(a.deadline - b.deadline, 0));
  private volatile boolean sleeping;
  private final Thread thread;

  private CallTimeouts() {
    thread = new Thread(this::run, "sluice-call-timeouts");
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * A copy of {@code call} that completes as it does, or exceptionally with a {@link
   * TimeoutException} when it has not within {@code timeoutNanos}; the store's own future is left
   * alone.
   */
  static <T> CompletableFuture<T> within(CompletableFuture<T> call, long timeoutNanos) {
    CompletableFuture<T> timed = call.copy();
    if (!timed.isDone()) {
      SHARED.watch(timed, System.nanoTime() + timeoutNanos);
    }
    return timed;
  }

  private void watch(CompletableFuture<?> call, long deadline) {
    arriving.offer(new Pending(deadline, call));
    if (sleeping) {
      LockSupport.unpark(thread);
    }
  }

  private void run() {
    while (true) {
      for (Pending next; (next = arriving.poll()) != null; ) {
        if (!next.call.isDone()) {
          byDeadline.add(next);
        }
      }
      long now = System.nanoTime();
      while (!byDeadline.isEmpty() && (byDeadline.peek().call.isDone() || byDeadline.peek().deadline - now <= 0)) {
        try {
          byDeadline.poll().call.completeExceptionally(new TimeoutException("store call timed out"));
        } catch (Throwable e) {
          // what depends on a call runs here when it times out: nothing it throws may stop the thread
          LOG.log(System.Logger.Level.WARNING, "sluice: a store call's timeout handler threw", e);
        }
      }
      if (byDeadline.isEmpty()) {
        // the unpark in watch() may come between the check and the park: park then returns at once
        sleeping = true;
        if (arriving.isEmpty()) {
          LockSupport.park(this);
        }
        sleeping = false;
      } else {
        LockSupport.parkNanos(this, Math.min(SWEEP_NANOS, byDeadline.peek().deadline - now));
      }
    }
  }
}
