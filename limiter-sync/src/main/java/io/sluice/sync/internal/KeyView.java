package io.sluice.sync.internal;

import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.Delta;

/**
 * One node's view of one key of a window limit: the global counts of the current and previous
 * windows as of the last sync, and what this node admitted that the store has not acknowledged yet
 * ({@link ViewCounts}); its claim ({@link ViewClaim}); its credit ({@link ViewCredit}); and here its place in the
 * flusher's queue and the table, its demand, and the state of the rarer modes (regional shares,
 * reservation grants, a local share held since a fault).
 *
 * <p>Concurrency: guarded by its own monitor, but for the credit and {@code storeCallUnderway} below:
 * every critical section is a few arithmetic steps, except a decision that asks the store for a claim,
 * which holds it through that one call (the key's other decisions would wait for the answer anyway).
 *
 * <p>Besides the monitor, a view holds a <em>credit</em>: permits that decisions may take with one
 * compare-and-set and no monitor, until a ticker time. A decision under the monitor grants it (as
 * many permits as the monitor would have admitted in a row without asking for a sync), and every
 * critical section first takes it back ({@link #revokeCredit}) and counts what was used, so the
 * counts under the monitor are exact whenever they are read. One exception: the flusher, looking at a
 * view it keeps for a later sync, counts what was used and leaves the rest to the decisions ({@link
 * #harvestCredit}: what the credit was granted on changes only with a store's answer or a decision,
 * and each takes it back first); what they take meanwhile is counted by the next critical section, as
 * if taken after it.
 */
final class KeyView extends ViewCredit {
  private final String key;
  /**
   * A decision holds the view's monitor through a store call (a claim or a lease): read without the
   * monitor by a decision that must not wait (see {@link SyncedLimiter#acquireAsync}), which hands
   * itself over rather than enter the monitor and wait for that call.
   */
  private volatile boolean storeCallUnderway;
  /**
   * LOCAL_SHARE, fixed windows: the local share this node last decided on with the breaker open, held
   * after the store is back (null: none; see {@link #holdLocalShare}). Rare, so a view holds none of its fields.
   */
  private LocalShareCap shareCap;
  /** Denial cache: the global count alone is over the limit until then. */
  private long deniedUntil = Long.MIN_VALUE;
  /** Dropped from the key table (idle): a decision that still holds it looks the key up again. */
  private boolean retired;
  /** In the dirty queue, waiting for a flush. */
  private boolean queued;
  /** A decision asked for a sync of this key (the view is queued): the next sync sends it, whatever it holds. */
  private boolean syncWanted;
  /** Reservation mode's grants (null in the other modes, and before the key's first grant is asked for). */
  private LeaseGrants grants;
  /** Demand (permits asked for) since {@link #rateSince}, its running rate per second, hotness. */
  private long hits;
  /** Ticker time the key was last asked for (about: credit decisions are seen when settled); a claim is given up once it is idle. */
  private long demandAt = Long.MIN_VALUE;
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

  String key() {
    return key;
  }

