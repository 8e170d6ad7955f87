package io.sluice.sync.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A view's <em>credit</em> (see {@link KeyView}): permits that decisions may take with one
 * compare-and-set and no monitor, until a ticker time, granted and taken back under the view's
 * monitor. Its fields sit in the view itself (this is the view's superclass, not an object of its
 * own): a decision that the credit pays reads one object.
 *
 * <p>Concurrency: {@link #takeCredit} and {@link #creditLeft} run without the monitor, on the
 * volatile fields; every other method under the view's monitor.
 */
abstract class ViewCredit extends ViewClaim {
  private static final VarHandle CREDIT;

  static {
    try {
      CREDIT = MethodHandles.lookup().findVarHandle(ViewCredit.class, "credit", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Permits decisions may take without the monitor; only {@link #takeCredit} lowers it. */
  private volatile long credit;
  /** Ticker time from which the credit must not be used (the window's end, or the view going stale). */
  private volatile long creditUntil = Long.MIN_VALUE;
  /** The credit as granted (guarded by the monitor): granted less what is left is what was used. */
  private long creditGranted;
  /** A decision that leaves the credit at or below this has filled a batch: it asks for a sync. */
  private volatile long syncAtOrBelow;
  /**
   * The credit was granted out of the node's allowance on the key's window (guarded by the monitor):
   * what decisions take of it is admitted under the allowance (see Allowances#creditLeft).
   */
  private boolean creditFromAllowance;
  /** The credit's decision that takes it to {@link #syncAtOrBelow} asks for a sync (guarded by the monitor). */
  private boolean creditAsksSync;

  /** {@link #takeCredit}: the credit paid; it paid and filled a batch; it cannot pay. */
  static final int PAID = 1;
  static final int PAID_SYNC = 2;
  static final int UNPAID = 0;

  /**
   * Takes {@code cost} permits of the credit, without the monitor: {@link #UNPAID} when the credit
   * cannot pay, {@link #PAID_SYNC} for the one decision that fills a batch.
   */
  int takeCredit(long now, long cost) {
    if (now >= creditUntil) {
      return UNPAID;
    }
    long c;
    do {
      c = credit;
      if (c < cost) {
        return UNPAID;
      }
    } while (!CREDIT.weakCompareAndSet(this, c, c - cost));
    long syncAt = syncAtOrBelow;
    return c > syncAt && c - cost <= syncAt ? PAID_SYNC : PAID;
  }

  /**
   * Under the monitor: lets decisions take up to {@code amount} permits without it until
   * {@code until}; the decision that takes the credit past {@code untilBatch} permits asks for a sync
   * (none does when it is not positive). The credit is written last, so a decision that sees it also
   * sees the rest.
   */
  void grantCredit(long amount, long until, long untilBatch) {
    creditFromAllowance = false;
    creditAsksSync = untilBatch > 0;
    creditGranted = amount;
    creditUntil = until;
    syncAtOrBelow = untilBatch > 0 ? amount - untilBatch : amount;
    credit = amount;
  }

  /**
   * Under the monitor: lets decisions take up to {@code amount} permits of the node's allowance without
   * it until {@code until}; none of them asks for a sync (the allowance's permits go with a regular one).
   */
  void grantAllowanceCredit(long amount, long until) {
    grantCredit(amount, until, 0);
    creditFromAllowance = true;
  }

  /** Under the monitor: whether the view holds a credit out of the node's allowance. */
  boolean creditFromAllowance() {
    return creditFromAllowance && creditGranted > 0;
  }

  /** The credit decisions may take without the monitor at {@code now} (0 where it has ended). */
  long creditLeft(long now) {
    return now >= creditUntil ? 0 : credit;
  }

  /**
   * Under the monitor: whether decisions have taken the credit down to the batch it was granted to fill:
   * the one that did asked for a sync, which a decision under the monitor would have marked as wanted.
   */
  boolean creditFilledBatch() {
    return creditGranted > 0 && creditAsksSync && credit <= syncAtOrBelow;
  }

  /** Under the monitor: whether the view holds a credit (granted and not all taken back). */
  boolean holdsCredit() {
    return creditGranted > 0;
  }

  /**
   * Under the monitor: how many permits decisions took from the credit since it was granted or last
   * harvested, leaving the rest to them. (Decisions only lower the credit, by compare-and-set: what is
   * left now is the base of the next count.)
   */
  long harvestCredit() {
    if (creditGranted == 0) {
      return 0;
    }
    long left = credit;
    long used = creditGranted - left;
    creditGranted = left;
    return used;
  }

  /** Under the monitor: the credit ends at {@code until} now (earlier or later than granted). */
  void creditUntil(long until) {
    creditUntil = until;
  }

  /** Under the monitor: takes the credit back and returns how many permits decisions took from it. */
  long revokeCredit() {
    if (creditGranted == 0) {
      return 0;
    }
    long left = (long) CREDIT.getAndSet(this, 0L);
    long used = creditGranted - left;
    creditGranted = 0;
    creditUntil = Long.MIN_VALUE;
    return used;
  }
}
