package io.sluice.sync.internal;

import io.sluice.sync.internal.WindowDecisions.Judgement;
import java.util.concurrent.atomic.LongAdder;

/**
 * The approximate mode's verdict on a window limit's key (see {@link WindowVerdict}), what claims and
 * shares decide alike: a decision is admitted where the view's counts leave room and what the node may
 * admit (its claim, {@link ClaimVerdict}, or on a store that keeps no claims its share of the limit,
 * {@link ShareVerdict}) pays for it; one over the limit is denied, and remembered as denied until the
 * counts could have changed. What a decision nothing pays for does is the mode's.
 *
 * <p>Concurrency: immutable; every method runs under the view's monitor.
 */
abstract class CountVerdict implements WindowVerdict {
  /** From {@link #unpaid}: the mode has nothing to try, the decision is denied. */
  static final int DENIED = Integer.MIN_VALUE;
  private final LongAdder cachedDenials;
  /** Approximate mode: decisions may take a view's credit without its monitor. */
  final boolean credited;
  private final long hotSyncIntervalNanos;
  private final long staleAfterNanos;
  final long syncIntervalNanos;
  private final long windowNanos;
  final WindowClaims claims;

  CountVerdict(LimiterSetup l, WindowClaims claims) {
    this.cachedDenials = l.cachedDenials;
    this.credited = l.credited;
    this.hotSyncIntervalNanos = l.hotSyncIntervalNanos;
    this.staleAfterNanos = l.staleAfterNanos;
    this.syncIntervalNanos = l.syncIntervalNanos;
    this.windowNanos = l.windowNanos;
    this.claims = claims;
  }

  /**
   * A view over the limit with this node's own pending permits, which are perhaps counted already: the
   * mode's store call to refresh it, or {@link WindowDecisions#DECIDED} (denied as it stands).
   */
  abstract int overTheLimitAsk(KeyView view, Judgement j, long cost);

  /**
   * Within the limit as far as the view shows, and what the node may admit does not pay for the
   * decision's {@code cost} ({@code need} with what its claim already paid): what the mode does, or
   * {@link #DENIED}.
   */
  abstract int unpaid(KeyView view, Judgement j, long need, long cost);

  /**
   * Whether what the node may admit is held for it long enough that its permits need no fresh counts
   * and wait for a full batch (a claim that lasts: the store reserved it for this node).
   */
  abstract boolean lasting(KeyView view, long now);

  /**
   * Whether the key is too cold for the node to expect more demand on it: its permits wait for a full
   * batch or the regular sync, however few (the claim it asked for pays for them).
   */
  abstract boolean cold(KeyView view, long now);

  /** A denial the view remembers, then over the limit or within it as the view's counts show. */
  @Override
  public int verdict(KeyView view, Judgement j) {
    long cost = j.cost;
    if (j.now < view.deniedUntil() && j.fresh && j.globalEstimate + cost - j.reuse > j.capacity) {
      // (a smaller cost than the one that cached the denial may still fit)
      cachedDenials.increment();
      j.admit = false;
      j.retryAfter = view.deniedUntil() - j.now;
      return WindowDecisions.DECIDED;
    }
    if (j.globalEstimate + j.own + cost - j.reuse > j.capacity) {
      return overTheLimit(view, j);
    }
    return withinTheLimit(view, j);
  }

  /** Over the limit with this node's own pending permits: denied, unless an old view must ask first. */
  private int overTheLimit(KeyView view, Judgement j) {
    long cost = j.cost - j.reuse; // (what needs room: released permits are counted already)
    j.admit = false;
    j.retryAfter = claims.retryAfter(view, j.at, cost, j.capacity);
    if (j.fresh && j.globalEstimate + cost > j.capacity) {
      view.denyUntil(j.now + j.retryAfter);
    } else {
      // our own pending may have been counted already: fresh counts may show room, unless the
      // key was at its limit then too
      j.urgent = !j.fresh || !claims.atLimit(view, j.globalEstimate, j.at);
      return overTheLimitAsk(view, j, cost);
    }
    return WindowDecisions.DECIDED;
  }

