package io.sluice.sync.internal;

import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.Delta;

/**
 * The counts of a {@link KeyView}: the store's counts of the view's window and the window before as
 * of the last answer, and this node's admissions there that the store has not acknowledged (pending),
 * of which a part is not even sent (unsent); the permits takes counted, those given back, and the
 * node's allowance on the window. One of the three layers a view is made of (this one, {@link
 * ViewClaim} and {@link KeyView}: one object per key, its state split by concern), each keeping its
 * fields private behind its own operations.
 *
 * <p>Concurrency: guarded by the view's monitor, as the whole view is.
 */
abstract class ViewCounts {
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
  /** Ticker time of the last acknowledgement that refreshed the global counts. */
  private long syncedAt = Long.MIN_VALUE;
  /**
   * Deltas of this view sent to the store and neither answered nor back among the unsent: a flush
   * trims the claim (Delta#keeping) only when none is, since the answer of another could raise the
   * claim it trims.
   */
  private int deltasOut;
  /**
   * The count of the window before {@link #window} as last seen here (the store's count and this
   * node's pending permits when the view rolled), or -1: the view did not see that window.
   */
  private long lastWindowTotal = -1;

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

  /** This node's own admissions in the window before {@link #window}, acknowledged or not. */
  long ownPrev() {
    return ownPrev;
  }

  /** Permits of {@link #window} given back after the store counted them, which admissions use first. */
  long releasedCur() {
    return releasedCur;
  }

  /** Ticker time of the last answer that refreshed the counts (Long.MIN_VALUE: none). */
  long syncedAt() {
    return syncedAt;
  }

  /** Deltas of the view sent and not answered. */
  int deltasOut() {
    return deltasOut;
  }

  /** The count of the window before {@link #window} as last seen here, or -1: the view did not see it. */
  long lastWindowTotal() {
    return lastWindowTotal;
  }

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
    // (the permits admitted under the allowance are among those not sent, never more: left as they were
    // after a give-back, the next delta said more of them than it carried and the sync threw building it,
    // at every sync to the window's end; AllowanceReleaseTest)
    allowedUnsent = Math.min(allowedUnsent, unsentCur);
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

  /**
   * Under the monitor: this node gave the store back {@code permits} of {@link #window} that its last
   * answer counted (a grant it did not use), so the view's count no longer holds them.
   */
  void countGivenBack(long permits) {
    globalCur = Math.max(0, globalCur - permits);
  }

  /** Under the monitor: an older answer's counts, kept only where larger (see WindowClaims#mergeOlderAnswer). */
  void countsAtLeast(long cur, long prev) {
    globalCur = Math.max(globalCur, cur);
    globalPrev = Math.max(globalPrev, prev);
  }

