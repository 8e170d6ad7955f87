package io.sluice.sync.internal;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The store call a window limit's decision makes when its claim cannot pay for it: a claim-only call
 * that asks for a claim and carries the decision's permits as a take.
 *
 * <p>Concurrency: called under the key's view's monitor, by any deciding thread; its take tokens come
 * from an atomic counter, the rest is immutable.
 */
final class ClaimCalls {
  /** What {@link #ask} did: answered, the take not counted. */
  static final int ASKED = 0;
  /** No answer: the failure policy decides. */
  static final int ASK_FAILED = 1;
  /** Answered, and the store counted the take with the claim. */
  static final int TAKEN = 4;
  /** No answer to a call that carried a take: the key's next flush settles it. */
  static final int TAKE_FAILED = 5;

  private final StoreCalls calls;
  private final Counter counter;
  private final Limit limit;
  private final CounterStore store;
  private final WindowClaims claims;
  private final FlushQueue queue;
  private final ClaimLanes lanes;
  /** The last take token used (see {@link Delta#taking}): from the clock, so a restarted node never reuses one. */
  private final AtomicLong takeTokens = new AtomicLong(System.currentTimeMillis() * 1_000L);

  ClaimCalls(LimiterSetup l, WindowClaims claims, FlushQueue queue, Flusher flusher) {
    this.calls = l.calls;
    this.counter = l.counter;
    this.limit = l.limit;
    this.store = l.store;
    this.claims = claims;
    this.queue = queue;
    this.lanes = new ClaimLanes(l.calls, l.store, flusher, l.claimTimeout, l.owner);
  }

  /**
   * Under the view's monitor: asks the store for a claim of at least {@code need} on the view's
   * window, in one claim-only call (no permits, so no sequence: it may cross the flusher's batches;
   * with other keys' claim calls asked while one was under way, see {@link ClaimLanes}), and takes
   * the answer into the view. The monitor is held through the call: the key's other
   * decisions would wait for this answer anyway, and the flusher's answers for the key, which may
   * be older, land after it (an older claim is never the larger one, so a late answer only makes
   * the node use less).
   *
   * <p>The call also carries the decision's permits as a take ({@link Delta#taking}): counted with
   * the claim when it covers the need, so that a cold key's decision costs one store update, not a
   * claim and then a flush. A take whose answer never comes is settled by the key's next flush (see
   * {@link KeyView#takeUnanswered}); while one is unsettled, calls carry no take.
   *
   * @return {@link #TAKEN}, {@link #ASKED} (answered, the take not counted), {@link #TAKE_FAILED} or
   *     {@link #ASK_FAILED} (no answer: the failure policy decides)
   */
  int ask(KeyView v, long now, long need, long take) {
    long capacity = limit.capacity();
    // a claim left on the window gone by still weighs in a sliding window (and blocks a fixed one's
    // claimants no more, but costs a flush): given up here when nothing of it is uncounted
    boolean givesUpPrevious = v.prevClaimHeld() && v.unsentPrev() == 0 && v.pendingPrev() == 0;
    Delta previous = givesUpPrevious ? new Delta(counter, v.key(), v.window() - 1, 0) : trimmedPrevious(v);
    boolean trims = previous != null && !givesUpPrevious;
    if (trims) {
      // the trimmed claim holds this node's uncounted permits of that window as they weigh, so the
      // claim on this one need not pay for them too (less a permit: a claimant's half permit borrowed
      // of its part of the fading, which the store's part rounds down)
      long held = (long) Math.floor(v.pendingPrev() * claims.sizing.prevWeight(v.window(), now)) - 1;
      need = Math.max(take, need - Math.max(0, held));
    }
    // (no part of a sliding window's fading, nor a claim beyond the need, where that part would be a
    // few permits: see fadingPartTooSmall)
    boolean noPart = claims.sizing.fadingPartTooSmall(v, now);
    long ahead = noPart ? 0 : claims.sizing.aheadOfDemand(v, now, claims.sizing.untilNextAnswer(v));
    long want = Math.max(need, Math.min(capacity, need + ahead));
    long room = v.localShareRoom(now);
    if (room != Long.MAX_VALUE) {
      // (no claim beyond what a local share held since a fault lets the node admit: KeyView#localShareRoom)
      want = Math.max(need, Math.min(want, v.pendingCur() + room));
    }
    boolean taking = take > 0 && take <= need && !v.hasUnsettledTake() && store.countsTakes();
    Delta d = claims.sizing.claimDelta(new Delta(counter, v.key(), v.window(), taking ? take : 0), want,
        Math.min(need, want), noPart, v, now);
    long reserve = claims.allowances.reserve(v.window(), now);
    if (reserve > 0) {
      // (an allowance not used, or the rest a flush kept, is given up and spent with the call: see
      // KeyView#spendAllowanceForAsk)
      d = d.allowing(0, v.spendAllowanceForAsk(claims.allowances.perKey()), reserve);
    }
    long token = 0;
    if (taking) {
      token = takeTokens.incrementAndGet();
      d = d.taking(token);
    }
    // (first: a sliding window's claimant part of the window gone by no longer weighs on this claim)
    List<Delta> deltas = previous != null ? List.of(previous, d) : List.of(d);
    int at = deltas.size() - 1;
    ClaimLanes.Answer answer = send(v, deltas, now);
    FlushResult result = answer == null ? null : answer.result();
    at += answer == null ? 0 : answer.offset();
    if (result == null) {
      if (taking) {
        v.takeUnanswered(token, take);
        return TAKE_FAILED;
      }
      return ASK_FAILED;
    }
    queue.settle(v);
    claims.takeAnswer(v, d, result, at, now, now);
    if (givesUpPrevious) {
      v.prevClaimGivenUp();
    } else if (trims) {
      v.prevClaimTrimmed(Math.min(v.pendingPrev(), result.claim(at - 1)));
    }
    return result.taken(at) ? TAKEN : ASKED;
  }

