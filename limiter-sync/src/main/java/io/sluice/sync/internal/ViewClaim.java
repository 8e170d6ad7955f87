package io.sluice.sync.internal;

import io.sluice.sync.spi.Delta;

/**
 * The claim of a {@link KeyView} (see flush.lua): this node's claim on the view's window as the store
 * last answered, a sliding window's part of what the window before frees, the claims granted on the
 * windows ahead, what the last asks found free, the flushes on their way that give the claim up, and a
 * take whose answer never came. The middle one of a view's three layers (see {@link ViewCounts}).
 *
 * <p>Concurrency: guarded by the view's monitor, as the whole view is.
 */
abstract class ViewClaim extends ViewCounts {
  /**
   * This node's claim on the window as the store last answered: how many permits it may admit
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
   * (Delta#keeping): until they are answered, a decision does not ask for a claim (one granted before
   * such a flush arrives would be given up with it); it waits for the answer (see SyncedLimiter.awaitReleases).
   */
  private int releasesInFlight;
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
  /** A claim on the window before the view's is still held in the store: the next flush gives it up. */
  private boolean prevClaimHeld;
  /**
   * Once a claim call has trimmed that claim to what this node has not counted there
   * (ClaimCalls#trimmedPrevious), what the store holds in it for those permits; -1: not trimmed.
   */
  private long prevReserved = -1;
  /** System.nanoTime when a decision last sent a claim call for this key (see WindowClaims#mergeOlderAnswer). */
  private long claimCallSentAt = Long.MIN_VALUE;
  /**
   * A take (a claim call that also counted the decision's permit, see {@link Delta#taking}) whose
   * answer never came, or null: the key's next flush settles it, and until that is answered decisions
   * ask for claims without takes. Rare (a store call failed), so a view holds none of its fields.
   */
  private UnsettledTake unsettled;

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
    claim = pendingCur() + keep;
  }

  /** Under the monitor: a flush gives the claim up: nothing more is admitted under it, nor under a part of the fading. */
  void claimGivenUp() {
    claim = pendingCur();
    claimNodes = 0;
  }

  /** Under the monitor: the claim on the window gone by was given up (by a claim call). */
  void prevClaimGivenUp() {
    prevClaimHeld = false;
  }

  /**
   * Under the monitor: a claim call trimmed the claim on the window gone by to what this node has not
   * counted there, and the store holds {@code reserved} of those permits in it.
   */
  void prevClaimTrimmed(long reserved) {
    prevReserved = Math.max(0, reserved);
  }

  /** Whether a claim call has trimmed the claim on the window gone by since the view rolled. */
  boolean prevClaimTrimmedAlready() {
    return prevReserved >= 0;
  }

  /**
   * Under the monitor: of this node's uncounted permits of the window gone by, those its trimmed claim
   * there holds, at {@code prevWeight} (the weight that window has now): the store counts them there,
   * so its claim on the view's window need not pay for them too. Until a flush has counted them (in
   * flight, the claim is still held or they are counted: either way they weigh once).
   */
  double prevReservedAt(double prevWeight) {
    return prevReserved <= 0 ? 0 : Math.min(pendingPrev(), prevReserved) * prevWeight;
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

  /** Under the monitor: a take of this view's window whose answer never came ({@code token}, {@code permits}). */
  void takeUnanswered(long token, long permits) {
    unsettled = new UnsettledTake(token, window(), permits);
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

  /** Under the monitor: the claims are gone with a store that lost its data (and those held ahead). */
  void claimsLost() {
    claim = -1;
    claimNodes = 0;
    aheadClaim = 0;
    aheadThrough = Long.MIN_VALUE;
    prevClaimHeld = false;
    prevReserved = -1;
    noneFree = false;
    nothingFreeUntil = Long.MIN_VALUE;
  }

  /**
   * Moves the claim to window {@code w}, after the view's ({@code next}: the one right after it): a
   * claim is on one window, but one granted ahead; a sliding window's claim on the window gone by
   * weighs in the next one until a flush gives it up.
   */
  void rollClaim(long w, boolean next, boolean sliding) {
    // (a sliding window's claimant holds a part of the fading even with a claim of 0: it weighs in
    // the next window until given up; a fixed window's claim weighs nowhere once its window is over,
    // and a flush to give it up was a key read and write for nothing)
    prevClaimHeld = sliding && next && (claim > 0 || (claim >= 0 && claimNodes > 0));
    prevReserved = -1;
    claim = -1; // a claim is on one window
    claimNodes = 0;
    if (w <= aheadThrough && aheadClaim > 0) {
      claim = aheadClaim; // granted ahead (fixed windows): this node's in this window too
    }
    noneFree = false;
    nothingFreeUntil = Long.MIN_VALUE;
    fruitlessAsks = 0;
  }

  /** Under the monitor: a take's answer came back unanswered with {@code d}: the next drain sends it again. */
  boolean settlingUnanswered(Delta d) {
    if (!settledBy(d)) {
      return false;
    }
    unsettled.inFlight = false;
    return true;
  }

  /**
   * Under the monitor: delta {@code d} was answered; a take it settles is settled. Returns the permits
   * the failure policy admitted that the settling counted (0 where it settles none).
   */
  long takeSettledBy(Delta d) {
    if (!settledBy(d)) {
      return 0;
    }
    long settled = Math.max(0, d.settle());
    settledPermitsCounted(d.window(), settled);
    unsettled = null;
    return settled;
  }
}
