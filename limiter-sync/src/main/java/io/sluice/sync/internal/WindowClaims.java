package io.sluice.sync.internal;

import io.sluice.sync.SyncConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import java.util.function.IntSupplier;

/**
 * What a node may admit on a window limit's key for one {@link SyncedLimiter}: beyond what the store
 * counted from it, its claim, or a share where the store keeps none; when a denial may be retried;
 * whether a claim still pays for the key's demand; and the store's answers taken into a view. How
 * much a claim asks for and how long it is kept is {@link ClaimSizing}'s, on which this builds.
 * Every method that takes a view runs under the view's monitor. Reservation mode's leases are
 * {@link WindowLeases}', and what the failure policy lets a node admit while the store is out of
 * reach is {@link WindowFallback}'s.
 *
 * <p>Concurrency: immutable settings; the volatile state is {@link ClaimSizing}'s.
 */
final class WindowClaims {
  /** How much a claim asks for and how long it is kept. */
  final ClaimSizing sizing;
  /** The node's allowances on a fixed window's keys, and the reserve its calls carry for all nodes'. */
  final Allowances allowances;
  private final IntSupplier activeNodes;
  private final StoreCalls calls;
  private final boolean claimsKept;
  private final double maxError;
  private final WindowBudget budget;
  private final boolean sliding;
  private final long syncIntervalNanos;
  private final long windowNanos;
  private final FlushQueue queue;

  WindowClaims(LimiterSetup l, SyncConfig c, FlushQueue queue) {
    this.sizing = new ClaimSizing(l, c);
    this.allowances = new Allowances(l, sizing);
    this.activeNodes = l.activeNodes;
    this.calls = l.calls;
    this.claimsKept = l.claimsKept;
    this.maxError = c.maxError();
    this.budget = l.budget;
    this.sliding = l.sliding;
    this.syncIntervalNanos = l.syncIntervalNanos;
    this.windowNanos = l.windowNanos;
    this.queue = queue;
  }

  /** Whether a decision the view cannot pay for asks the store for a claim (and waits for it). */
  boolean asksClaims() {
    return sizing.asksClaims();
  }

  /** The budget of the view's window ({@link ClaimSizing#capacity}). */
  long capacity(KeyView v) {
    return sizing.capacity(v);
  }

  /**
   * Under the view's monitor: what of the budget of the view's window a decision at {@code at} counts
   * on: the capacity, less the other nodes' allowances where this node alone admits on the key
   * ({@link ClaimSizing#keyNodes}): the store keeps them in reserve until a sync interval before the
   * window's end and grants nothing out of them, and nodes that never see the key never count them, so
   * a view that counted on them took the last permits before the limit for free and asked the store
   * for each (a sliding window's key at twice its limit, all its requests on one of three nodes: a
   * store call per request at the limit, 385 per 1,000 decisions where one node alone makes 17).
   */
  long decidingCapacity(KeyView v, long at) {
    long capacity = sizing.capacity(v);
    long reserve = allowances.reserve(v.window(), at);
    long own = allowances.perKey();
    return reserve > own && sizing.keyNodes(v) == 1 ? capacity - (reserve - own) : capacity;
  }

  /**
   * What this node may admit beyond the counts the store has from it: its claim (see the class
   * comment), or its part of the error budget before its first claim in the window.
   *
   * <p>Without claims (regional quotas, a store that keeps none), a share: near the limit the
   * remaining budget R divided by {@code 2N - 1} for N nodes, since every other node may hold a share
   * of its own that this view does not show yet (N nodes holding one such share each still fit in R);
   * far from the limit {@link ClaimSizing#untilNextAnswer}, not more, because a share granted but not yet used is
   * invisible to the other nodes. A stale or unknown view gets the cold allowance,
   * {@code limit * maxError / N}, at most a batch.
   */
  long allowance(KeyView view, double globalEstimate, boolean fresh, long at, boolean limitReached) {
    int nodes = Math.max(1, activeNodes.getAsInt());
    long batch = sizing.batchFor(view);
    long capacity = capacity(view);
    if (view.claim() >= 0) {
      // the store's claim, fresh or not: it is reserved for this node whatever the others do; with a
      // sliding window also this node's part of what the previous window freed since the claim, as
      // the store counts it (prev / window / nodes per unit of time)
      return claimHeld(view, at);
    }
    if (sizing.asksClaims()) {
      // no claim in this window yet (its first decisions, or a view the store has not answered): the
      // decision asks the store for one, or the node's allowance pays (Allowances). (Admitting a part
      // of the error budget first, as this node once did with no reserve kept for it, passed the limit
      // in synchronized bursts whenever the registry counted fewer nodes than there were, as at
      // start-up; allowances are kept in the store's reserve, and used only on a count of nodes the
      // others share.)
      return 0;
    }
    if (!fresh) {
      return Math.max(1, Math.min(batch, (long) (capacity * maxError / nodes)));
    }
    // of what was left at the last sync, a share that fits with every other node's; of what the
    // sliding window freed since, an even part (all nodes' parts together are what was freed)
    double freed = freedSinceSync(view, at);
    double exactShare = (capacity - globalEstimate - freed) / (2.0 * nodes - 1) + freed / nodes;
    // rounded up, so that the last permits of a window are not left unused; at the limit rounded
    // down, since there every node rounding up at every sync would add up to N permits a sync (the
    // weights are doubles: 1e-9 keeps 49.99999999999 from losing a permit)
    long share = (long) (limitReached ? Math.floor(exactShare + 1e-9) : Math.ceil(exactShare));
    return Math.max(0, Math.min(sizing.untilNextAnswer(view), share));
  }