  /** Under the monitor: a delta that only settles a take was sent. */
  void settlingSent() {
    deltasOut++;
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
   * Under the monitor: what the node has admitted under its allowance on {@link #window}, or the whole
   * allowance once a delta gave it up (see Allowances).
   */
  long allowedInWindow() {
    return allowedCur;
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

  /** Under the monitor: what of the allowance the deltas sent on {@link #window} have spent, in all. */
  long allowanceSpentSoFar() {
    return allowanceSpent;
  }

  /**
   * Under the monitor: a delta carrying the allowed permits not sent went, spending {@code spent} more of
   * the allowance: what it used, or all of it, the rest given up (the node's claim pays for the key from
   * now on; SyncDrain#addCurrentWindow decides which).
   */
  void allowanceSent(long spent) {
    allowedUnsent = 0;
    if (spent > 0) {
      allowanceSpent += spent;
      allowedCur = Math.max(allowedCur, allowanceSpent);
    }
  }

  /**
   * Under the monitor: a claim call on the view's window is about to go; an allowance the node has not
   * used, or the rest of one a flush kept once every permit it paid is counted, is given up (a claim pays
   * for the key from now on) and spent with the call, which returns what the node has spent in all.
   * Without it, what the store kept for it until the node's next flush held the key short, its own ask
   * included: at a sliding window's start over a previous window that still filled the limit, and at
   * the limit where the node had no delta to send. With a delta of the view on its way, the call spends
   * nothing (0): carrying what that delta spends would let the store free the reserve for permits it
   * has not counted yet.
   */
  long spendAllowanceForAsk(long perKey) {
    boolean unused = allowedCur == 0 && allowanceSpent == 0;
    boolean keptRest = deltasOut == 0 && allowedUnsent == 0 && allowanceSpent > 0 && allowanceSpent == allowedCur
        && allowedCur < perKey;
    if (unused || keptRest) {
      allowedCur = perKey;
      allowanceSpent = perKey;
    }
    return unused || deltasOut == 0 ? allowanceSpent : 0;
  }

  /**
   * Under the monitor: a delta of the view's window came back unanswered: its allowed permits and what it
   * spent go again. (What the node spent falls by the delta's total, perhaps below what answered deltas
   * spent: the store keeps each node's largest total, and the next delta carries the total again.)
   */
  void allowanceBack(long allowed, long spent) {
    allowedUnsent += allowed;
    allowanceSpent = Math.max(0, allowanceSpent - spent);
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

  /** Under the monitor: a delta of the window gone by was sent with its unsent permits. */
  void unsentPrevSent() {
    deltasOut++;
    unsentPrev = 0;
  }

  /** Under the monitor: a delta of {@link #window} was sent with its unsent permits, spending {@code spent} of the allowance. */
  void unsentCurSent(long spent) {
    deltasOut++;
    unsentCur = 0;
    allowanceSent(spent);
  }

  /**
   * Under the monitor: delta {@code d} came back unanswered; its permits go back among the unsent:
   * 0 where it was of {@link #window}, 1 of the window before, -1 of an older window the view no
   * longer holds (its permits did not go back).
   */
  int unsentAgain(Delta d) {
    deltasOut--;
    if (d.window() == window) {
      unsentCur += d.amount();
      allowanceBack(d.allowed(), d.spent());
      return 0;
    }
    if (d.window() == window - 1) {
      unsentPrev += d.amount();
      return 1;
    }
    return -1;
  }

  /** Under the monitor: a delta of the view was answered. */
  void deltaAnswered() {
    deltasOut--;
  }

  /** Under the monitor: {@code permits} the settling of a take counted in window {@code w} are no longer pending. */
  void settledPermitsCounted(long w, long permits) {
    if (w == window) {
      pendingCur -= permits;
    } else if (w == window - 1) {
      pendingPrev -= permits;
    }
  }

  /** Under the monitor: {@code permits} of the window gone by were counted, which now counts {@code count}. */
  void prevCountedTo(long permits, long count) {
    globalPrev = count;
    pendingPrev -= permits;
  }

  /**
   * Under the monitor, refilling a store that lost its data: this node's permits the old store had
   * acknowledged go back among the unsent, but for takes answered after the last numbered flush that
   * reached it was sent ({@code doneBeforeLoss}: those may be in the new store already); permits
   * released after the old store counted them are gone with it. Returns the permits it sends again.
   */
  long unsentAgainAfterLoss(long doneBeforeLoss) {
    long cur = Math.max(0, ownCur - pendingCur - takesUnproven(false, doneBeforeLoss));
    long prev = Math.max(0, ownPrev - pendingPrev - takesUnproven(true, doneBeforeLoss));
    takesAccountedFor();
    unsentCur += cur;
    pendingCur += cur;
    unsentPrev += prev;
    pendingPrev += prev;
    releasedCur = 0; // (given back after the old store counted them: the new one never did)
    return cur + prev;
  }

  /** Nothing pending (sent or not). */
  boolean nothingPending() {
    return pendingCur == 0 && pendingPrev == 0 && unsentCur == 0 && unsentPrev == 0;
  }

  /**
   * Moves the counts to window {@code w}, after {@link #window} (see KeyView#roll): the window gone by's
   * become the previous ones where {@code w} is the next window, else none are kept; unsent permits of
   * windows that fall out of the view are handed to {@code orphans} so that they still reach the store.
   */
  void rollCounts(long w, String key, KeyView.OrphanSink orphans) {
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
    window = w;
  }
}
