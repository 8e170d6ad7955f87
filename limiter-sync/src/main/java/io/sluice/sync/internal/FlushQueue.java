package io.sluice.sync.internal;

import io.sluice.node.Ticker;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.Delta;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * What one {@link SyncedLimiter} has to send to the store, between its deciding threads and its
 * flusher: the views queued for the next sync, the permits of windows a view rolled past (orphans),
 * the count of permits not acknowledged yet, and the flusher's wake-up.
 *
 * <p>Concurrency: the queues are concurrent; a view is queued under its own monitor ({@code queued}
 * is the view's, guarded by it) and unqueued by the flusher under it; the wake-up is a CAS on one
 * flag. The flusher thread is set once, before the first decision.
 */
final class FlushQueue {
  final ConcurrentLinkedQueue<KeyView> dirty = new ConcurrentLinkedQueue<>();
  final ConcurrentLinkedQueue<Delta> orphans = new ConcurrentLinkedQueue<>();
  final AtomicBoolean syncRequested = new AtomicBoolean();
  /** Permits admitted here that the store has not acknowledged yet (sent or not). */
  final LongAdder pendingPermits = new LongAdder();
  /** Where a view hands unsent permits of windows it rolls past (one object, not one per decision). */
  final KeyView.OrphanSink orphanSink = this::orphan;
  private final Counter counter;
  private final Ticker ticker;
  /** The thread a sync request wakes (null without one: tests drive syncs themselves). */
  private volatile Thread flusher;

  FlushQueue(Counter counter, Ticker ticker) {
    this.counter = counter;
    this.ticker = ticker;
  }

  /**
   * A regional token bucket's demand ({@code TokenClaims}): permits admitted and denied on a key in a
   * window, counted by the next sync's flush (its tokens were taken from the store's bucket by claims).
   */
  void demand(Delta d) {
    pendingPermits.add(d.amount());
    orphans.add(d);
  }

  void wakes(Thread flusher) {
    this.flusher = flusher;
  }

  /**
   * Under the view's monitor: takes its credit back and counts what decisions took from it as if
   * each had been admitted under the monitor (the view is already queued: the grant came with an
   * admission that queued it, and only a drain of the queue, which settles first, unqueues it).
   */
  void settle(KeyView v) {
    boolean allowance = v.creditFromAllowance();
    counted(v, v.revokeCredit(), allowance);
  }

  /**
   * Under the view's monitor, by the flusher keeping the view for a later sync: counts what decisions
   * took of its credit and leaves the rest to them (KeyView#harvestCredit).
   */
  void harvest(KeyView v) {
    boolean allowance = v.creditFromAllowance(); // (before the harvest: a credit used up is then no longer held)
    counted(v, v.harvestCredit(), allowance);
  }

  private void counted(KeyView v, long used, boolean underAllowance) {
    if (used > 0) {
      countAdmitted(v, used);
      if (underAllowance) {
        v.admittedUnderAllowance(used);
      }
      v.creditUsed(used, ticker.read());
    }
  }

  /** Under the view's monitor: puts it in the flusher's queue, unless it is there already. */
  void enqueue(KeyView v) {
    if (v.enqueue()) {
      dirty.add(v);
    }
  }

  /**
   * Under the view's monitor: {@code permits} admitted in the view's window, to be sent, but for those
   * that permits given back after the store counted them pay for (see {@link SyncedLimiter#release}).
   */
  void countAdmitted(KeyView v, long permits) {
    pendingPermits.add(v.countAdmitted(permits));
  }

  private void orphan(String key, long window, long amount) {
    // (windows a view rolled past are over: a fixed window's go as counts only)
    Delta d = new Delta(counter, key, window, amount);
    orphans.add(Delta.goesAfterItsWindow(counter) ? d.afterItsWindow() : d);
  }

  /** Asks the flusher for a sync now rather than at its interval. */
  void requestSync() {
    Thread t = flusher;
    if (syncRequested.compareAndSet(false, true) && t != null) {
      LockSupport.unpark(t);
    }
  }

  /** Whether a decision asked for a sync since the last call (without a flusher: for tests). */
  boolean takeSyncRequest() {
    return syncRequested.getAndSet(false);
  }
}
