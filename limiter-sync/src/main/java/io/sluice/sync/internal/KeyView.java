package io.sluice.sync.internal;

import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.Delta;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One node's view of one key of a window limit: the global counts of the current and previous
 * windows as of the last sync, and what this node admitted that the store has not acknowledged yet
 * (pending), of which a part is not even sent (unsent). Guarded by its own monitor: every critical
 * section is a few arithmetic steps, except a decision that asks the store for a claim, which holds
 * it through that one call (the key's other decisions would wait for the answer anyway).
 *
 * <p>Besides the monitor, a view holds a <em>credit</em>: permits that decisions may take with one
 * compare-and-set and no monitor, until a ticker time. A decision under the monitor grants it (as
 * many permits as the monitor would have admitted in a row without asking for a sync), and every
 * critical section first takes it back ({@link #revokeCredit}) and counts what was used, so the
 * counts under the monitor are exact whenever they are read.
 */
final class KeyView {
  private static final VarHandle CREDIT;

  static {
    try {
      CREDIT = MethodHandles.lookup().findVarHandle(KeyView.class, "credit", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Permits decisions may take without the monitor; only {@link #takeCredit} lowers it. */
  private volatile long credit;
  /** Ticker time from which the credit must not be used (the window's end, or the view going stale). */
  private volatile long creditUntil = Long.MIN_VALUE;
  /** The credit as granted (guarded by the monitor): granted less what is left is what was used. */
  private long creditGranted;
  /** A decision that leaves the credit at or below this has filled a batch: it asks for a sync. */
  private volatile long syncAtOrBelow;
  private final String key;
  /**
   * A decision holds the view's monitor through a store call (a claim or a lease): read without the
   * monitor by a decision that must not wait (see {@link SyncedLimiter#acquireAsync}), which hands
   * itself over rather than enter the monitor and wait for that call.
   */
  private volatile boolean storeCallUnderway;
  private long window = Long.MIN_VALUE;
  private long globalCur;
  private long globalPrev;
  private long pendingCur;
  private long pendingPrev;
  private long unsentCur;
  private long unsentPrev;
  /** This node's own admissions in the current and previous window, acknowledged or not. */
  private long ownCur;
  private long ownPrev;
  /**
   * Of those, the permits takes counted ({@link Delta#taking}) since a numbered flush sent after them
   * was answered, and the number of the last numbered flush sent when the last of them was answered
   * (see StoreLossRefill#refill): should the store turn out to have lost its data, these may be in the
   * new store already, so they are not sent again.
   */
  private long takenCur;
  private long takenPrev;
  private long takenMark;
  /**
   * Permits of {@link #window} given back (SyncedLimiter.release) after the store had counted them:
   * this node's next admissions there use them instead of counting new ones.
   */
  private long releasedCur;
  /**
   * The node's allowance on {@link #window} (see Allowances): used or given up (permits), the permits
   * admitted under it and not sent yet, and how much of it deltas sent have spent (told the store of).
   */
  private long allowedCur;
  private long allowedUnsent;
  private long allowanceSpent;
  /** The sync in which the view last sent its acknowledged permits again after a store lost its data. */
  private long refilledRound = -1;
  /**
   * LOCAL_SHARE, fixed windows: the local share this node last decided on with the breaker open, held
   * after the store is back (null: none; see {@link #holdLocalShare}). Rare, so a view holds none of its fields.
   */
  private LocalShareCap shareCap;
  /** Ticker time of the last acknowledgement that refreshed the global counts. */
  private long syncedAt = Long.MIN_VALUE;
  /** Denial cache: the global count alone is over the limit until then. */
  private long deniedUntil = Long.MIN_VALUE;
  /** System.nanoTime when a decision last sent a claim call for this key (see WindowClaims#mergeOlderAnswer). */
  private long claimCallSentAt = Long.MIN_VALUE;
  /** Dropped from the key table (idle): a decision that still holds it looks the key up again. */
  private boolean retired;
  /** In the dirty queue, waiting for a flush. */
  private boolean queued;
  /** A decision asked for a sync of this key (the view is queued): the next sync sends it, whatever it holds. */
  private boolean syncWanted;
  /** Reservation mode's grants (null in the other modes, and before the key's first grant is asked for). */
  private Grants grants;
  /** Demand (permits asked for) since {@link #rateSince}, its running rate per second, hotness. */
  private long hits;
  /** Ticker time the key was last asked for (about: credit decisions are seen when settled); a claim is given up once it is idle. */
  private long demandAt = Long.MIN_VALUE;
  /**
   * This node's claim on {@link #window} as the store last answered: how many permits it may admit
   * beyond what the store has counted from it; -1 while it has none there (see flush.lua).
   */
  private long claim = -1;
  /** The store's last answer granted less than an eighth of what was asked: little is free. */
  private boolean noneFree;
  /**
   * Ticker time until which a decision the claim cannot pay is denied without asking the store: a
   * decision asked for what it needed and the store had less.
   */
  private long nothingFreeUntil = Long.MIN_VALUE;
  /**
   * The need the store found too large then (less than that was free): until {@code nothingFreeUntil}
   * only decisions that need at least that much are denied without asking; a smaller one may fit.
   */
  private long freeBelow;
  /** Decisions in a row that asked for a claim and found less free than they needed (this window). */
  private int fruitlessAsks;
  /**
   * Ticker time a decision last asked the store for a claim (Long.MIN_VALUE: never), and what it
   * asked for beyond the request: a key asking again soon asks for twice as much.
   */
  private long lastClaimAsked = Long.MIN_VALUE;
  private long claimAhead;
  /**
   * Flushes on their way that give this node's claim on the window up (want 0) or trim it
   * (Delta#keeping): until they are
   * answered, a decision does not ask for a claim (one granted before such a flush arrives would be
   * given up with it); it waits for the answer (see SyncedLimiter.awaitReleases).
   */
  private int releasesInFlight;
  /**
   * Deltas of this view sent to the store and neither answered nor back among the unsent: a flush
   * trims the claim (Delta#keeping) only when none is, since the answer of another could raise the
   * claim it trims.
   */
  private int deltasOut;
  /**
   * Sliding window: when the claim was granted (ticker time of the flush that asked) and the nodes its
   * part of what the previous window frees is split by, as the store answered (0: it holds no part);
   * from then the node also holds previous count / window / claimNodes per unit of time.
   */
  private long claimAt;
  private int claimNodes;
  /**
   * Fixed windows: the claim the store granted this node on each window after the one it was asked in,
   * up to {@link #aheadThrough} (see {@link Delta#claimingAhead}): a window the view rolls into within
   * that range starts with it as its claim, and no store call. 0 and Long.MIN_VALUE: none.
   */
  private long aheadClaim;
  private long aheadThrough = Long.MIN_VALUE;
  /** A claim on the window before {@link #window} is still held in the store: the next flush gives it up. */
  private boolean prevClaimHeld;
  /**
   * A take (a claim call that also counted the decision's permit, see {@link Delta#taking}) whose
   * answer never came, or null: the key's next flush settles it, and until that is answered decisions
   * ask for claims without takes. Rare (a store call failed), so a view holds none of its fields.
   */
  private UnsettledTake unsettled;
  /**
   * The count of the window before {@link #window} as last seen here (the store's count and this
   * node's pending permits when the view rolled), or -1: the view did not see that window.
   */
  private long lastWindowTotal = -1;
  private double rate;
  private long rateSince = Long.MIN_VALUE;
  /**
   * The key's last decision before this view was made (ticker time), as the table remembered it from
   * the key's view it dropped ({@link ViewTable}), or Long.MIN_VALUE: none remembered.
   */
  private long seenBefore = Long.MIN_VALUE;
  /**
   * The cost of the key's decisions made under the monitor, a running mean (0 before the first):
   * {@link #rate} counts permits, and a permit rate over a mean cost is a rate of requests.
   */
  private double meanCost;
  private boolean hot;
  /** Ticker time of the last urgent sync asked for this key (hot keys are throttled). */
  private long lastUrgentSync = Long.MIN_VALUE;
  /** Regional quota's shares and denied demand (null for other limits, and before the first). */
  private Regional regional;

  KeyView(String key) {
    this.key = key;
  }

  // ---- what the rest of the limiter reads of the view (under the monitor, but storeCallUnderway)

  String key() {
    return key;
  }

  /** The window the view is on (Long.MIN_VALUE before its first decision). */
  long window() {
    return window;
  }

  /** The store's count of {@link #window} and of the window before, as of the last answer. */
  long globalCur() {
    return globalCur;
  }

  long globalPrev() {
    return globalPrev;
  }

  /** This node's permits of {@link #window} (and the window before) the store has not acknowledged. */
  long pendingCur() {
    return pendingCur;
  }

  long pendingPrev() {
    return pendingPrev;
  }

  /** Of the pending permits, those not sent yet. */
  long unsentCur() {
    return unsentCur;
  }

  long unsentPrev() {
    return unsentPrev;
  }

  /** This node's own admissions in {@link #window}, acknowledged or not. */
  long ownCur() {
    return ownCur;
  }

  /** Permits of {@link #window} given back after the store counted them, which admissions use first. */
  long releasedCur() {
    return releasedCur;
  }

  /** Ticker time of the last answer that refreshed the counts (Long.MIN_VALUE: none). */
  long syncedAt() {
    return syncedAt;
  }

  /** Until when the count alone denies (ticker time; the denial cache). */
  long deniedUntil() {
    return deniedUntil;
  }

  /** This node's claim on {@link #window}, as the store last answered (-1: none). */
  long claim() {
    return claim;
  }

  /** The nodes a sliding window's part of the fading is split by (0: the claim holds no part). */
  int claimNodes() {
    return claimNodes;
  }

  /** The last window a claim granted ahead covers (Long.MIN_VALUE: none). */
  long aheadThrough() {
    return aheadThrough;
  }

  /** A claim on the window before {@link #window} is still held in the store. */
  boolean prevClaimHeld() {
    return prevClaimHeld;
  }

  /** Deltas of the view sent and not answered. */
  int deltasOut() {
    return deltasOut;
  }

  boolean retired() {
    return retired;
  }

  /** In the flusher's queue. */
  boolean queued() {
    return queued;
  }

  boolean syncWanted() {
    return syncWanted;
  }

  /** A decision holds the monitor through a store call (read without the monitor). */
  boolean storeCallUnderway() {
    return storeCallUnderway;
  }

  /** Demand: permits asked for since {@link #rateSince()} (not yet in {@link #rate()}). */
  long hits() {
    return hits;
  }

  /** When the rate's current measure started (ticker time; Long.MIN_VALUE before the key's first decision). */
  long rateSince() {
    return rateSince;
  }

  /** The key's demand on this node, permits per second (0 before a sync measured it). */
  double rate() {
    return rate;
  }

  /** Ticker time the key was last asked for (Long.MIN_VALUE: never). */
  long demandAt() {
    return demandAt;
  }

  /** The running mean cost of the key's decisions (0 before the first). */
  double meanCost() {
    return meanCost;
  }

  // ---- counts

  /**
   * Under the monitor: {@code permits} admitted in {@link #window}, to be sent, but for those that
   * permits given back after the store counted them pay for; returns the permits that became pending.
   */
  long countAdmitted(long permits) {
    long reused = Math.min(permits, releasedCur);
    releasedCur -= reused;
    pendingCur += permits - reused;
    unsentCur += permits - reused;
    ownCur += permits;
    return permits - reused;
  }

  /** Under the monitor: a take counted {@code cost} less the released permits {@code reuse} paid (see {@link #taken}). */
  void admittedByTake(long cost, long reuse, long numberedDone, long numberedSent) {
    ownCur += cost;
    releasedCur -= reuse;
    taken(cost - reuse, numberedDone, numberedSent);
  }

  /**
   * Under the monitor: admitted by the failure policy after a take's answer never came: counted by
   * the flush that settles the take (pending, not unsent), but what released permits paid.
   */
  void admittedUnderUnsettledTake(long cost, long reuse) {
    releasedCur -= reuse;
    pendingCur += cost - reuse;
    ownCur += cost;
  }

  /** Under the monitor: {@code permits} admitted that the store counted when it decided or granted them. */
  void ownAdmitted(long permits) {
    ownCur += permits;
  }

  /** Under the monitor: {@code permits} of this node's own admissions given back (at most {@link #ownCur}). */
  void ownReleased(long permits) {
    ownCur -= permits;
  }

  /**
   * Under the monitor: {@code permits} of {@link #window} given back ({@link SyncedLimiter#release});
   * those not sent yet are taken off the pending ones, the rest are kept for this node's next
   * admissions. Returns the permits taken off the pending ones.
   */
  long released(long permits) {
    ownCur -= permits;
    long unsent = Math.min(permits, unsentCur);
    unsentCur -= unsent;
    pendingCur -= unsent;
    releasedCur += permits - unsent;
    return unsent;
  }

  /** Under the monitor: the store's counts of {@link #window} and the window before, answered at {@code now}. */
  void countsAnswered(long cur, long prev, long now) {
    globalCur = cur;
    globalPrev = prev;
    syncedAt = now;
  }

  /** Under the monitor: an older answer's counts, kept only where larger (see WindowClaims#mergeOlderAnswer). */
  void countsAtLeast(long cur, long prev) {
    globalCur = Math.max(globalCur, cur);
    globalPrev = Math.max(globalPrev, prev);
  }

  /** Under the monitor: a delta of the window gone by was sent, giving up the claim held there. */
  void prevSent() {
    deltasOut++;
    unsentPrev = 0;
    deniedSent(true);
    prevClaimHeld = false;
  }

  /** Under the monitor: a delta that only settles a take was sent. */
  void settlingSent() {
    deltasOut++;
  }

  /** Under the monitor: a delta of {@link #window} was sent, spending {@code spent} of the allowance. */
  void curSent(long spent) {
    deltasOut++;
    unsentCur = 0;
    allowanceSent(spent);
    deniedSent(false);
  }

  /**
   * Under the monitor: delta {@code d} came back unanswered. Its permits of {@link #window} or the
   * window before go back among the unsent; false for an older window's, which the view no longer holds.
   */
  boolean unanswered(Delta d) {
    deltasOut--;
    if (settledBy(d)) {
      unsettled.inFlight = false; // the next drain sends it again
      syncWanted = true;
    }
    if (d.window() == window) {
      unsentCur += d.amount();
      allowanceBack(d.allowed(), d.spent());
      deniedNotSent(d.denied(), false);
      return true;
    }
    if (d.window() == window - 1) {
      unsentPrev += d.amount();
      deniedNotSent(d.denied(), true);
      return true;
    }
    return false;
  }

  /**
   * Under the monitor: delta {@code d} was answered. A take it settles is settled; returns the permits
   * the failure policy admitted that the settling counted (no longer pending).
   */
  long answered(Delta d) {
    deltasOut--;
    if (!settledBy(d)) {
      return 0;
    }
    long settled = Math.max(0, d.settle());
    if (d.window() == window) {
      pendingCur -= settled;
    } else if (d.window() == window - 1) {
      pendingPrev -= settled;
    }
    unsettled = null;
    return settled;
  }

  /** Under the monitor: {@code permits} of {@link #window} were counted by an answer. */
  void curCounted(long permits) {
    pendingCur -= permits;
  }

  /** Under the monitor: the window is over and its count is all an answer said: kept where larger. */
  void curCountAtLeast(long count) {
    globalCur = Math.max(globalCur, count);
  }

  /**
   * Under the monitor: {@code permits} of the window gone by were counted, which now counts
   * {@code count}; the claim held there is given up, so what it held may be free now.
   */
  void prevCounted(long permits, long count) {
    globalPrev = count;
    pendingPrev -= permits;
    nothingFreeUntil = Long.MIN_VALUE;
  }

  /**
   * Under the monitor, refilling a store that lost its data: this node's permits the old store had
   * acknowledged go back among the unsent (but takes answered after the last numbered flush that
   * reached it was sent, {@code doneBeforeLoss}: those may be in the new store already), and its
   * claims are gone. Returns the permits it sends again.
   */
  long sendAgainAfterLoss(long doneBeforeLoss) {
    long cur = Math.max(0, ownCur - pendingCur - takesUnproven(false, doneBeforeLoss));
    long prev = Math.max(0, ownPrev - pendingPrev - takesUnproven(true, doneBeforeLoss));
    takesAccountedFor();
    unsentCur += cur;
    pendingCur += cur;
    unsentPrev += prev;
    pendingPrev += prev;
    claim = -1;
    claimNodes = 0;
    aheadClaim = 0; // (and those it held ahead)
    aheadThrough = Long.MIN_VALUE;
    prevClaimHeld = false;
    noneFree = false;
    nothingFreeUntil = Long.MIN_VALUE;
    releasedCur = 0; // (given back after the old store counted them: the new one never did)
    if (cur + prev > 0) {
      syncWanted = true;
    }
    return cur + prev;
  }

  // ---- the claim

  /** Under the monitor: the store answered a claim of {@code claim} (and, on a sliding window, a part split by {@code split}). */
  void claimAnswered(long claim, int split) {
    this.claim = claim;
    this.claimNodes = split;
  }

  /** Under the monitor: an older answer's claim, kept only where smaller (see WindowClaims#mergeOlderAnswer). */
  void claimAtMost(long claim, int split) {
    this.claim = Math.min(this.claim, claim);
    this.claimNodes = Math.min(this.claimNodes, split);
  }

  /** Under the monitor: no claim on {@link #window} (a window done, with nothing left to say). */
  void claimGone() {
    claim = -1;
    claimNodes = 0;
  }

  /** Under the monitor: a flush trims the claim: this node admits at most {@code keep} more under it until the answer. */
  void claimKept(long keep) {
    claim = pendingCur + keep;
  }

  /** Under the monitor: a flush gives the claim up: nothing more is admitted under it, nor under a part of the fading. */
  void claimGivenUp() {
    claim = pendingCur;
    claimNodes = 0;
  }

  /** Under the monitor: the claim on the window gone by was given up (by a claim call). */
  void prevClaimGivenUp() {
    prevClaimHeld = false;
  }

  // ---- the view's place in the flusher's queue and the table

  /** Under the monitor: marks the view queued; false where it was already. */
  boolean enqueue() {
    if (queued) {
      return false;
    }
    queued = true;
    return true;
  }

  /** Under the monitor: the view left the queue with nothing to send. */
  void dequeue() {
    queued = false;
  }

  /** Under the monitor: the view left the queue for a flush, which does what a sync was asked for. */
  void dequeueForFlush() {
    queued = false;
    syncWanted = false;
  }

  /** Under the monitor: the next sync sends the view, whatever it holds. */
  void wantSync() {
    syncWanted = true;
  }

  /** Dropped from the table as idle. */
  void retire() {
    retired = true;
  }

  /** A decision starts (true) or ends a store call holding the monitor. */
  void storeCallUnderway(boolean underway) {
    storeCallUnderway = underway;
  }

  /** Under the monitor: the count alone denies until {@code until} (ticker time). */
  void denyUntil(long until) {
    deniedUntil = until;
  }

  /** Under the monitor: the cached denial is out of date (a regional share grew). */
  void denialOutOfDate() {
    deniedUntil = Long.MIN_VALUE;
  }

  // ---- demand

  /** Under the monitor: a decision of {@code cost} at {@code now}, admitted or not. */
  void demandNoted(long cost, long now) {
    // (measured from the key's first request, which starts the clock: one request alone is no rate)
    if (rateSince == Long.MIN_VALUE) {
      rateSince = now;
    } else {
      hits += cost;
    }
    meanCost = meanCost == 0 ? cost : meanCost * 0.75 + cost * 0.25;
    demandAt = now;
  }

  /** Under the monitor: decisions took {@code permits} of the credit, settled at {@code now}. */
  void creditUsed(long permits, long now) {
    hits += permits;
    demandAt = now;
  }

  /**
   * Under the monitor, as the view is synced at {@code now}: the key's rate since the last measure, in
   * permits per second, folded into {@link #rate}; -1 where too little time has passed to tell
   * ({@code minNanos}), or the clock only starts now.
   */
  double measureRate(long now, long minNanos) {
    if (rateSince == Long.MIN_VALUE) {
      rateSince = now;
      return -1;
    }
    long elapsed = now - rateSince;
    if (elapsed < minNanos) {
      return -1;
    }
    double measured = hits * 1e9 / elapsed;
    hits = 0;
    rateSince = now;
    rate = rate == 0 ? measured : rate * 0.5 + measured * 0.5;
    return measured;
  }

  /** This node's own admissions in the window before {@link #window}, acknowledged or not. */
  long ownPrev() {
    return ownPrev;
  }

  /** The count of the window before {@link #window} as last seen here, or -1: the view did not see it. */
  long lastWindowTotal() {
    return lastWindowTotal;
  }

  /** The key's last decision before this view was made, as the table remembered it (Long.MIN_VALUE: none). */
  long seenBefore() {
    return seenBefore;
  }

  /** The table remembered the key's last decision before this view was made: at {@code at} (ticker time). */
  void seenBefore(long at) {
    seenBefore = at;
  }

  /** Whether the key is hot (see KeyHeat). */
  boolean hot() {
    return hot;
  }

  void hot(boolean hot) {
    this.hot = hot;
  }

  /** A flush that gives this node's claim up or trims it is on its way (see {@link #releasesInFlight}). */
  void releaseSent() {
    releasesInFlight++;
  }

  /** Such a flush was answered, or came back to be sent again. */
  void releaseAnswered() {
    releasesInFlight--;
  }

  /** Whether such a flush is on its way: decisions then wait for its answer before asking for a claim. */
  boolean releaseInFlight() {
    return releasesInFlight > 0;
  }

  /** The store's last answer granted less than an eighth of what was asked (see {@link #noneFree}). */
  boolean noneFree() {
    return noneFree;
  }

  void noneFree(boolean none) {
    noneFree = none;
  }

  /** When the claim was granted, ticker time: a sliding window's part of the fading grows from then. */
  long claimAt() {
    return claimAt;
  }

  void claimAt(long at) {
    claimAt = at;
  }

  /** Fixed windows: the claim granted on each window after the one asked in, up to {@link #aheadThrough}. */
  long aheadClaim() {
    return aheadClaim;
  }

  /** Under the monitor: the store granted {@code claim} on each window after {@link #window} through {@code through}. */
  void claimedAhead(long claim, long through) {
    aheadClaim = claim;
    aheadThrough = through;
  }

  /**
   * Moves the view to window {@code w} (never backwards). Unsent permits of windows that fall out of
   * the view are handed to {@code orphans} so that they still reach the store. {@code sliding}: the
   * window gone by still weighs, and so does a claim held on it until a flush gives it up.
   */
  void roll(long w, OrphanSink orphans, boolean sliding) {
    if (w <= window) {
      return;
    }
    // what the window gone by came to as last seen (none for a key first seen now, or after a gap)
    lastWindowTotal = window != Long.MIN_VALUE && w == window + 1 ? globalCur + pendingCur : -1;
    if (window != Long.MIN_VALUE && w == window + 1) {
      if (unsentPrev > 0) {
        orphans.add(key, window - 1, unsentPrev);
      }
      globalPrev = globalCur;
      pendingPrev = pendingCur;
      unsentPrev = unsentCur;
      ownPrev = ownCur;
      takenPrev = takenCur;
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
      takenPrev = 0;
    }
    globalCur = 0;
    pendingCur = 0;
    unsentCur = 0;
    ownCur = 0;
    takenCur = 0;
    releasedCur = 0;
    // (a window's allowed permits not sent by its end go as the window gone by's plain count)
    allowedCur = 0;
    allowedUnsent = 0;
    allowanceSpent = 0;
    if (regional != null) {
      regional.roll(w == window + 1);
    }
    // (a sliding window's claimant holds a part of the fading even with a claim of 0: it weighs in
    // the next window until given up; a fixed window's claim weighs nowhere once its window is over,
    // and a flush to give it up was a key read and write for nothing)
    prevClaimHeld = sliding && w == window + 1 && (claim > 0 || (claim >= 0 && claimNodes > 0));
    claim = -1; // a claim is on one window
    claimNodes = 0;
    if (w <= aheadThrough && aheadClaim > 0) {
      claim = aheadClaim; // granted ahead (fixed windows): this node's in this window too
    }
    noneFree = false;
    nothingFreeUntil = Long.MIN_VALUE;
    fruitlessAsks = 0;
    if (grants != null) {
      grants.roll(sliding && w == window + 1);
    }
    window = w;
  }

  /** {@link #takeCredit}: the credit paid; it paid and filled a batch; it cannot pay. */
  static final int PAID = 1;
  static final int PAID_SYNC = 2;
  static final int UNPAID = 0;

  /**
   * Takes {@code cost} permits of the credit, without the monitor: {@link #UNPAID} when the credit
   * cannot pay, {@link #PAID_SYNC} for the one decision that fills a batch.
   */
  int takeCredit(long now, long cost) {
    if (now >= creditUntil) {
      return UNPAID;
    }
    long c;
    do {
      c = credit;
      if (c < cost) {
        return UNPAID;
      }
    } while (!CREDIT.weakCompareAndSet(this, c, c - cost));
    long syncAt = syncAtOrBelow;
    return c > syncAt && c - cost <= syncAt ? PAID_SYNC : PAID;
  }

  /**
   * Under the monitor: lets decisions take up to {@code amount} permits without it until
   * {@code until}; the decision that takes the credit past {@code untilBatch} permits asks for a sync
   * (none does when it is not positive). The credit is written last, so a decision that sees it also
   * sees the rest.
   */
  void grantCredit(long amount, long until, long untilBatch) {
    creditGranted = amount;
    creditUntil = until;
    syncAtOrBelow = untilBatch > 0 ? amount - untilBatch : amount;
    credit = amount;
  }

  /** Under the monitor: takes the credit back and returns how many permits decisions took from it. */
  long revokeCredit() {
    if (creditGranted == 0) {
      return 0;
    }
    long left = (long) CREDIT.getAndSet(this, 0L);
    long used = creditGranted - left;
    creditGranted = 0;
    creditUntil = Long.MIN_VALUE;
    return used;
  }

  /** Nothing to send and nothing waiting for an answer. */
  boolean quiet() {
    return pendingCur == 0 && pendingPrev == 0 && unsentCur == 0 && unsentPrev == 0 && unsettled == null;
  }

  /**
   * Under the monitor: the region's share of {@link #window} as the store last answered; -1 where no
   * coordinator's lease covers it (the static share applies).
   */
  long share() {
    return regional == null ? -1 : regional.share;
  }

  /**
   * Under the monitor: the shares a flush's answer gave for {@link #window} and the one after (-1:
   * none). An answer without a share for a window this node holds one for keeps the one it holds: the
   * record was lost (a regional Redis restarted empty) or the coordinator's clock has just opened the
   * next window; either way the coordinator counts the region at the share it leased until its next
   * round writes again, and the static share G / R now could push the regions' sum over G (a lease
   * never ends inside a window it covered).
   */
  void sharesAnswered(long share, long next) {
    if (regional == null) {
      regional = new Regional();
    }
    regional.share = share >= 0 || regional.share < 0 ? share : regional.share;
    regional.nextShare = next >= 0 || regional.nextShare < 0 ? next : regional.nextShare;
  }

  /** Under the monitor: permits denied in {@link #window} (regional quota) and not sent yet. */
  long deniedUnsent() {
    return regional == null ? 0 : regional.denied;
  }

  /** Under the monitor: permits denied in the window before {@link #window} (regional quota) and not sent yet. */
  long deniedUnsentPrev() {
    return regional == null ? 0 : regional.deniedPrev;
  }

  /**
   * Under the monitor: {@code permits} denied here (regional quota), or a flush's denials back among
   * the unsent ({@code previous}: of the window before {@link #window}).
   */
  void deniedNotSent(long permits, boolean previous) {
    if (permits == 0) {
      return;
    }
    if (regional == null) {
      regional = new Regional();
    }
    if (previous) {
      regional.deniedPrev += permits;
    } else {
      regional.denied += permits;
    }
  }

  /** Under the monitor: the denials of {@link #window} ({@code previous}: of the window before) went with a flush. */
  void deniedSent(boolean previous) {
    if (regional != null) {
      if (previous) {
        regional.deniedPrev = 0;
      } else {
        regional.denied = 0;
      }
    }
  }

  /**
   * A regional quota's view: the region's share for the view's window and for the window after it, as
   * the store last answered (-1: no coordinator's lease covers it), and the permits denied here and not
   * sent yet (the demand the coordinator weighs), of the view's window and of the one before, sent with
   * that window's delta. (Dropped at the window's end, the last sync interval's denials of a region at
   * its share never reached the coordinator: the smallest region's demand read about a sixth low, and
   * it got 500 of the 600 its max-min fair share was.)
   */
  private static final class Regional {
    long share = -1;
    long nextShare = -1;
    long denied;
    long deniedPrev;

    /** The view moves to a new window; {@code next}: the one right after its old one. */
    void roll(boolean next) {
      share = next ? nextShare : -1;
      nextShare = -1;
      deniedPrev = next ? denied : 0;
      denied = 0;
    }
  }

  /**
   * Under the monitor, LOCAL_SHARE with the breaker open (fixed windows): this node decides on its local
   * share in its window; the most it may admit there, its own admissions counted, is {@code cap} where
   * it starts doing so in this window (or after its last hold ran out), and it holds that cap to the
   * window's end or {@code until} (ticker time), whichever comes first (WindowFallback#admits).
   */
  void holdLocalShare(long cap, long now, long until) {
    if (shareCap == null) {
      shareCap = new LocalShareCap(); // (then kept: an outage decides on it window after window)
    }
    if (shareCap.window != window || now >= shareCap.until) {
      shareCap.window = window;
      shareCap.cap = cap;
    }
    shareCap.until = until;
  }

  /**
   * Under the monitor: a take counted {@code permits} of the view's window; {@code numberedDone} is the
   * last numbered flush of the key answered, {@code numberedSent} the last sent. Takes before a numbered
   * flush that was sent after them and answered reached that store: no longer unproven.
   */
  void taken(long permits, long numberedDone, long numberedSent) {
    if (numberedDone > takenMark) {
      takenCur = 0;
      takenPrev = 0;
    }
    takenCur += permits;
    takenMark = numberedSent;
  }

  /**
   * Under the monitor, refilling a store that lost its data: the permits takes counted in the view's
   * window ({@code previous}: the window before) that may be in the new store already, where no
   * numbered flush sent after them was answered before the loss ({@code doneBeforeLoss}); 0 otherwise.
   */
  long takesUnproven(boolean previous, long doneBeforeLoss) {
    return doneBeforeLoss <= takenMark ? (previous ? takenPrev : takenCur) : 0;
  }

  /** Under the monitor: the takes are accounted for (sent again, or left in the new store). */
  void takesAccountedFor() {
    takenCur = 0;
    takenPrev = 0;
  }

  /**
   * Under the monitor: the store had less than {@code need} free for a decision's ask; until {@code until}
   * (ticker time) a decision the claim cannot pay that needs at least that much is denied without asking.
   */
  void nothingFreeFor(long need, long until) {
    nothingFreeUntil = until;
    freeBelow = need;
    fruitlessAsks++;
  }

  /** Under the monitor: a decision's ask found what it needed. */
  void askFruitful() {
    fruitlessAsks = 0;
  }

  /** Under the monitor: asks in a row that found less free than they needed, in this window. */
  int fruitlessAsks() {
    return fruitlessAsks;
  }

  /** Under the monitor: something may be free again (a claim given up, a store that lost its data): decisions ask. */
  void mayBeFreeNow() {
    nothingFreeUntil = Long.MIN_VALUE;
  }

  /**
   * Under the monitor: whether the store lately had less free than a decision needing {@code need} at
   * {@code now} would ask for, so that the decision is denied without asking (a view holding a claim).
   */
  boolean tooLittleFree(long need, long now) {
    return claim >= 0 && now < nothingFreeUntil && need >= freeBelow;
  }

  /** Until when decisions the claim cannot pay are denied without asking (Long.MIN_VALUE: none are). */
  long nothingFreeUntil() {
    return nothingFreeUntil;
  }

  /** Under the monitor: what is left of the node's allowance on {@link #window} (see Allowances). */
  long allowanceLeft() {
    return Allowances.PER_KEY - allowedCur;
  }

  /** Under the monitor: {@code permits} admitted under the node's allowance, to be sent with the next delta. */
  void admittedUnderAllowance(long permits) {
    allowedCur += permits;
    allowedUnsent += permits;
  }

  /** Under the monitor: of the permits not sent, those admitted under the allowance. */
  long allowedUnsent() {
    return allowedUnsent;
  }

  /** Under the monitor: what of the allowance no delta sent has spent yet (the next delta on the window spends it). */
  long allowanceUnspent() {
    return Allowances.PER_KEY - allowanceSpent;
  }

  /**
   * Under the monitor: a delta carrying the allowed permits not sent went, spending {@code spent} of the
   * allowance: what it did not use is given up (the node's claim pays for the key from now on).
   */
  void allowanceSent(long spent) {
    allowedUnsent = 0;
    if (spent > 0) {
      allowanceSpent += spent;
      allowedCur = Allowances.PER_KEY;
    }
  }

  /**
   * Under the monitor: a claim call on the view's window is about to go; an allowance the node has not
   * used gives it up (a claim pays for the key from now on) and is spent with the call, which returns
   * what the node has spent in all. Without it, what the store kept for it until the node's next flush
   * held the key short, its own ask included: at a sliding window's start over a previous window that
   * still filled the limit, and at the limit where the node had no delta to send.
   */
  long spendAllowanceForAsk() {
    if (allowedCur == 0 && allowanceSpent == 0) {
      allowedCur = Allowances.PER_KEY;
      allowanceSpent = Allowances.PER_KEY;
    }
    return allowanceSpent;
  }

  /**
   * Under the monitor: whether the view was sent again in sync {@code round} after a store lost its
   * data; if not, it is now (StoreLossRefill sends a view once per sync).
   */
  boolean refillOnce(long round) {
    if (refilledRound == round) {
      return false;
    }
    refilledRound = round;
    return true;
  }

  /** A decision sent a claim call for the key at {@code nanoTime} (System.nanoTime). */
  void claimCallSent(long nanoTime) {
    claimCallSentAt = nanoTime;
  }

  /** Whether a flush sent at {@code nanoTime} went before the key's last claim call (see WindowClaims#mergeOlderAnswer). */
  boolean sentBeforeLastClaimCall(long nanoTime) {
    return nanoTime < claimCallSentAt;
  }

  /**
   * Under the monitor, for a decision that asks the store at {@code now}: what to ask for beyond the
   * request, at most {@code cap}: twice what the last ask asked beyond its request where that was within
   * {@code withinNanos} (a burst, a key warming up), else {@code expected}; recorded for the next ask.
   */
  long claimAheadOfDemand(long now, long cap, long withinNanos, long expected) {
    long ahead = lastClaimAsked != Long.MIN_VALUE && now - lastClaimAsked < withinNanos
        ? Math.min(cap, Math.max(1, 2 * claimAhead))
        : Math.min(cap, expected);
    claimAhead = ahead;
    lastClaimAsked = now;
    return ahead;
  }

  /** Under the monitor: whether the key asked for an urgent sync within {@code nanos} before {@code now}. */
  boolean urgentSyncWithin(long now, long nanos) {
    return lastUrgentSync != Long.MIN_VALUE && now - lastUrgentSync < nanos;
  }

  /** Under the monitor: the key asked for an urgent sync at {@code now}. */
  void urgentSyncAsked(long now) {
    lastUrgentSync = now;
  }

  /** Under the monitor: a delta of the view's window came back unanswered: its allowed permits and what it spent go again. */
  void allowanceBack(long allowed, long spent) {
    allowedUnsent += allowed;
    allowanceSpent -= spent;
  }

  /** Under the monitor: whether a local share held since a fault caps this node's admissions at {@code now}. */
  boolean localShareHeld(long now) {
    return shareCap != null && shareCap.window == window && now < shareCap.until;
  }

  /** Under the monitor, while {@link #localShareHeld}: the most this node may admit in its window. */
  long localShareCap() {
    return shareCap.cap;
  }

  /** Under the monitor, while {@link #localShareHeld}: when the hold ends (ticker time), at the window's end at the latest. */
  long localShareUntil() {
    return shareCap.until;
  }

  /** A local share held since a fault: its window, the most the node may admit there, and until when. */
  private static final class LocalShareCap {
    long window = Long.MIN_VALUE;
    long cap;
    long until = Long.MIN_VALUE;
  }

  /** Under the monitor: reservation mode's grants of this view, made at first use. */
  Grants grants() {
    if (grants == null) {
      grants = new Grants();
    }
    return grants;
  }

  /** Under the monitor: permits granted for {@link #window} and not used yet (reservation mode; 0 otherwise). */
  long leased() {
    return grants == null ? 0 : grants.held;
  }

  /** Under the monitor: whether the window gone by's grant left permits to give back (reservation, sliding). */
  boolean hasLeftoverGrant() {
    return grants != null && grants.leftover > 0;
  }

  /** Under the monitor: whether a grant was asked for and not answered yet (reservation mode). */
  boolean leaseWanted() {
    return grants != null && grants.wanted;
  }

  /**
   * Reservation mode: what one node holds of the store's grants on a key, under the view's monitor.
   * A grant is for one window: what is left of it is never carried over; a sliding window's is given
   * back, since the window gone by still weighs.
   */
  static final class Grants {
    /** Permits granted for the view's window and not used yet. */
    private long held;
    /**
     * Sliding window: permits granted on the window before the view's that this node did not use, 0
     * for none. The store counted them with the grant, and as the previous window's count they would
     * weigh in this one: the decision that rolls the view into this window gives them back at once,
     * under the same monitor (WindowLeases#giveBackLeftover).
     */
    private long leftover;
    /** A grant was asked for and not answered yet. */
    private boolean wanted;
    /** Budget left in the window when the store last answered (-1 before). */
    private long lastRemaining = -1;

    long held() {
      return held;
    }

    /** Permits granted (or given back by a release) into the view's window. */
    void add(long permits) {
      held += permits;
    }

    /** An admission paid by what is held. */
    void use(long permits) {
      held -= permits;
    }

    /** What the window gone by's grant left unused, handed over to be given back: none is left here. */
    long takeLeftover() {
      long back = leftover;
      leftover = 0;
      return back;
    }

    boolean wanted() {
      return wanted;
    }

    void wanted(boolean wanted) {
      this.wanted = wanted;
    }

    long lastRemaining() {
      return lastRemaining;
    }

    void lastRemaining(long remaining) {
      lastRemaining = remaining;
    }

    /** The view moves to a new window; {@code keepLeftover}: the one it leaves still weighs (sliding, next window). */
    private void roll(boolean keepLeftover) {
      leftover = keepLeftover ? held : 0;
      held = 0;
      lastRemaining = -1;
    }
  }

  /** Under the monitor: a take of this view's window whose answer never came ({@code token}, {@code permits}). */
  void takeUnanswered(long token, long permits) {
    unsettled = new UnsettledTake(token, window, permits);
  }

  /** Under the monitor: whether a take's answer never came and no flush has settled it yet. */
  boolean hasUnsettledTake() {
    return unsettled != null;
  }

  /** Under the monitor: whether the failure policy admitted the request of the unanswered take. */
  void unsettledTakeAdmitted(boolean admitted) {
    unsettled.admitted = admitted;
  }

  /**
   * Under the monitor, at a drain: the window of the unanswered take this drain's flush settles, marked
   * as on its way, or {@link Long#MIN_VALUE} where there is none or a flush settling it is on its way.
   */
  long startSettling() {
    if (unsettled == null || unsettled.inFlight) {
      return Long.MIN_VALUE;
    }
    unsettled.inFlight = true;
    return unsettled.window;
  }

  /** Under the monitor: {@code d} settling the unanswered take (see {@link #startSettling}). */
  Delta settling(Delta d) {
    return d.settling(unsettled.token, unsettled.permits, unsettled.admitted);
  }

  /** Under the monitor: whether {@code d} settles this view's unanswered take. */
  boolean settledBy(Delta d) {
    return d.settle() != 0 && unsettled != null && unsettled.token == d.token();
  }

  /** Under the monitor: the flush that settled the take came back unanswered; the next drain sends it again. */
  void settlingFailed() {
    unsettled.inFlight = false;
  }

  /** Under the monitor: the take is settled. */
  void takeSettled() {
    unsettled = null;
  }

  /** A take whose answer never came: its token, window and permits, and what the failure policy decided. */
  private static final class UnsettledTake {
    final long token;
    final long window;
    final long permits;
    boolean admitted;
    /** A flush that settles it is on its way. */
    boolean inFlight;

    UnsettledTake(long token, long window, long permits) {
      this.token = token;
      this.window = window;
      this.permits = permits;
    }
  }

  interface OrphanSink {
    void add(String key, long window, long amount);
  }
}
