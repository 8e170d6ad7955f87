package io.sluice.sync.internal;

import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.ExactStore;
import java.util.concurrent.atomic.LongAdder;

/**
 * The decisions of a window limit (fixed window, sliding window counter) in the approximate and
 * reservation modes, and of the exact mode while its store fails, for one {@link SyncedLimiter}: each
 * under its key's view's monitor, a look at the counts, a verdict (asking the store for a claim or a
 * lease, or waiting for a flush that gives one up, where the verdict needs it), and the record of what
 * it admitted for the flusher. What every mode decides alike (a local share held since a fault, a take
 * the store counted, released permits used again, the failure policy) is decided here; the rest by
 * the mode's {@link WindowVerdict}, chosen when the limiter is built: {@link ClaimVerdict} (claims),
 * {@link ShareVerdict} (shares, on a store that keeps no claims or for a regional quota) or {@link
 * LeaseVerdict} (reservation grants).
 *
 * <p>Concurrency: a decision runs on its caller's thread and reads and writes a view only under the
 * view's monitor, holding it through at most one store call (a claim or lease call) and one wait for a
 * release; never the sync lock. The judgement it works in is the thread's own.
 */
final class WindowDecisions {
  private final StoreCalls calls;
  private final ExactStore exact;
  private final LongAdder fallbackDecisions;
  private final long hotSyncIntervalNanos;
  private final StoreFailurePolicy onStoreFailure;
  private final KeyView.OrphanSink orphanSink;
  private final LongAdder pendingPermits;
  private final WindowBudget budget;
  private final boolean sliding;
  private final long staleAfterNanos;
  private final long syncIntervalNanos;
  private final long windowNanos;
  private final WindowClaims claims;
  private final FlushQueue queue;
  private final Flusher flusher;
  private final WindowFallback fallback;
  /** The mode's verdict, chosen once: claims, shares or reservation grants. */
  private final WindowVerdict onTheView;

  WindowDecisions(LimiterSetup l, WindowClaims claims, FlushQueue queue, Flusher flusher) {
    this.calls = l.calls;
    this.exact = l.exact;
    this.fallbackDecisions = l.fallbackDecisions;
    this.hotSyncIntervalNanos = l.hotSyncIntervalNanos;
    this.onStoreFailure = l.onStoreFailure;
    this.orphanSink = queue.orphanSink;
    this.pendingPermits = queue.pendingPermits;
    this.budget = l.budget;
    this.sliding = l.sliding;
    this.staleAfterNanos = l.staleAfterNanos;
    this.syncIntervalNanos = l.syncIntervalNanos;
    this.windowNanos = l.windowNanos;
    this.claims = claims;
    this.queue = queue;
    this.flusher = flusher;
    this.fallback = new WindowFallback(l, claims);
    this.onTheView = l.leases != null ? new LeaseVerdict(l, claims)
        : claims.asksClaims() ? new ClaimVerdict(l, claims, queue, flusher) : new ShareVerdict(l, claims);
  }

  /**
   * The thread's judgement, reused by each of its window decisions that take a view's monitor, so that
   * a denial (or a reservation-mode decision) allocates nothing, as the credit path does not. One in
   * use (a decision made inside another decision's store call) is not shared: the inner one gets its own.
   */
  private static final ThreadLocal<Judgement> JUDGEMENT = ThreadLocal.withInitial(Judgement::new);

  /** The thread's judgement for a new decision: its own, or, while that one is in use, a new one. */
  static Judgement judgement(long cost, long now, boolean fallback) {
    Judgement j = JUDGEMENT.get();
    if (j.inUse) {
      j = new Judgement(); // a decision made inside another's store call (a store that calls back)
    }
    return j.start(cost, now, fallback);
  }