  /** What the view's claim lets this node admit at {@code at} beyond its counted permits (claim >= 0). */
  long claimHeld(KeyView view, long at) {
    if (!sliding || view.claim() < 0) {
      return Math.max(0, view.claim());
    }
    long windowStart = view.window() * windowNanos;
    long from = Math.max(view.claimAt(), windowStart);
    long to = Math.min(at, windowStart + windowNanos);
    if (to <= from || view.claimNodes() < 1) {
      return view.claim();
    }
    if (view.claimNodes() == 1) {
      // alone, on the window's own grid: a permit fades at the moment the exact algorithm frees it
      // (the grant was rounded down at the claim's time, and so is the fading then: together they
      // add up to what the exact algorithm has at the decision's time, never more)
      double perNano = (double) view.globalPrev() / windowNanos;
      return view.claim() + (long) Math.floor(perNano * (to - windowStart) + 1e-9)
          - (long) Math.floor(perNano * (from - windowStart) + 1e-9);
    }
    double part = (double) view.globalPrev() * (to - from) / windowNanos / view.claimNodes();
    return view.claim() + (long) Math.floor(part + borrow(view) + 1e-9);
  }

  /**
   * What of a permit a claimant may take from its part of the fading before the part has grown by it:
   * half a permit where all claimants together (at most as many as the split) borrow within the error
   * budget with a permit to spare, else none. Without it each claimant's part holds, at any moment, the
   * fraction of a permit it has grown by beyond its last whole one, half a permit on average, which no
   * request may use; when the window moves on those fractions are lost to it (tune --simulate --profile
   * steady --nodes 8, a limit of 1,000: 0.42% of the limit short in a window on average). The permit
   * spared: claims granted near the limit may already hold up to about one permit beyond it, which the
   * unused fractions used to absorb (AccuracySweepTest, Zipf on 2 nodes at a limit of 200, batch 1,000
   * and a sync every 500 ms: 1.7 permits over with half a permit borrowed on each node).
   */
  private double borrow(KeyView view) {
    return sizing.halfPermitsFit(view, view.claimNodes(), 1) ? 0.5 : 0;
  }

  /**
   * What a flush of a window limit's view keeps of its claim (Delta#keeping), or -1 when it keeps all
   * of it. It trims when the node holds more of its claim unused than it would keep, and more than an
   * even part of what that claim leaves the other nodes, so the key is near its limit as this node sees
   * it. It keeps what the node may admit before the answer comes: four times the key's demand over a
   * store round trip or an eighth of the claim asked for, whichever is more, at least a permit; a
   * decision beyond it waits for the answer. Far from the limit a claim stays whole: the store would
   * grant it all again, and a warm key's claim that lasts its window saves store calls. (Trimming also
   * wherever the store's last answer had little free, KeyView#noneFree, cut the kit's false denials
   * further, 0.15% from 0.18% at 8 nodes, but raised them from 0.20-0.43% to 0.46-0.69% where demand
   * moved from one node to the others mid-window: the trimmed claims then went to every node evenly,
   * whatever its demand.) A sliding window is near its limit by its weighted estimate, and trims the
   * same way (its part of the fading is not trimmed): the accuracy kit's large limit at 8 nodes, costs
   * up to 2,000 of 1,000,000, had 0.62% of requests not made up in their key-window, 0.37% with it, for
   * 2% more store calls (nodes held the last permits in claims their next requests' costs did not fit).
   */
  long claimToKeep(KeyView v, long want, long now) {
    if (v.claim() < 0) {
      return -1;
    }
    long unused = v.claim() - v.pendingCur();
    long inFlight = (long) Math.ceil(v.rate() * 4 * calls.roundTripNanos() / 1e9);
    long keep = Math.max(1, Math.max(inFlight, (want + 7) / 8));
    double counted = ClaimSizing.weighted(v.globalPrev(), v.globalCur(), sizing.prevWeight(v.window(), now));
    boolean nearLimit = unused * Math.max(1, activeNodes.getAsInt()) > capacity(v) - counted - v.claim();
    return unused > keep && nearLimit ? keep : -1;
  }

