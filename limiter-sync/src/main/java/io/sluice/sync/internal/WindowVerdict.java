package io.sluice.sync.internal;

import io.sluice.sync.internal.WindowDecisions.Judgement;

/**
 * How a window limit's decision is settled once the cases every mode shares are not it (a local
 * share held since a fault, a take the store counted, released permits used again, the failure
 * policy): by claims ({@link ClaimVerdict}: the approximate mode), by shares ({@link ShareVerdict}: the
 * approximate mode where the store keeps no claims, and regional quotas) or by grants ({@link
 * LeaseVerdict}: reservation mode). One per limiter, chosen when
 * it is built ({@link WindowDecisions}); each runs under the key's view's monitor.
 */
interface WindowVerdict {
  /**
   * The verdict on {@code j}: {@link WindowDecisions#DECIDED}, or a store call made before deciding
   * again (a claim step's answer, {@link WindowDecisions#AGAIN} after a lease call), or {@link
   * WindowDecisions#WOULD_WAIT} for a decision told not to wait.
   */
  int verdict(KeyView view, Judgement j);

  /** The view just rolled into the window of {@code now} (ticker time). */
  default void rolled(KeyView view, long now) {
  }
}