  /** Until when the count alone denies (ticker time; the denial cache). */
  long deniedUntil() {
    return deniedUntil;
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

  /** A decision starts (true) or ends a store call holding the monitor. */
  void storeCallUnderway(boolean underway) {
    storeCallUnderway = underway;
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

  /** Under the monitor: the count alone denies until {@code until} (ticker time). */
  void denyUntil(long until) {
    deniedUntil = until;
  }

  /** Under the monitor: the cached denial is out of date (a regional share grew). */
  void denialOutOfDate() {
    deniedUntil = Long.MIN_VALUE;
  }

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

  /** Under the monitor: whether the key asked for an urgent sync within {@code nanos} before {@code now}. */
  boolean urgentSyncWithin(long now, long nanos) {
    return lastUrgentSync != Long.MIN_VALUE && now - lastUrgentSync < nanos;
  }

  /** Under the monitor: the key asked for an urgent sync at {@code now}. */
  void urgentSyncAsked(long now) {
    lastUrgentSync = now;
  }

  /** Under the monitor: a delta of the window gone by was sent, giving up the claim held there. */
  void prevSent() {
    unsentPrevSent();
    deniedSent(true);
    prevClaimGivenUp();
  }

  /** Under the monitor: a delta of the view's window was sent, spending {@code spent} of the allowance. */
  void curSent(long spent) {
    unsentCurSent(spent);
    deniedSent(false);
  }

  /**
   * Under the monitor: delta {@code d} came back unanswered. Its permits of the view's window or the
   * window before go back among the unsent, and a take it settles goes with the next sync; false for
   * an older window's, which the view no longer holds.
   */
  boolean unanswered(Delta d) {
    if (settlingUnanswered(d)) {
      syncWanted = true; // (the next drain sends it again)
    }
    int which = unsentAgain(d);
    if (which >= 0) {
      deniedNotSent(d.denied(), which == 1);
    }
    return which >= 0;
  }

  /**
   * Under the monitor: delta {@code d} was answered. A take it settles is settled; returns the permits
   * the failure policy admitted that the settling counted (no longer pending).
   */
  long answered(Delta d) {
    deltaAnswered();
    return takeSettledBy(d);
  }

  /**
   * Under the monitor: {@code permits} of the window gone by were counted, which now counts
   * {@code count}; the claim held there is given up, so what it held may be free now.
   */
  void prevCounted(long permits, long count) {
    prevCountedTo(permits, count);
    mayBeFreeNow();
  }

  /**
   * Under the monitor, refilling a store that lost its data: this node's permits the old store had
   * acknowledged go back among the unsent (see {@link #unsentAgainAfterLoss}), and its claims are gone
   * (it holds none until it asks again). Returns the permits it sends again.
   */
  long sendAgainAfterLoss(long doneBeforeLoss) {
    long sent = unsentAgainAfterLoss(doneBeforeLoss);
    claimsLost();
    if (sent > 0) {
      syncWanted = true;
    }
    return sent;
  }

  /**
   * Moves the view to window {@code w} (never backwards). Unsent permits of windows that fall out of
   * the view are handed to {@code orphans} so that they still reach the store. {@code sliding}: the
   * window gone by still weighs, and so does a claim held on it until a flush gives it up.
   */
  void roll(long w, OrphanSink orphans, boolean sliding) {
    long window = window();
    if (w <= window) {
      return;
    }
    if (regional != null) {
      regional.roll(w == window + 1);
    }
    rollClaim(w, w == window + 1, sliding);
    if (grants != null) {
      grants.roll(sliding && w == window + 1);
    }
    rollCounts(w, key, orphans);
  }

  /** Nothing to send and nothing waiting for an answer. */
  boolean quiet() {
    return nothingPending() && !hasUnsettledTake();
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
   * it starts doing so in this window (or after its last hold ran out), and in each window after it,
   * {@code fresh} (its even split of the whole limit, what a node still cut off admits there). It holds
   * that until {@code until} (ticker time; WindowFallback#admits).
   */
  void holdLocalShare(long cap, long fresh, long now, long until) {
    if (shareCap == null) {
      shareCap = new LocalShareCap(); // (then kept: an outage decides on it window after window)
    }
    if (shareCap.window != window() || now >= shareCap.until) {
      shareCap.window = window();
      shareCap.cap = cap;
    }
    shareCap.fresh = fresh;
    shareCap.until = until;
  }

  /**
   * Under the monitor: whether a local share held since a fault caps this node's admissions at {@code now}:
   * in the window it was held in, and in the windows after it until the hold ends. A node back before the
   * others, in a window it never decided on its share, does not see what they admit on theirs there either
   * (the chaos suite's key flood, windows of 1 s: 668-730 of a limit of 600 in a window where one node was
   * back and the others were still cut off, when the hold ended with the window it began in). The key table
   * keeps a view while it holds one (ViewTable#dropIfOver).
   */
  boolean localShareHeld(long now) {
    // (not carried where the split is nothing, a limit below the node count: the nodes still cut off admit
    // nothing there, so the store's counts hold everything, and the node would deny all for the hold)
    return shareCap != null && now < shareCap.until
        && (window() == shareCap.window || (window() > shareCap.window && shareCap.fresh > 0));
  }

  /**
   * Under the monitor: what a local share held since a fault still lets this node admit in its window
   * at {@code now} (Long.MAX_VALUE where none is held): the most a claim it asks for should let it admit
   * beyond its uncounted permits. A claim granted while the others cut off with it have not counted
   * their admissions is budget they may have spent: held past the share, it is admitted on once the
   * share runs out (the chaos suite's staggered recovery: 6,036-6,059 of a limit of 6,000).
   */
  long localShareRoom(long now) {
    return localShareHeld(now) ? Math.max(0, localShareCap() - ownCur()) : Long.MAX_VALUE;
  }

  /** Under the monitor, while {@link #localShareHeld}: the most this node may admit in its window. */
  long localShareCap() {
    return shareCap.window == window() ? shareCap.cap : shareCap.fresh;
  }

  /** Under the monitor, while {@link #localShareHeld}: when the hold ends (ticker time). */
  long localShareUntil() {
    return shareCap.until;
  }

  /**
   * A local share held since a fault: the window it was taken in, the most the node may admit there and
   * in each window after it, and until when.
   */
  private static final class LocalShareCap {
    long window = Long.MIN_VALUE;
    long cap;
    long fresh;
    long until = Long.MIN_VALUE;
  }

  /** Under the monitor: permits granted for {@link #window} and not used yet (reservation mode; 0 otherwise). */
  long leaseHeld() {
    return grants == null ? 0 : grants.held();
  }

  /** Under the monitor: reservation mode's grants of this view, made at first use. */
  LeaseGrants grants() {
    if (grants == null) {
      grants = new LeaseGrants();
    }
    return grants;
  }

  /** Under the monitor: whether the window gone by's grant left permits to give back (reservation, sliding). */
  boolean hasLeftoverGrant() {
    return grants != null && grants.hasLeftover();
  }

  /** Under the monitor: whether a grant was asked for and not answered yet (reservation mode). */
  boolean leaseWanted() {
    return grants != null && grants.wanted();
  }

  interface OrphanSink {
    void add(String key, long window, long amount);
  }
}