  /**
   * Sliding window: the budget the previous window's count freed, as it faded, since the view was
   * last synced (or since its window began, if that is later).
   */
  double freedSinceSync(KeyView view, long at) {
    long since = Math.max(view.syncedAt(), view.window() * windowNanos);
    return sliding && at > since ? (double) view.globalPrev() * (at - since) / windowNanos : 0;
  }

  /**
   * Whether the key was at its limit at the last sync: what was left would give each node less
   * than one permit. A sync would then show no room worth its call; the view waits for the regular
   * sync, and meanwhile its allowance grows as a sliding window fades.
   */
  boolean atLimit(KeyView view, double globalEstimate, long at) {
    if (view.claim() >= 0) {
      return view.noneFree(); // the store counts the claims too: it said so
    }
    int nodes = Math.max(1, activeNodes.getAsInt());
    return capacity(view) - globalEstimate - freedSinceSync(view, at) < 2.0 * nodes - 1;
  }

  /**
   * When the global count (as last seen) will have room for cost more; where the decision counted on
   * less than the capacity ({@code deciding}, see {@link #decidingCapacity}), no later than when the
   * other nodes' allowances' reserve comes back (a client that honours Retry-After would wait past the
   * last permits of the window).
   */
  long retryAfter(KeyView v, long at, long cost, long deciding) {
    long retry = retryAfter(v, at, cost);
    return deciding < capacity(v) ? Math.min(retry, Math.max(1, allowances.reserveEnds(v.window()) - at)) : retry;
  }

  private long retryAfter(KeyView v, long at, long cost) {
    long windowStart = v.window() * windowNanos;
    long untilNext = windowStart + windowNanos - at;
    long cur = v.globalCur() + v.pendingCur();
    long prev = v.globalPrev() + v.pendingPrev();
    long free = capacity(v) - cur - cost;
    if (!sliding) {
      return untilNext;
    }
    if (free >= 0 && prev > 0) {
      long elapsedNeeded = windowNanos - (long) ((double) free * windowNanos / prev);
      return Math.max(1, windowStart + elapsedNeeded - at);
    }
    long fit = capacity(v) - cost;
    long elapsedNeeded = cur == 0 ? 0 : windowNanos - (long) ((double) fit * windowNanos / cur);
    return untilNext + Math.max(0, elapsedNeeded);
  }

  /**
   * Under the view's monitor: whether what the node may admit is held for it long enough that its
   * permits need no fresh counts and wait for a full batch: a claim (reserved for this node in the store,
   * whatever the others do) that lasts beyond two sync intervals at the key's rate, or one granted ahead,
   * in a window of the range it was granted for. On a store that keeps no claims, never.
   */
  boolean lasts(KeyView v, long now) {
    return asksClaims() && v.claim() >= 0
        && (v.window() <= v.aheadThrough() || sizing.claimHorizonNanos(v, now) > 2 * syncIntervalNanos);
  }

  /**
   * Until when (ticker time, exclusive) a credit a lasting claim pays ({@link #lasts}) may be taken
   * without the monitor on a view that is not fresh: as long as the claim lasts at the key's rate now
   * (to the window's end for a claim granted ahead, or one far below the limit), less the two sync
   * intervals below which it no longer lasts; the flusher looks again at each sync that keeps the view.
   * (What a claim pays does not depend on the counts' age, only on the claim, which only a store's answer
   * changes.)
   */
  long lastingCreditUntil(KeyView v, long now) {
    long end = (v.window() + 1) * windowNanos;
    return v.window() <= v.aheadThrough() ? end
        : Math.min(end, now + Math.max(0, sizing.claimHorizonNanos(v, now) - 2 * syncIntervalNanos));
  }

