package io.sluice.sync.internal;

import io.sluice.sync.StoreFailurePolicy;
import java.util.function.IntSupplier;

/**
 * What a window limit's failure policy lets a node admit while the store is out of reach (the
 * breaker open, or a store call that failed): everything (FAIL_OPEN), nothing (FAIL_CLOSED), or this
 * node's part of the limit (LOCAL_SHARE, below). Every method that takes a view runs under the view's
 * monitor; the settings are immutable.
 */
final class WindowFallback {
  private final IntSupplier activeNodes;
  private final WindowClaims claims;
  private final StoreFailurePolicy onStoreFailure;
  private final WindowBudget budget;
  private final long shareHoldNanos;
  private final boolean sliding;

  WindowFallback(LimiterSetup l, WindowClaims claims) {
    this.activeNodes = l.activeNodes;
    this.claims = claims;
    this.onStoreFailure = l.onStoreFailure;
    this.budget = l.budget;
    this.shareHoldNanos = l.shareHoldNanos;
    this.sliding = l.sliding;
  }

  /**
   * The failure policy's decision. LOCAL_SHARE: what was free when the store last answered (the whole
   * limit in a window it never answered for) is split evenly between the nodes, and this node admits
   * within its part what the store has not acknowledged from it, and within an even split of the whole
   * limit what it admitted in all; the nodes' parts add up to what was free, so nodes cut off together
   * stay within the limit in the window the fault began too, whatever each had admitted before it (the
   * even split of the whole limit alone let the nodes that had admitted less add up to more). With the
   * breaker open ({@code breakerOpen}) on a fixed window, the node also fixes its part for the rest of
   * the window, and its even split of the whole limit in the windows after it: once the store is back,
   * other nodes may still be on theirs, and it must not spend budget the store does not show yet (see the
   * share cap in WindowDecisions#verdict). It holds the part for at most
   * {@link #shareHoldNanos} after its last decision on the share: the time nodes cut off together take
   * to come back (a breaker's wait in the open state and a flush, twice); a node cut off for longer than
   * the others is a partial cut, where LOCAL_SHARE passes the limit by the cut nodes' shares anyway.
   */
  boolean admits(KeyView view, double prevWeight, long cost, boolean breakerOpen, long now) {
    switch (onStoreFailure) {
      case FAIL_OPEN:
        return true;
      case FAIL_CLOSED:
        return false;
      default:
        if (!budget.localShareAllowed(view)) {
          // a region's node that cannot reach its store and holds no share for this window admits
          // nothing: the coordinator, which sees it stop beating, counts the region at the shares its
          // leases gave only until they run out, and G / R now could push the regions' sum over G (a
          // node that never read a share, restarted while cut off, included)
          return false;
        }
        int nodes = Math.max(1, activeNodes.getAsInt());
        double free = Math.max(0,
            claims.capacity(view) - ClaimSizing.weighted(view.globalPrev(), view.globalCur(), prevWeight));
        // parts rounded down: rounded up, each node's part and whole split gained up to a permit, and
        // three nodes cut off together admitted 12 of a limit of 10 (a limit below the node count
        // admits nothing while every node is cut off: no node can tell which of them may)
        long part = (long) Math.floor(free / nodes + 1e-9);
        // and never more than an even split of the whole limit, its own admissions counted: that
        // bound is exact where the nodes had admitted evenly, while the parts of what was free rest on
        // the counts of each node's last answer, up to a sync interval apart (and behind each other)
        long whole = claims.capacity(view) / nodes;
        if (breakerOpen && !sliding) {
          view.holdLocalShare(Math.min(view.ownCur() - view.pendingCur() + part, Math.max(view.ownCur(), whole)), whole,
              now, now + shareHoldNanos);
        }
        double unacknowledged = ClaimSizing.weighted(view.pendingPrev(), view.pendingCur(), prevWeight);
        double own = ClaimSizing.weighted(view.ownPrev(), view.ownCur(), prevWeight);
        return unacknowledged + cost <= part && own + cost <= whole;
    }
  }
}