  /**
   * One window decision as it goes: what the view shows at its moment ({@link #look}), the store
   * calls it made (at most one claim or lease call, and one wait for a flush that gives a claim up),
   * and the verdict. One per thread ({@link #JUDGEMENT}), started anew by each decision.
   */
  static final class Judgement {
    long cost;
    long now;
    /** The decision's time in the view's window: a thread behind counts in the newer window. */
    long at;
    double prevWeight;
    double globalEstimate;
    double own;
    /**
     * Of {@link #own}, what this node's claim on the view's window pays for: all of it but the
     * uncounted permits of the window gone by that its trimmed claim there holds (ViewClaim#prevReservedAt).
     */
    double claimed;
    long capacity;
    boolean fresh;
    /** A store call for a claim or lease was made (at most one per decision). */
    boolean asked;
    /** A wait for a flush that gives a claim up was made (at most one per decision). */
    boolean awaited;
    /** The claim call counted this decision's permit (a take). */
    boolean took;
    /** The claim call with this decision's take failed: a flush settles it. */
    boolean takeUnsettled;
    /** The store failed this decision (or its breaker is open): the failure policy decides. */
    boolean fallback;
    boolean admit;
    boolean urgent;
    boolean fromLease;
    /** Reservation mode: the view goes to the flusher, which measures its rate there (and sends nothing). */
    boolean measure;
    /** Dropped from the table as idle after this thread found it: decided on its successor. */
    boolean retired;
    long remaining;
    long retryAfter;
    /**
     * Of the cost, permits this node gave back after the store had counted them (released), used again
     * first: only the rest needs room in the limit and the claim, or goes to the store with a take.
     */
    long reuse;
    /** The window an admission counted in (for release). */
    long countedWindow;
    /** A decision of this thread is using it. */
    boolean inUse;
    /** The decision must not wait for the store (asynchronous): it stops where it would ({@link #wouldWait}). */
    boolean noWait;
    /**
     * The decision must not wait for a flush that gives the node's claim up to be answered (a tool that
     * runs the syncs itself, on a simulated clock): it stops where it would ({@link #wouldWait}).
     */
    boolean noReleaseWait;
    /** A decision told not to wait stopped before a store call or a wait, having changed nothing it decides on. */
    boolean wouldWait;

    /** Starts a decision: everything from the last one forgotten. */
    Judgement start(long cost, long now, boolean fallback) {
      this.cost = cost;
      this.now = now;
      this.fallback = fallback;
      at = 0;
      prevWeight = 0;
      globalEstimate = 0;
      own = 0;
      capacity = 0;
      fresh = false;
      asked = false;
      awaited = false;
      took = false;
      takeUnsettled = false;
      admit = false;
      urgent = false;
      fromLease = false;
      measure = false;
      retired = false;
      noWait = false;
      noReleaseWait = false;
      wouldWait = false;
      remaining = 0;
      retryAfter = 0;
      reuse = 0;
      countedWindow = Long.MIN_VALUE;
      inUse = true;
      return this;
    }

    /** Takes in what a {@link ClaimVerdict}'s claim step did. */
    void stepped(int step) {
      asked |= step == ASKED || step == ASK_FAILED || step == TAKEN || step == TAKE_FAILED;
      awaited |= step == WAITED || step == WAIT_FAILED;
      took |= step == TAKEN;
      takeUnsettled |= step == TAKE_FAILED;
      fallback |= step == ASK_FAILED || step == WAIT_FAILED || step == TAKE_FAILED;
    }
  }

  /** Under the view's monitor: looks, decides (asking the store when a verdict needs it), then records. */
  void judge(KeyView view, Judgement j) {
    if (view.retired()) {
      j.retired = true;
      return;
    }
    queue.settle(view);
    long w = Math.floorDiv(j.now, windowNanos);
    if (w > view.window()) {
      claims.windowDone(view);
    }
    view.roll(w, orphanSink, sliding);
    onTheView.rolled(view, j.now);
    while (true) {
      if (view.retired() && !j.took && !j.takeUnsettled) {
        j.retired = true; // dropped while this decision waited for a release, before it took anything
        return;
      }
      queue.settle(view); // (another thread may have been granted credit while this one waited)
      look(view, j);
      int step = verdict(view, j);
      if (step == DECIDED) {
        break;
      }
      if (step == WOULD_WAIT) {
        j.wouldWait = true; // (before any store call of this decision: nothing taken, nothing to record)
        return;
      }
      j.stepped(step); // (AGAIN: a lease call, already taken in)
    }
    record(view, j);
  }