  /**
   * Under the view's monitor, at a drain: whether the view holds a claim on the current window that
   * still pays for what the key is expected to ask until the next regular sync, with nothing else to
   * send and no sync asked for, on a key not idle and still far below its limit (nearer, a claim
   * held unused would keep the last permits from the nodes that have requests for them).
   */
  boolean claimLasts(KeyView v, long now) {
    if (!asksClaims() || v.claim() < 0 || v.syncWanted() || v.unsentPrev() > 0 || v.prevClaimHeld() || v.deniedUnsent() > 0
        || v.hasUnsettledTake() || v.window() != Math.floorDiv(now, windowNanos)) {
      return false;
    }
    if (v.window() <= v.aheadThrough()
        || (v.demandAt() != Long.MIN_VALUE && sizing.keepsClaimToWindowEnd(v, now) && now - v.demandAt() <= sizing.idleAfterNanos(v, now))) {
      // a key this node holds claims ahead on (far below its limit when they were granted), or a
      // fixed window's key far below its limit, in its window's last sync intervals too: its claim
      // stays, idle or not, and so do the permits it paid for (the store counts the claim; they go
      // once the window is over, one flush, not one per sync), while it covers what the key should
      // ask before the next sync (a key asked less often than that asks the store when its claim runs
      // out, rather than a flush at every sync on the chance); one the key has warmed past is
      // refilled by the regular sync, as any claim, instead of each decision asking (the accuracy
      // kit's shapes profile, store calls per 1,000 decisions and false denials, claims ahead kept
      // whatever they cover / refilled once short: 3 nodes 129 and 0.019% / 92 and 0.083%; 8 nodes
      // 186 and 0.149% / 174 and 0.112%)
      return claimHeld(v, now) - v.pendingCur() >= sizing.expectedUntilSync(v);
    }
    if (v.demandAt() == Long.MIN_VALUE
        || now - v.demandAt() > sizing.idleAfterNanos(v, now) || sizing.claimHorizonNanos(v, now) <= 2 * syncIntervalNanos) {
      return false;
    }
    return claimHeld(v, now) - v.pendingCur() >= Math.max(1, sizing.expectedUntilSync(v));
  }

  /**
   * Under the view's monitor, once a view's window is over: whether it is done with that window, a
   * fixed window's view with nothing left to send or on its way. Its claim weighs nowhere now, and
   * is left without a flush to give it up (a key read and write per key, node and window, most of a
   * warm key's store traffic). Permits it has not sent still go, as the window before's
   * (DESIGN: every admitted hit reaches the store exactly once). Taking those as counted in the
   * claim that covered them, tried in the round before, saved a key read and write more (Zipf over
   * 1,000 keys, 4 nodes, Redis: 2,318 against 1,944 commands per 1,000 decisions) but left them out
   * of the store's count for good: ChaosIT's ledger, a one-hour window, lost 167-300 hits when its
   * run crossed the hour.
   */
  boolean windowDone(KeyView v) {
    if (sliding || !asksClaims() || v.unsentCur() != 0 || v.pendingCur() != 0 || v.hasUnsettledTake() || v.deniedUnsent() != 0) {
      return false;
    }
    v.claimGone();
    return true;
  }

  /**
   * Sliding window, under the view's monitor: the ticker time from which the previous window will have
   * faded enough, by the view's counts, for {@code need} more permits to fit (the other nodes' claims
   * and parts are not in those counts: the store may still have less); {@code Long.MAX_VALUE} when
   * the current window's count alone leaves no room for it.
   */
  long fadedEnoughAt(KeyView v, long need, long now) {
    double room = capacity(v) - v.globalCur() - need;
    if (room < 0) {
      return Long.MAX_VALUE;
    }
    if (v.globalPrev() <= room) {
      return now;
    }
    long windowEnd = (v.window() + 1) * windowNanos;
    return windowEnd - (long) (windowNanos * room / v.globalPrev());
  }

  /**
   * Under the view's monitor: an answer to a flush sent before the view's last claim call and answered
   * after it. A claim call with a take leaves a smaller claim than the flush before it did, so the
   * later-arriving answer must not raise the claim back: the view keeps the smaller claim, the smaller
   * part of the fading and the larger counts (under-use at worst, never over-admission).
   */
  void mergeOlderAnswer(KeyView v, FlushResult result, int i) {
    v.countsAtLeast(result.current(i), result.previous(i));
    if (claimsKept && result.claim(i) >= 0 && v.claim() >= 0) {
      v.claimAtMost(result.claim(i), result.split(i));
    }
  }