  /** Within the limit as far as the view shows: admitted when the node's allowance (its claim) pays. */
  private int withinTheLimit(KeyView view, Judgement j) {
    long cost = j.cost - j.reuse; // (what needs room: released permits are counted already)
    long now = j.now;
    boolean limitReached = claims.atLimit(view, j.globalEstimate, j.at);
    long allowance = claims.allowance(view, j.globalEstimate, j.fresh, j.at, limitReached);
    long need = (long) Math.ceil(j.claimed + cost);
    if (j.claimed + cost > allowance) {
      int tried = unpaid(view, j, need, cost);
      if (tried != DENIED) {
        return tried;
      }
      j.admit = false;
      // a sync may show budget the other nodes left; at the limit it shows none worth the call
      j.urgent = !j.fresh || !limitReached;
      j.retryAfter = syncIntervalNanos;
      // what this node can admit now (the rest of the limit is other nodes' claims): a 429 does
      // not announce a quota its retry would be denied
      j.remaining = Math.max(0, Math.min(j.remaining, (long) Math.floor(allowance - j.claimed)));
      return WindowDecisions.DECIDED;
    }
    j.admit = true;
    j.remaining -= cost;
    // flush a full batch, or near the limit half the allowance, so that the answer is back
    // before the allowance runs out (flushing later lets the other nodes' views fall behind:
    // over-admission tripled when it waited for two round trips' demand); at the limit only a
    // full batch (see atLimit). A key asked less than about once a sync interval (no claim
    // ahead of demand) waits for the regular sync: its permit is covered by the claim it
    // asked for, and a flush per request would double its store calls
    long batch = claims.sizing.batchFor(view);
    long trigger = limitReached || cold(view, now) ? batch : Math.max(1, Math.min(batch, allowance / 2));
    // (and a claim that lasts pays for the permits: they wait for a full batch, not half the
    // allowance, which on a small claim was a flush per request or two)
    boolean lasting = lasting(view, now);
    j.urgent = (!j.fresh && !lasting) || view.unsentCur() + cost >= (lasting ? batch : trigger);
    if (credited && (j.fresh || lasting)) {
      // (the decision that fills what would make one under the monitor urgent asks for the sync)
      grantCredit(view, j, allowance, lasting ? batch : trigger, lasting);
    }
    return WindowDecisions.DECIDED;
  }

  /**
   * Under the view's monitor, after an admission: what the view shows free for a credit after it,
   * within a local share held since a fault (the limit a decision under the monitor keeps to).
   */
  static long freeForCredit(KeyView view, Judgement j) {
    long free = (long) Math.floor(j.capacity - j.globalEstimate - (j.own + j.cost - j.reuse));
    return view.localShareHeld(j.now) ? Math.min(free, view.localShareCap() - view.ownCur() - j.cost) : free;
  }

  /**
   * What the within-the-limit verdict would go on admitting, with nothing else changing: the next
   * decisions may take that without the monitor, and the one that fills the batch asks for the sync.
   */
  private void grantCredit(KeyView view, Judgement j, long allowance, long trigger, boolean lasting) {
    long cost = j.cost;
    long now = j.now;
    double claimedAfter = j.claimed + cost - j.reuse;
    long credit = Math.min((long) Math.floor(allowance - claimedAfter), freeForCredit(view, j));
    if (credit > 0) {
      boolean throttled = view.hot() && view.urgentSyncWithin(now, hotSyncIntervalNanos);
      // (while the view is fresh; a claim that lasts pays whatever the counts' age, as it does under the
      // monitor, for as long as it lasts: WindowClaims#lastingCreditUntil, renewed by the flusher)
      long until = Math.min((view.window() + 1) * windowNanos, j.fresh ? view.syncedAt() + staleAfterNanos + 1 : now);
      if (lasting) {
        until = Math.max(until, claims.lastingCreditUntil(view, now));
      }
      view.grantCredit(credit, until, j.urgent || throttled ? 0 : trigger - (view.unsentCur() + cost));
    }
  }
}
