package io.sluice.sync.internal;

import io.sluice.sync.internal.WindowDecisions.Judgement;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

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
  private final IntSupplier activeNodes;
  private final BooleanSupplier nodeCountConfirmed;

  LeaseVerdict(LimiterSetup l, WindowClaims claims) {
    this.activeNodes = l.activeNodes;
    this.nodeCountConfirmed = l.nodeCountConfirmed;
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

  /**
   * Whether a denied request of {@code cost} can be admitted before its fixed window ends: not where the
   * store's last answer left nothing, nor, for a node the registry has confirmed alone (no other node's
   * grant to come back), where what it holds and what that answer left fall short of the cost. Its
   * retry-after is then the window's end, as the exact algorithm's; a sync interval said to retry at
   * once, and the retry was denied again (WindowProbe, one node, fixed windows: 141 decisions in the
   * cases from seed 900,000, requests larger than what was left of the window).
   */
  private boolean nothingComesForIt(LeaseGrants grants, long cost) {
    if (sliding) {
      return false;
    }
    long left = grants.lastRemaining();
    return left == 0 || (confirmedAlone() && left > 0 && grants.held() + left < cost);
  }

  /**
   * A denial's retry-after: the window's end where nothing comes for the cost before it ({@link
   * #nothingComesForIt}); on a sliding window, for a node the registry has confirmed alone, when the
   * window before has faded enough for the cost beside what the store counts, as the exact algorithm's
   * (it said one sync interval, and the retry was denied again, one store call each); else one sync
   * interval, in which other nodes may give grants back.
   */
  private long retryAfterDenial(KeyView view, LeaseGrants grants, Judgement j) {
    if (nothingComesForIt(grants, j.cost)) {
      return (view.window() + 1) * windowNanos - j.at;
    }
    if (sliding && confirmedAlone()) {
      // (the grants it holds are counted in the store already: only the rest needs room)
      return Math.max(syncIntervalNanos, claims.retryAfter(view, j.at, j.cost - grants.held(), j.capacity));
    }
    return syncIntervalNanos;
  }

  /** Whether the registry has confirmed that this node is alone. */
  private boolean confirmedAlone() {
    return activeNodes.getAsInt() <= 1 && nodeCountConfirmed.getAsBoolean();
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
    // a node the registry has confirmed alone has its key's rate measured by the flusher (a view that
    // only spends grants has nothing to send, so the flusher never saw it): the next grant is then
    // asked for ahead, at a sync, before this one runs out, rather than by a decision that waits for
    // it. Grants held ahead block no other node's requests where there is none; with others, a grant
    // sized so held the permits their requests were then denied (the accuracy kit, 3 and 8 nodes:
    // up to 3.7% of requests more denied), so they keep asking when they need
    j.measure = !(view.rate() > 0) && confirmedAlone();
    j.admit = grants.held() >= cost;
    if (j.admit) {
      grants.use(cost);
      view.ownAdmitted(cost);
      // what this node still holds of its grants, and what the store had granted no node at its last
      // answer (look's estimate: the grants are in its counts). The grant alone read 0 after the first
      // request of a limit of 5, and a client told "RateLimit-Remaining: 0" held back with 4 left.
      j.remaining = grants.held() + Math.max(0, j.remaining);
    } else {
      // what this node could admit now: its grants and what the store had left at its last answer, as
      // for an admission, below the cost it denied (a request larger than what was left was denied with
      // remaining 0, though a smaller one fitted: ReservationRemainingTest)
      j.remaining = Math.min(cost - 1, grants.held() + Math.max(0, j.remaining));
      j.retryAfter = retryAfterDenial(view, grants, j);
    }
    // ask ahead, so that the next grant is on its way before this one runs out; a sliding window
    // frees budget as the previous window fades, so with none left it asks again now and then
    boolean budgetLeft = grants.lastRemaining() != 0 || (sliding && now - view.syncedAt() > syncIntervalNanos);
    // (nor where the grant it would ask for pays for less than one of the key's requests: asked for at
    // a sync, it is spent before a request it pays for comes, a store call for nothing)
    long ahead = leaseOps.leaseSize(view, now);
    // (nor for a denied cost a grant ahead cannot pay: each such denial took another grant ahead of the
    // one held unused, 737 -> 836 of a limit of 1,000 on a node that then got no more requests, and the
    // other node's requests were denied from 192 admitted: WindowProbe seed 606228, IdleLeaseTest)
    long next = j.admit || cost <= ahead ? cost : 0;
    if (!grants.wanted() && claims.sizing.expectedUntilSync(view) > 0 && grants.held() < ahead / 2 + next
        && ahead >= view.meanCost() && budgetLeft) {
      grants.wanted(true);
      j.urgent = true;
    }
    return WindowDecisions.DECIDED;
  }
}