  /**
   * Under the view's monitor: the store's answer to delta i of a flush (or claim-only call) on the
   * view's current window, asked at ticker time {@code askedAt}: fresh counts, the claim, the share.
   */
  void takeAnswer(KeyView v, Delta delta, FlushResult result, int i, long now, long askedAt) {
    v.countsAnswered(result.current(i), result.previous(i), now);
    // (a store that keeps claims answers one for every window delta: the store contracts check it)
    if (claimsKept && result.claim(i) >= 0) {
      // a take's amount is not permits the node reports; a take counted came out of the grant
      boolean take = delta.token() > 0 && delta.settle() == 0;
      long granted = result.claim(i) + (result.taken(i) ? delta.amount() : 0);
      long committed = Math.max(0, claimHeld(v, askedAt) - (take ? 0 : delta.amount()));
      // little was free (less than an eighth of what was asked): a sync would not bring more
      // worth its call before the regular one (see atLimit)
      v.noneFree(delta.want() > committed && granted - committed < Math.max(1, delta.want() / 8));
      noteAsked(v, delta.need(), granted, now);
      // 0: no part of a sliding window's fading. Nor is a part of a window before that counted
      // nothing: it is a part of nothing, and to give it up was a flush after each request the store
      // denied on a key at its limit (a limit of 1 a minute: two store calls per decision)
      v.claimAnswered(result.claim(i), result.previous(i) == 0 ? 0 : result.split(i));
      // (a sliding window's part of the fading starts when the store says: later than the claim where
      // the previous window has not faded by what is left of the allowances' reserve yet, see
      // Delta#partStartMicros)
      long partFrom = result.fadingPartFrom(i);
      v.claimAt(sliding && partFrom > 0 ? Math.max(askedAt, v.window() * windowNanos + 1_000 * partFrom)
          : askedAt);
      if (delta.aheadWindows() > 0 && result.ahead(i) > 0) {
        v.claimedAhead(result.ahead(i), delta.window() + delta.aheadWindows());
      }
      if (v.claim() > 0 || v.claimNodes() > 0) {
        // a claim held (or a sliding window's part of the fading, held even with a claim of 0, as
        // after a take) blocks the other nodes: the next regular sync gives it up if the key goes idle
        queue.enqueue(v);
      }
    }
    budget.answered(v, result, i);
  }

  /**
   * Under the view's monitor: a decision's ask for {@code need} permits answered with {@code granted}.
   * Where the store had less than the decision needed, decisions the claim cannot pay are denied
   * without asking again for a sync interval or more (a flush's answer says nothing of it: claims
   * ahead of demand take only half of what is free, so a grant of none does not mean none is free).
   */
  private void noteAsked(KeyView v, long need, long granted, long now) {
    if (need > 0 && granted < need) {
      // (twice as long after each such answer in a row, up to eight sync intervals: a key at its
      // limit whose last permits other nodes hold costs a few store calls a window, not ten a second)
      // (a sliding window frees budget continuously as the previous one fades: no doubling there,
      // or a back-off begun at a window's start outlived the fading and denied a key at 1 of 37)
      long until = now + (sliding ? slidingBackoff(v, need, now) : syncIntervalNanos << Math.min(3, v.fruitlessAsks()));
      // (a small limit's sliding window frees a permit or two a sync interval: a back-off of a
      // whole interval denied what the exact algorithm admitted as the fading freed it, requests
      // not made up in their window. There the node asks again as soon as the fading has freed
      // what it needed by this answer's counts: at most two calls more a sync interval, or per
      // QUICK_ASK_SPAN where sync intervals are longer: a limit of 10 a second synced every 500 ms
      // frees five a sync interval, and waiting for them left 0.48% of requests on 2 nodes denied
      // and not made up, 0.17% now, AccuracySweepTest's batch 1,000 and sync 500 ms; spread rates on
      // 2 nodes there 0.144% -> 0.019%, for 3-6% more store calls)
      // (and a node that counts itself alone, or is alone on the key (ClaimSizing#keyNodes): what the store
      // has free is what this answer's counts leave,
      // as the fading frees it, so the node asks again once that covers the need. Waiting for the fading
      // to free the whole need, as if nothing had been free at the ask, denied what the exact algorithm
      // admitted: the accuracy kit on a seed it does not run, large limit, one node before the registry
      // confirmed it alone, seed 16118: a request of 1,900 at +2.2 ms of a window denied with 2,164 free,
      // and 70 swapped requests after it, 1.167% of requests)
      // (only where the window before counted something: with nothing fading, the room this answer's
      // counts leave is what other nodes' claims or the allowances' reserve hold, and the node asked
      // again at every request, each fruitless, to the window's end:
      // SlidingBackoffTest.withNothingFadingANodeAtTheLimitDoesNotAskAgainAtOnce. Skipping the quick ask
      // wherever the counts alone leave room for the need, whatever faded, tried too: 9 of the kit's 560
      // runs made 0.1-0.4% fewer calls, 6 left a little more not made up)
      if (sliding && v.globalPrev() > 0
          && ((double) v.globalPrev() * Math.min(syncIntervalNanos, QUICK_ASK_SPAN_NANOS) / windowNanos <= 2
          || sizing.keyNodes(v) < 2)) {
        until = Math.min(until, fadedEnoughAt(v, need, now));
      }
      // (nor past the moment what is left of the allowances' reserve comes back: a key whose requests
      // all reach this node finds the other nodes' unused allowances there)
      if (allowances.reserve(v.window(), now) > 0) {
        until = Math.min(until, allowances.reserveEnds(v.window()));
      }
      v.nothingFreeFor(need, until);
    } else if (need > 0) {
      v.askFruitful();
    }
  }