  /** Under the view's monitor: the claim call, waited for (the decision waits with it); null: no answer. */
  private ClaimLanes.Answer send(KeyView v, List<Delta> deltas, long now) {
    long askedAt = System.nanoTime();
    v.claimCallSent(askedAt);
    ClaimLanes.Answer answer;
    v.storeCallUnderway(true);
    try {
      answer = lanes.ask(store.group(counter, v.key()), deltas, TimeUnit.NANOSECONDS.toMicros(now));
    } finally {
      v.storeCallUnderway(false);
    }
    calls.waited(askedAt);
    return answer;
  }

  /**
   * Under the view's monitor, for a claim call: a delta that trims this node's claim on the window gone
   * by (a sliding window's, which weighs in this one as it fades) to the permits the node admitted under
   * it and has not counted yet, or null where there is nothing to trim or the trim would not be safe. The
   * rest of that claim the node can no longer use, but the store counts it until the node's next flush
   * gives it up: a decision at a window's start, on a key whose previous window the node's claim had
   * nearly filled, found its own unused claim holding the permits it asked for and was denied what the
   * exact algorithm admitted (the accuracy kit's large limit, one node, seed 7118: 1,354 of a limit of
   * 10^6 held so at +0.04 ms, a request of 521 denied, and nine swaps after it, 0.167% of requests).
   * Only when none of those permits is on its way in a flush (a flush answered before this call would
   * leave the claim given up, and the trim would ask for it anew) and no take is unsettled (its permits
   * may be uncounted yet). On a window that is over, the store bounds the claim and the node's part of
   * the fading together by what the trim keeps (flush.lua; before it did, the part taken to the window's
   * end stayed whole: seed 8118, 1,594 of it held for a node with 1,301 uncounted, and a request of 998
   * at +0.17 ms denied); it is sent once a window, and the flush gives up what is left as before.
   */
  private Delta trimmedPrevious(KeyView v) {
    long uncounted = v.pendingPrev();
    if (!v.prevClaimHeld() || v.prevClaimTrimmedAlready() || uncounted <= 0 || v.unsentPrev() != uncounted
        || v.hasUnsettledTake()) {
      return null;
    }
    return new Delta(counter, v.key(), v.window() - 1, 0).claiming(uncounted, claims.sizing.claimNodes())
        .keeping(uncounted).withoutFadingPart();
  }
}
