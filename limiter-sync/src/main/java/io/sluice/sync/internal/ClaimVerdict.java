package io.sluice.sync.internal;

import io.sluice.sync.internal.WindowDecisions.Judgement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The approximate mode's verdict with claims, on a store that keeps them (see {@link CountVerdict} for
 * what it decides as shares do): a decision the node's claim cannot pay is admitted under the node's
 * allowance on the key's window where that applies, else asks the store for a claim, in one round
 * trip, taking its permits with it ({@link ClaimCalls}); an old view over the limit asks too.
 *
 * <p>Concurrency: immutable; every method runs under the view's monitor (a claim call and a wait for a
 * release hold it, as a decision does).
 */
final class ClaimVerdict extends CountVerdict {
  private final StoreCalls calls;
  private final Duration claimTimeout;
  /** The claim calls a decision makes. */
  private final ClaimCalls claimCalls;

  ClaimVerdict(LimiterSetup l, WindowClaims claims, FlushQueue queue, Flusher flusher) {
    super(l, claims);
    this.calls = l.calls;
    this.claimTimeout = l.claimTimeout;
    this.claimCalls = new ClaimCalls(l, claims, queue, flusher);
  }

  @Override
  int overTheLimitAsk(KeyView view, Judgement j, long cost) {
    if (!j.asked && !j.fresh) {
      // an old view: only the store knows, ask it now (its answer refreshes the counts) and
      // decide again. (A fresh view over the limit with this node's own permits is at the
      // limit, or its last permits are on their way to the store: the sync asked for shows it.)
      return j.noWait ? WindowDecisions.WOULD_WAIT : claimStep(view, j, (long) Math.ceil(j.claimed + cost), cost);
    }
    return WindowDecisions.DECIDED;
  }

  @Override
  int unpaid(KeyView view, Judgement j, long need, long cost) {
    if (!j.asked && j.reuse == 0 && !j.took && !j.takeUnsettled && claims.allowances.admits(view, j.at, cost)) {
      // no claim pays, and the node's allowance on the key's window does: admitted without asking (the
      // store keeps a reserve for every node's allowance; the next regular sync counts it)
      view.admittedUnderAllowance(cost);
      j.admit = true;
      j.remaining -= cost;
      j.urgent = claims.allowances.sendsAtOnce(view, j.at);
      if (credited && !j.urgent) {
        grantAllowanceCredit(view, j);
      }
      return WindowDecisions.DECIDED;
    }
    if (!j.asked && !view.tooLittleFree(need, j.now)) {
      // below the limit as far as this node knows, and no claim that pays for the request: a
      // denial would be a guess, so the store decides, in one round trip (a key with a claim that
      // pays never gets here). Only where the store had less than a decision needed, within the
      // last sync interval, does the node deny without asking (the other nodes give claims they
      // do not use up at their regular syncs).
      return j.noWait ? WindowDecisions.WOULD_WAIT : claimStep(view, j, need, cost);
    }
    return DENIED;
  }

  /**
   * Under the view's monitor, after an admission under the node's allowance (no released permit reused):
   * what is left of it, within what the view shows free, may pay the key's next decisions without the
   * monitor.
   */
  private void grantAllowanceCredit(KeyView view, Judgement j) {
    long credit = Math.min(claims.allowances.creditLeft(view, j.at), freeForCredit(view, j));
    if (credit > 0) {
      view.grantAllowanceCredit(credit, claims.allowances.creditUntil(view.window(), j.at));
    }
  }

  @Override
  boolean lasting(KeyView view, long now) {
    return claims.lasts(view, now);
  }

  @Override
  boolean cold(KeyView view, long now) {
    return claims.sizing.expectedDemand(view, now) == 0;
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
