package io.sluice.sync;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.Outcome;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.LeaseStore;

/**
 * How one {@link SyncedLimiter} takes back permits an allowed acquire took ({@link SyncedLimiter#release}):
 * given back to the store in exact mode, kept spent by token claims, and for a window limit taken off
 * what the key's view has not sent yet, else kept to pay for the node's next admissions of the key.
 *
 * <p>Concurrency: no state of its own; called on deciding threads at once, a view is touched only
 * under its monitor.
 */
final class PermitReleases {
  private final Limit limit;
  private final ExactStore exact;
  private final TokenClaims tokens;
  private final LeaseStore leases;
  private final ViewTable views;
  private final FlushQueue queue;
  private final StoreDecisions byStore;
  private final DecisionRouter router;

  PermitReleases(LimiterSetup l, FlushQueue queue, StoreDecisions byStore, DecisionRouter router) {
    this.limit = l.limit;
    this.exact = l.exact;
    this.tokens = l.tokens;
    this.leases = l.leases;
    this.views = l.views;
    this.queue = queue;
    this.byStore = byStore;
    this.router = router;
  }

  /** See {@link SyncedLimiter#release}. */
  void release(String key, long cost, Decision acquired) {
    router.checkRequest(key, cost);
    if (acquired == null || acquired.outcome() != Outcome.ALLOWED || acquired.limit() != limit) {
      throw new IllegalArgumentException("acquired: must be an allowed decision of this limiter (" + limit.name()
          + "), got " + acquired);
    }
    if (exact != null) {
      byStore.giveBackExact(key, cost, acquired);
      return;
    }
    if (tokens != null) {
      // token claims: the permits stay spent. Put back into a holding they would be covered by a grant
      // that did not pay for them, and given back to the store they would lower its backlog under other
      // nodes' claims (see TokenClaims#decide): under-admission, never over
      return;
    }
    KeyView v = views.get(key);
    if (v == null) {
      // a key not in the table was decided on the overflow view, while the table was full (or its
      // view has been dropped since, with its windows over: the window check below refuses those)
      v = views.get(ViewTable.OVERFLOW_KEY);
      if (v == null) {
        return;
      }
    }
    synchronized (v) {
      releaseIntoWindow(v, cost, acquired);
    }
  }

  /** Under the view's monitor: takes the permits off the window they were counted in, if it is still the view's. */
  private void releaseIntoWindow(KeyView v, long cost, Decision acquired) {
    queue.settle(v);
    long back = Math.min(cost, v.ownCur);
    // (only into the window the permits were counted in: after a roll they are that window's, gone by)
    if (v.window != acquired.window() || v.retired || back <= 0) {
      return;
    }
    v.ownCur -= back;
    if (leases != null) {
      v.grants().add(back); // (reservation: the permit came out of the node's lease)
      return;
    }
    long unsent = Math.min(back, v.unsentCur);
    v.unsentCur -= unsent;
    v.pendingCur -= unsent;
    queue.pendingPermits.add(-unsent);
    v.releasedCur += back - unsent;
  }
}