  /** The view's counts at the decision's moment, and a verdict not yet made. */
  private void look(KeyView view, Judgement j) {
    j.urgent = false;
    j.fromLease = false;
    j.measure = false;
    j.retryAfter = 0;
    j.at = Math.max(j.now, view.window() * windowNanos);
    j.prevWeight = claims.sizing.prevWeight(view.window(), j.at);
    j.globalEstimate = ClaimSizing.weighted(view.globalPrev(), view.globalCur(), j.prevWeight);
    j.own = ClaimSizing.weighted(view.pendingPrev(), view.pendingCur(), j.prevWeight);
    j.claimed = j.own - view.prevReservedAt(j.prevWeight);
    j.capacity = claims.decidingCapacity(view, j.at);
    j.remaining = (long) Math.floor(j.capacity - j.globalEstimate - j.own);
    if (!j.took && !j.takeUnsettled) {
      // (once this decision's take went to the store, what it reuses is fixed: the take carried the rest)
      j.reuse = Math.min(view.releasedCur(), j.cost);
    }
    // a sliding window's view from before its window began misses what the other nodes added to
    // the window that is now the previous one, and that still weighs: it is not fresh either
    j.fresh = view.syncedAt() != Long.MIN_VALUE && (j.now - view.syncedAt() <= staleAfterNanos || fullByCounts(view, j))
        && (!sliding || view.syncedAt() >= view.window() * windowNanos);
  }

  /**
   * Under the view's monitor: whether the store's counts alone, as the view last heard them in its
   * window, fill a fixed window's limit. They stay so until the window ends, since batched nodes' counts
   * only grow (a release pays for the releasing node's next admissions, not for the store's count; only
   * an exact-mode node's give-back, on a limit whose nodes mix modes, takes one back): the view of such a
   * key does not go stale, and its denials need no store call. (A node asked again each
   * time its view was two sync intervals old: a limit of 5 per 15 minutes at its limit made 320 store
   * calls over a minute of attempts on two nodes, and the accuracy kit's small limits a tenth of their
   * calls, with no false denial saved. A regional quota's share may grow within its window: not those.)
   */
  private boolean fullByCounts(KeyView view, Judgement j) {
    return !sliding && budget.fixedWithinWindow() && view.syncedAt() >= view.window() * windowNanos && view.globalCur() >= j.capacity;
  }

  /**
   * The verdict, in order of what settles it: {@link #DECIDED}, or a store call this decision makes
   * before deciding again ({@link ClaimVerdict}'s claim step's answer, or {@link #AGAIN} after a lease call).
   */
  private int verdict(KeyView view, Judgement j) {
    long cost = j.cost;
    if (!j.took && !j.takeUnsettled && !j.fallback && view.localShareHeld(j.now)
        && view.ownCur() + cost > view.localShareCap()) {
      // this node decided on its local share in this window while its breaker was open, and the
      // other nodes cut off with it may still be doing so: their admissions are not in the store
      // yet, so it keeps within its share (to the window's end, or until the others have had time to
      // come back too) rather than spend theirs (see WindowFallback#admits)
      j.admit = false;
      j.remaining = 0;
      j.retryAfter = Math.min(view.localShareUntil(), (view.window() + 1) * windowNanos) - j.at;
    } else if (j.took) {
      // the store counted this permit with the claim it granted: admitted, nothing to send for it
      j.admit = true;
    } else if (!j.takeUnsettled && view.releasedCur() >= cost) {
      // permits this node gave back after the store had counted them: its own, used again (counted
      // as admitted below without being sent)
      j.admit = true;
      j.remaining = Math.max(0, j.remaining - cost);
    } else if (j.fallback) {
      fallbackDecisions.increment();
      j.admit = fallback.admits(view, j.prevWeight, cost, calls.open(), j.now)
          && (onStoreFailure == StoreFailurePolicy.FAIL_OPEN
          // a local share never passes what the node last saw of the limit: a key seen at its limit
          // stays denied however little this node admitted itself
          || j.globalEstimate + j.own + cost <= j.capacity);
      j.retryAfter = j.admit ? 0 : syncIntervalNanos;
      if (j.admit) {
        j.remaining -= cost;
      }
    } else {
      return onTheView.verdict(view, j);
    }
    return DECIDED;
  }