  /**
   * The demand, in times its limit over all nodes, up to which a sliding window's key asks again as
   * soon as the fading has freed a decision's need (see {@link #slidingBackoff}).
   */
  static final double QUICK_ASK_DEMAND = 1.75;

  /**
   * The span over which a sliding window whose previous count frees at most two permits asks again as
   * the fading frees a decision's need (see {@link #noteAsked}): a sync interval, at most the default
   * one, 100 ms.
   */
  static final long QUICK_ASK_SPAN_NANOS = 100_000_000L;

  /**
   * Under the view's monitor: how long a sliding window's node denies without asking after the store had
   * less free than a decision needed: the time the fading takes to free that need (at most a sync
   * interval) on a key asked at most {@link #QUICK_ASK_DEMAND} times its limit over all nodes, and on
   * any key in its window's last two sync intervals, and by a node that holds no part of the fading until
   * the registry confirms it alone (ClaimSizing#partWithheldUntilConfirmed: nothing fades to it between
   * asks; a lone node's first second, on a key at twice its limit from a full window before, denied
   * 48 requests in a row that the exact algorithm admitted, 0.47% of the accuracy kit's shapes on one
   * node); a sync interval otherwise. Budget fades free
   * continuously; where the key's demand is about what fades, a node that waits a sync interval leaves
   * what fades meanwhile unused unless another node asks for it, and with every node of the key
   * waiting, what is not taken before the window ends is lost to that window: requests the exact
   * algorithm admitted and the nodes denied and never made up. A key asked well above its limit has
   * more requests than fade: a permit left by a waiting node goes to another node's request, or to this
   * node's next ask, within the window. Measured with {@code tune --simulate}, 4 nodes, batch 100
   * (requests denied and not made up; store calls per 1,000 decisions):
   * <ul>
   *   <li>tune's default (mixed rates, sliding): 0.709%, 516 calls with a sync interval everywhere;
   *       0.310%, 542 with the window's last two intervals alone; with claims that hold no few permits of
   *       the fading ({@link ClaimSizing#fadingPartTooSmall}) 0.102%, 621; adding keys at most 1.75
   *       times their limit 0.029%, 641 (the worst key-window 7 -> 3 permits short); 2 times, 0.026%,
   *       647; every key all window long, 0.023%, 709;</li>
   *   <li>one key at twice its limit ({@code --profile steady}): 0.175%, 100 calls before any of this;
   *       0.137%, 139 at 1.75 times; 0.143%, 224 at 2 times, where the key's measured demand straddles
   *       the line.</li>
   * </ul>
   */
  private long slidingBackoff(KeyView v, long need, long now) {
    long untilWindowEnd = (v.window() + 1) * windowNanos - now;
    if (v.globalPrev() <= 0 || (untilWindowEnd > 2 * syncIntervalNanos && !sizing.demandAtMost(v, now, QUICK_ASK_DEMAND)
        && !sizing.partWithheldUntilConfirmed())) {
      return syncIntervalNanos;
    }
    return Math.max(1, Math.min(syncIntervalNanos, (long) ((double) windowNanos * need / v.globalPrev())));
  }
}
