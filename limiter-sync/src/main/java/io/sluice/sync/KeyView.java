package io.sluice.sync;

/**
 * One node's view of one key of a window limit: the global counts of the current and previous
 * windows as of the last sync, and what this node admitted that the store has not acknowledged yet
 * (pending), of which a part is not even sent (unsent). Guarded by its own monitor: every critical
 * section is a few arithmetic steps, and no store call is ever made while holding it.
 */
final class KeyView {
  final String key;
  long window = Long.MIN_VALUE;
  long globalCur;
  long globalPrev;
  long pendingCur;
  long pendingPrev;
  long unsentCur;
  long unsentPrev;
  /** This node's own admissions in the current and previous window, acknowledged or not. */
  long ownCur;
  long ownPrev;
  /** Ticker time of the last acknowledgement that refreshed the global counts. */
  long syncedAt = Long.MIN_VALUE;
  /** Denial cache: the global count alone is over the limit until then. */
  long deniedUntil = Long.MIN_VALUE;
  /** In the dirty queue, waiting for a flush. */
  boolean queued;
  /** Reservation mode: permits granted for {@link #window} and not used yet. */
  long leased;
  /** Reservation mode: a lease was asked for and not answered yet. */
  boolean leaseWanted;
  /** Reservation mode: budget left in the window when the store last answered (-1 before). */
  long lastRemaining = -1;
  /** Demand (permits asked for) since {@link #rateSince}, its running rate per second, hotness. */
  long hits;
  double rate;
  long rateSince = Long.MIN_VALUE;
  boolean hot;
  /** Ticker time of the last urgent sync asked for this key (hot keys are throttled). */
  long lastUrgentSync = Long.MIN_VALUE;
  /**
   * Regional quota: the region's share for {@link #window} and for the window after it, as the store
   * last answered (-1: no coordinator's lease covers it, the static share applies), and the permits
   * denied here since the last flush (the demand the coordinator weighs; dropped at a window's end).
   */
  long share = -1;
  long nextShare = -1;
  long deniedUnsent;

  KeyView(String key) {
    this.key = key;
  }

  /**
   * Moves the view to window {@code w} (never backwards). Unsent permits of windows that fall out of
   * the view are handed to {@code orphans} so that they still reach the store.
   */
  void roll(long w, OrphanSink orphans) {
    if (w <= window) {
      return;
    }
    if (window != Long.MIN_VALUE && w == window + 1) {
      if (unsentPrev > 0) {
        orphans.add(key, window - 1, unsentPrev);
      }
      globalPrev = globalCur;
      pendingPrev = pendingCur;
      unsentPrev = unsentCur;
      ownPrev = ownCur;
    } else {
      if (window != Long.MIN_VALUE) {
        if (unsentPrev > 0) {
          orphans.add(key, window - 1, unsentPrev);
        }
        if (unsentCur > 0) {
          orphans.add(key, window, unsentCur);
        }
      }
      globalPrev = 0;
      pendingPrev = 0;
      unsentPrev = 0;
      ownPrev = 0;
    }
    globalCur = 0;
    pendingCur = 0;
    unsentCur = 0;
    ownCur = 0;
    share = w == window + 1 ? nextShare : -1;
    nextShare = -1;
    deniedUnsent = 0;
    leased = 0; // a grant is for one window: what is left of it is budget given up, never carried over
    lastRemaining = -1;
    window = w;
  }

  /** Nothing to send and nothing waiting for an answer. */
  boolean quiet() {
    return pendingCur == 0 && pendingPrev == 0 && unsentCur == 0 && unsentPrev == 0;
  }

  interface OrphanSink {
    void add(String key, long window, long amount);
  }
}