  /** Under the view's monitor, after the verdict: the key's demand, the admission's count, and its sync. */
  private void record(KeyView view, Judgement j) {
    long cost = j.cost;
    long now = j.now;
    // demand, allowed or not: the rate that decides how much to hold between syncs
    view.demandNoted(cost, now);
    if (!j.admit && budget.countsDenials()) {
      view.deniedNotSent(cost, false); // demand the coordinator weighs, sent with the next flush
    }
    if (j.admit) {
      countAdmitted(view, j, cost);
    }
    if (j.takeUnsettled) {
      view.unsettledTakeAdmitted(j.admit);
      j.urgent = true;
    }
    if (view.prevClaimHeld() && !view.syncWanted()) {
      // a claim (or a sliding window's part of the fading) held on the window gone by still weighs
      // for every node's claims in this one until a flush gives it up: at once, not at the next
      // regular sync
      j.urgent = true;
    }
    boolean wantsSync = j.urgent;
    if (j.urgent) {
      view.wantSync();
    }
    if (j.urgent && view.hot()) {
      // a hot key wakes the flusher at most once per hot sync interval; it still goes with the
      // next regular sync, and its larger batches cover the gap
      if (view.urgentSyncWithin(now, hotSyncIntervalNanos)) {
        j.urgent = false;
      } else {
        view.urgentSyncAsked(now);
      }
    }
    if ((j.admit && !j.fromLease && !j.took) || wantsSync || (!j.admit && budget.countsDenials()) || j.measure) {
      queue.enqueue(view);
    }
  }
  /** Under the view's monitor: an admitted decision's permits, where the view keeps them until counted. */
  private void countAdmitted(KeyView view, Judgement j, long cost) {
    // (in exact mode this path admits only for the failure policy: the store took nothing to give back)
    j.countedWindow = exact == null ? view.window() : Long.MIN_VALUE;
    if (j.took) {
      // (the take counted the cost less what released permits paid)
      view.admittedByTake(cost, j.reuse, flusher.numberedDone(view.key()), flusher.numberedSent());
    } else if (j.takeUnsettled) {
      // counted by the flush that settles the take (unless the take counted it), not as unsent
      // (what released permits paid is this node's already: not pending)
      view.admittedUnderUnsettledTake(cost, j.reuse);
      pendingPermits.add(cost - j.reuse);
    } else if (!j.fromLease) {
      queue.countAdmitted(view, cost);
    }
  }


  /**
   * What {@link ClaimVerdict}'s claim step did: asked the store for a claim (and the store counted the decision's
   * take with it, or not), or waited for a release; each may fail.
   */
  private static final int ASKED = ClaimCalls.ASKED;

  private static final int ASK_FAILED = ClaimCalls.ASK_FAILED;

  static final int WAITED = 2;

  static final int WAIT_FAILED = 3;

  private static final int TAKEN = ClaimCalls.TAKEN;

  private static final int TAKE_FAILED = ClaimCalls.TAKE_FAILED;

  /** A verdict made: no store call to make first. */
  static final int DECIDED = -1;

  /** A lease call made: decide again. */
  static final int AGAIN = -2;

  /** A decision told not to wait would make a store call or wait for a release: it stops. */
  static final int WOULD_WAIT = -3;


}
