package io.sluice.sync.internal;

import io.sluice.sync.internal.WindowDecisions.Judgement;
import java.time.Duration;

/**
 * Reservation mode's verdict on a window limit's key (see {@link WindowVerdict}): a decision is
 * admitted out of the grants the store made this node ({@link LeaseGrants}), and one no grant pays for
 * asks the store for a grant of at least its cost, in one round trip; the next grant is asked for
 * ahead, at a sync, before the one held runs out ({@link WindowLeases} sizes them).
 *
 * <p>Concurrency: immutable; every method runs under the view's monitor.
 */
final class LeaseVerdict implements WindowVerdict {
  private final Duration claimTimeout;
  private final WindowClaims claims;
  private final WindowLeases leaseOps;
  private final boolean sliding;
  private final long syncIntervalNanos;
  private final long windowNanos;

  LeaseVerdict(LimiterSetup l, WindowClaims claims) {
    this.claimTimeout = l.claimTimeout;
    this.claims = claims;
    this.leaseOps = new WindowLeases(l, claims);
    this.sliding = l.sliding;
    this.syncIntervalNanos = l.syncIntervalNanos;
    this.windowNanos = l.windowNanos;
  }

  /** A sliding window's grant left unused on the window gone by goes back (the answer is not waited for). */
  @Override
  public void rolled(KeyView view, long now) {
    if (view.hasLeftoverGrant()) {
      leaseOps.giveBackLeftover(view, now);
    }
  }

  /** Admitted when the node's grant pays; a grant asked for when none does. */
  @Override
  public int verdict(KeyView view, Judgement j) {
    long cost = j.cost;
    long now = j.now;
    // (what the view holds of a grant is counted in the store already: only the rest needs room)
    LeaseGrants grants = view.grants();
    if (grants.held() < cost && !j.asked && leaseOps.mayHelp(view, now, cost - grants.held())) {
      if (j.noWait) {
        return WindowDecisions.WOULD_WAIT;
      }
      // no grant pays for it: the store decides, in one round trip, as for a claim
      j.asked = true;
      if (!leaseOps.leaseNow(view, now, cost - grants.held(), claimTimeout)) {
        j.fallback = true;
      }
      return WindowDecisions.AGAIN;
    }
    j.fromLease = true;
    j.admit = grants.held() >= cost;
    if (j.admit) {
      grants.use(cost);
      view.ownAdmitted(cost);
      // what this node still holds of its grants, and what the store had granted no node at its last
      // answer (look's estimate: the grants are in its counts). The grant alone read 0 after the first
      // request of a limit of 5, and a client told "RateLimit-Remaining: 0" held back with 4 left.
      j.remaining = grants.held() + Math.max(0, j.remaining);
    } else {
      j.remaining = 0;
      j.retryAfter = grants.lastRemaining() == 0 && !sliding ? (view.window() + 1) * windowNanos - j.at : syncIntervalNanos;
    }
    // ask ahead, so that the next grant is on its way before this one runs out; a sliding window
    // frees budget as the previous window fades, so with none left it asks again now and then
    boolean budgetLeft = grants.lastRemaining() != 0 || (sliding && now - view.syncedAt() > syncIntervalNanos);
    if (!grants.wanted() && claims.sizing.expectedUntilSync(view) > 0 && grants.held() < leaseOps.leaseSize(view, now) / 2 + cost
        && budgetLeft) {
      grants.wanted(true);
      j.urgent = true;
    }
    return WindowDecisions.DECIDED;
  }
}
