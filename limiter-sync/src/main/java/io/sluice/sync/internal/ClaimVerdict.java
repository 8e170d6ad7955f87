package io.sluice.sync.internal;

import io.sluice.sync.internal.WindowDecisions.Judgement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The approximate mode's verdict on a window limit's key (see {@link WindowVerdict}): a decision is
 * admitted where the view's counts leave room and the node's claim (or, on a store that keeps no claims,
 * its share of the limit) pays for it; one the claim cannot pay asks the store for a claim, in one round
 * trip, taking its permits with it ({@link ClaimCalls}); one over the limit is denied, and remembered as
 * denied until the counts could have changed.
 *
 * <p>Concurrency: immutable; every method runs under the view's monitor (a claim call and a wait for a
 * release hold it, as a decision does).
 */
final class ClaimVerdict implements WindowVerdict {
  private final LongAdder cachedDenials;
  private final StoreCalls calls;
  private final Duration claimTimeout;
  private final boolean credited;
  private final long hotSyncIntervalNanos;
  private final long staleAfterNanos;
  private final long syncIntervalNanos;
  private final long windowNanos;
  private final WindowClaims claims;
  /** The claim calls a decision makes. */
  private final ClaimCalls claimCalls;

  ClaimVerdict(LimiterSetup l, WindowClaims claims, FlushQueue queue, Flusher flusher) {
    this.cachedDenials = l.cachedDenials;
    this.calls = l.calls;
    this.claimTimeout = l.claimTimeout;
    this.credited = l.credited;
    this.hotSyncIntervalNanos = l.hotSyncIntervalNanos;
    this.staleAfterNanos = l.staleAfterNanos;
    this.syncIntervalNanos = l.syncIntervalNanos;
    this.windowNanos = l.windowNanos;
    this.claims = claims;
    this.claimCalls = new ClaimCalls(l, claims, queue, flusher);
  }

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
    j.retryAfter = claims.retryAfter(view, j.at, cost);
    if (j.fresh && j.globalEstimate + cost > j.capacity) {
      view.denyUntil(j.now + j.retryAfter);
    } else {
      // our own pending may have been counted already: fresh counts may show room, unless the
      // key was at its limit then too
      j.urgent = !j.fresh || !claims.atLimit(view, j.globalEstimate, j.at);
      if (!j.asked && claims.asksClaims() && !j.fresh) {
        // an old view: only the store knows, ask it now (its answer refreshes the counts) and
        // decide again. (A fresh view over the limit with this node's own permits is at the
        // limit, or its last permits are on their way to the store: the sync asked for shows it.)
        return j.noWait ? WindowDecisions.WOULD_WAIT : claimStep(view, j, (long) Math.ceil(j.claimed + cost), cost);
      }
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
    if (j.claimed + cost > allowance && !j.asked && claims.asksClaims() && j.reuse == 0 && !j.took && !j.takeUnsettled
        && claims.allowances.admits(view, j.at, cost)) {
      // no claim pays, and the node's allowance on the key's window does: admitted without asking (the
      // store keeps a reserve for every node's allowance; the next regular sync counts it)
      view.admittedUnderAllowance(cost);
      j.admit = true;
      j.remaining -= cost;
      j.urgent = claims.allowances.sendsAtOnce(view, j.at);
      return WindowDecisions.DECIDED;
    }
    if (j.claimed + cost > allowance && !j.asked && claims.asksClaims()
        && !view.tooLittleFree(need, now)) {
      // below the limit as far as this node knows, and no claim that pays for the request: a
      // denial would be a guess, so the store decides, in one round trip (a key with a claim that
      // pays never gets here). Only where the store had less than a decision needed, within the
      // last sync interval, does the node deny without asking (the other nodes give claims they
      // do not use up at their regular syncs).
      return j.noWait ? WindowDecisions.WOULD_WAIT : claimStep(view, j, need, cost);
    }
    if (j.claimed + cost > allowance) {
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
    boolean cold = claims.asksClaims() && claims.sizing.expectedDemand(view, now) == 0;
    long trigger = limitReached || cold ? batch : Math.max(1, Math.min(batch, allowance / 2));
    // (a view whose claim pays needs no fresh counts: the claim is reserved for this node)
    boolean claimed = claims.asksClaims() && view.claim() >= 0;
    // (nor does one granted ahead, in a window of the range it was granted for)
    boolean lasting = claimed && (view.window() <= view.aheadThrough()
        || claims.sizing.claimHorizonNanos(view, now) > 2 * syncIntervalNanos);
    // (and a claim that lasts pays for the permits: they wait for a full batch, not half the
    // allowance, which on a small claim was a flush per request or two)
    j.urgent = (!j.fresh && !lasting) || view.unsentCur() + cost >= (lasting ? batch : trigger);
    if (j.fresh && credited) {
      grantCredit(view, j, allowance, trigger);
    }
    return WindowDecisions.DECIDED;
  }

  /**
   * What the within-the-limit verdict would go on admitting, with nothing else changing: the next
   * decisions may take that without the monitor, and the one that fills the batch asks for the sync.
   */
  private void grantCredit(KeyView view, Judgement j, long allowance, long trigger) {
    long cost = j.cost;
    long now = j.now;
    double ownAfter = j.own + cost - j.reuse;
    double claimedAfter = j.claimed + cost - j.reuse;
    long credit = Math.min((long) Math.floor(allowance - claimedAfter), (long) Math.floor(j.capacity - j.globalEstimate - ownAfter));
    if (view.localShareHeld(now)) {
      credit = Math.min(credit, view.localShareCap() - view.ownCur() - cost); // (a share held since a fault)
    }
    if (credit > 0) {
      boolean throttled = view.hot() && view.urgentSyncWithin(now, hotSyncIntervalNanos);
      view.grantCredit(credit, Math.min((view.window() + 1) * windowNanos, view.syncedAt() + staleAfterNanos + 1),
          j.urgent || throttled ? 0 : trigger - (view.unsentCur() + cost));
    }
  }

  /**
   * Under the view's monitor, for a decision its claim cannot pay: asks the store for a claim of at
   * least {@code need}, taking the decision's {@code cost} with it, or, while a flush that gives the
   * node's claim up is on its way, waits for its answer first (once per decision: a second wait
   * fails, and the failure policy decides), or stops there ({@link Judgement#noReleaseWait}).
   */
  private int claimStep(KeyView view, Judgement j, long need, long cost) {
    if (view.releaseInFlight()) {
      if (j.noReleaseWait) {
        return WindowDecisions.WOULD_WAIT;
      }
      return !j.awaited && awaitReleases(view) ? WindowDecisions.WAITED : WindowDecisions.WAIT_FAILED;
    }
    return claimCalls.ask(view, j.now, need, cost);
  }

  /**
   * Under the view's monitor: waits, at most the claim timeout, until no flush that gives up this
   * node's claim on the key's window is on its way; false if one still is. A claim asked for while
   * such a flush travels could be granted before the flush arrives, and the flush would then give it
   * up with the rest while the decision admits under it.
   */
  private boolean awaitReleases(KeyView v) {
    long start = System.nanoTime();
    long deadline = start + claimTimeout.toNanos();
    try {
      while (v.releaseInFlight()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        v.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      calls.waited(start);
    }
  }
}
