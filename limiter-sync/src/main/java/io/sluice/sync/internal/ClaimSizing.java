package io.sluice.sync.internal;

import io.sluice.node.Limit;
import io.sluice.sync.SyncConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.Delta;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

/**
 * How much a node asks the store for on a window limit's key, and for how long it keeps it, for one
 * {@link SyncedLimiter}: the key's demand on this node and over all nodes, the horizon a claim is
 * sized for, the claims ahead on the windows after it, when a claim goes idle, the nodes a claim is
 * split between, and the window's budget. Pure arithmetic over a view's fields and the limiter's
 * settings; what the node may admit and how answers are taken in is {@link WindowClaims}', which
 * builds on this. Every method that takes a view runs under the view's monitor.
 *
 * <p>Concurrency: immutable settings, and one volatile, {@code flushCycleNanos} (the flusher's).
 */
final class ClaimSizing {
  private final IntSupplier activeNodes;
  private final BooleanSupplier nodeCountConfirmed;
  /** Whether the registry's count is current (LimiterSetup#countCurrent). */
  private final BooleanSupplier countCurrent;
  private final long batchSize;
  private final StoreCalls calls;
  private final boolean claimsKept;
  private final WindowBudget budget;
  private final long hotBatchMultiplier;
  private final Limit limit;
  private final double maxError;
  private final boolean sliding;
  private final long syncIntervalNanos;
  private final long windowNanos;
  /**
   * Time between the starts of consecutive syncs while the flusher is busy (a sync asked for at
   * once), nanoseconds: a running mean that jumps up to any slower cycle, the flusher's. With the
   * round trip, how long a permit waits for its acknowledgement.
   */
  volatile long flushCycleNanos;

  /** The claims a fixed window's key asks for on the windows after its own. */
  final ClaimsAhead ahead;

  ClaimSizing(LimiterSetup l, SyncConfig c) {
    this.activeNodes = l.activeNodes;
    this.nodeCountConfirmed = l.nodeCountConfirmed;
    this.countCurrent = l.countCurrent;
    this.batchSize = l.batchSize;
    this.calls = l.calls;
    this.claimsKept = l.claimsKept;
    this.budget = l.budget;
    this.hotBatchMultiplier = c.hotBatchMultiplier();
    this.limit = l.limit;
    this.maxError = c.maxError();
    this.sliding = l.sliding;
    this.syncIntervalNanos = l.syncIntervalNanos;
    this.windowNanos = l.windowNanos;
    this.ahead = new ClaimsAhead(this, sliding, syncIntervalNanos, windowNanos);
  }

  /**
   * Whether a decision the view cannot pay for asks the store for a claim (and waits for it): window
   * limits of ordinary limits on a store that keeps claims ({@code CounterStore#keepsClaims}).
   */
  boolean asksClaims() {
    return claimsKept;
  }

  /** The nodes a claim is split between: as the registry counts them (1 before it answers). */
  int claimNodes() {
    return Math.min(Delta.MAX_NODES, Math.max(1, activeNodes.getAsInt()));
  }

  /**
   * Under the view's monitor: the nodes that share the key's budget as the store's counts show them:
   * the registry's count ({@link #claimNodes}), or 1 where this node alone admits on the key: the
   * store's counts of the view's window and of the one before hold this node's permits and no other
   * node's (a key whose requests all reach this node: a load balancer's session affinity, keys hashed
   * to instances). Taken for N such a key is asked at N times this node's rate, and each claim held an
   * N-th of what is free: with three nodes and each key's requests on one of them, a sliding window's
   * key near its limit backed off a whole sync interval at each window's start, and was denied what
   * the exact algorithm admitted there (the accuracy kit's sparse keys, 0.58% of requests not made up
   * in their window, where one node has none). Should another node admit on the key, the counts show
   * it at this node's next answer, and the claims it holds meanwhile are within what was free.
   */
  int keyNodes(KeyView v) {
    int nodes = claimNodes();
    if (nodes < 2 || v.syncedAt() == Long.MIN_VALUE) {
      return nodes;
    }
    // (this node's permits the store has acknowledged: its own admissions less those pending, the unsent included)
    long ownCounted = v.ownCur() - v.pendingCur();
    long ownPrevCounted = v.ownPrev() - v.pendingPrev();
    // (and enough of them in the window before that several nodes taking turns would have shown: keys
    // whose requests go to any node, first seen on one, otherwise held all of what claims may take
    // ahead of demand there while the others' requests found less)
    // Counted in requests, at the key's mean cost: one request of 54 permits is no sign that no other
    // node asks (WindowProbe seed 902654: a sliding window of 100 a second on 3 nodes, a node whose one
    // request of 54 was the window before's whole count took itself for the key's only node, and its
    // denied request of 78 left it a claim of all 55 that was free; another node's request of 8, which
    // the exact algorithm admits at 39 of 100, was denied)
    boolean alone = v.lastWindowTotal() >= 0 && ownPrevCounted >= 2L * nodes * Math.max(1, v.meanCost())
        && v.globalCur() <= ownCounted && v.globalPrev() <= ownPrevCounted;
    return alone ? 1 : nodes;
  }

  /**
   * Under the view's monitor: the nodes a claim of the view is split between, as the store takes it for
   * a sliding window's fading (each claimant holds 1 / split of the budget the previous window frees)
   * and for what it grants ahead of demand. The nodes the registry counts, or more for a node whose
   * demand for the key is below its even part of the fading: a claimant's part that outgrows its
   * requests is budget no other node can use, and where a load balancer sends most requests to a few
   * nodes the quiet ones held most of the fading (tune --simulate --node-skew 1, sliding window at twice
   * its limit: 13.9% under-admitted in the worst window at 16 nodes, none on fixed windows). Split by
   * its demand instead, a quiet node holds about what it uses, and the rest stays with the store, where
   * the busy nodes' claims and takes find it. Never fewer than the registry's count: a busy node's part
   * stays its even one, since the parts of several busy nodes, each sized to its own demand, would pass
   * the whole and leave the last claimants none. Only for a key that has used half its limit as the
   * store last counted it: below that, budget is plentiful and the split sizes what is granted ahead of
   * demand, where an even split saves the quiet nodes store calls (sparse keys on 3 nodes: 12% more
   * calls split by demand, with false denials the same). A node alone on the key ({@link #keyNodes})
   * splits by 1.
   */
  int claimSplit(KeyView v, long now) {
    int nodes = keyNodes(v);
    if (!sliding || nodes < 2 || !(v.rate() > 0) || v.globalPrev() <= 0
        || weighted(v.globalPrev(), v.globalCur(), prevWeight(v.window(), now)) < capacity(v) / 2.0) {
      return nodes;
    }
    double fadingPerSecond = v.globalPrev() * 1e9 / windowNanos;
    double byDemand = Math.ceil(fadingPerSecond / v.rate() - 1e-9);
    return (int) Math.max(nodes, Math.min(Delta.MAX_NODES, byDemand));
  }

  /**
   * Under the view's monitor: whether a claim on a sliding window holds no part of the fading ({@link
   * Delta#withoutFadingPart}), and a decision's claim call asks for no more than it needs: with other
   * nodes, on a key that has used half its limit or more, where this node's part of what the previous
   * window frees over two sync intervals is under {@link #MIN_FADING_PART} permits, or where half a permit
   * per node, what each claimant strands when the window moves on, would pass the error budget; and
   * for a node that counts itself alone before the registry has confirmed it ({@link
   * #aloneUnconfirmed}). So few permits held
   * by one node are denied to the other nodes' requests as they free up, where the exact algorithm
   * admits whichever request comes first; left with the store, the next decision's take finds them.
   * (Accuracy kit, sliding windows, approximate mode: requests denied and not made up, spread rates
   * 0.59% -> 0.22% on 3 nodes and 0.54% -> 0.30% on 8, Zipf over 1,000 keys on 8 nodes 0.49% -> 0.32%,
   * sparse keys on 3 nodes 0.25% -> 0.15%; store calls -5% to +27%, the most on sparse keys at 3 nodes;
   * 4 permits gave most of it, 16 no more on these profiles.) Asking for no more than the need kept
   * only a take that was counted from holding a part: one that found too little free, the common case
   * at the limit, and every regular sync's claim still took a part, and most of those parts went unused
   * before the window ended. Asked without a part as well (2026-12-04): spread rates on 3 nodes 0.22% ->
   * 0.007% (and swapped requests 5.4% -> 0.1%), on 8 nodes 0.30% -> 0.04%, Zipf over 1,000 keys on 8
   * nodes 0.21% -> 0.02%, tune's default simulated 0.310% -> 0.102%, for 542 -> 621 store calls per
   * 1,000 decisions there. The same reasoning as a bucket's refill ({@code TokenClaimSizing.MIN_REFILL_PART}).
   * Its price: a key between half its limit and the limit makes a store call at nearly every request (the
   * kit's sparse keys, sliding, 3 nodes: 26,823 of 36,538 asks, from the keys at 60-100 a second of 100).
   * Tried 2026-12-07 and not kept, the kit's 560 runs: from three quarters of the limit instead of half,
   * sparse keys at 3 nodes 575 -> 515 store calls per 1,000 decisions, but spread rates at 3 / 8 nodes
   * not made up 0.001% -> 0.040% / 0.033% -> 0.103%; a claim ahead of demand kept with no part, 575 -> 521,
   * shapes at 8 nodes 0.064% -> 0.109%.
   */
  boolean fadingPartTooSmall(KeyView v, long now) {
    int nodes = claimNodes();
    if (!sliding || v.globalPrev() <= 0
        || weighted(v.globalPrev(), v.globalCur(), prevWeight(v.window(), now)) < capacity(v) / 2.0) {
      return false;
    }
    if (nodes < 2) {
      return aloneUnconfirmed();
    }
    double part = (double) v.globalPrev() * 2 * syncIntervalNanos / windowNanos / claimSplit(v, now);
    // (and not where what the claimants strand adds up past the error budget: when the window moves on, each
    // leaves the fraction of a permit its part had grown by, half a permit on average (about a request's cost
    // where requests cost more: strandFits), which no other node can use; 16 nodes at a limit of 1,000 lost
    // 1% of it in every window, tune --simulate --profile steady --nodes 16: worst under-admission 1.3% -> 0,
    // false denials 0.388% -> 0, store calls 435 -> 540 per 1,000; the accuracy kit's shapes on 8 nodes,
    // limit 500: requests not made up 0.318% -> 0.018%, store calls 372 -> 468; a quarter of the budget
    // halved shapes on 3 nodes for 2.8 times its store calls)
    return part < MIN_FADING_PART || !strandFits(v, keyNodes(v));
  }

  /**
   * Whether what {@code claimants} strand when the window moves on fits the key's error budget ({@code
   * limit * maxError}; {@link #fadingPartTooSmall}): each the part of its part no request of its used,
   * half a permit on average where requests cost 1, and about a request's cost where they cost more (a
   * part grown to less than the next request's cost pays for none of it). Counted as half a permit per
   * claimant, a large limit at costs up to 2,000 on 8 nodes left 0.37-0.50% of its requests denied and
   * not made up in their window on four sets of the accuracy kit's seeds, 0.07-0.08% now, for 8% more
   * store calls.
   */
  boolean strandFits(KeyView v, int claimants) {
    return claimants * Math.max(0.5, v.meanCost() - 0.5) <= capacity(v) * maxError;
  }

  /**
   * Whether half a permit per claimant, and {@code spare} permits more, fit the key's error budget
   * ({@code limit * maxError}): what the claimants of a sliding window's fading strand at the window's
   * end where requests cost 1 ({@link #strandFits}), and what they may borrow of their parts
   * (WindowClaims#borrow: a permit spare).
   */
  boolean halfPermitsFit(KeyView v, int claimants, double spare) {
    return claimants * 0.5 + spare <= capacity(v) * maxError;
  }

  /**
   * For a node that counts itself alone: whether only the registry's first answer says so. Nodes
   * started together beat one after the other, and the first counts itself alone until its next beat
   * (two sync intervals later, NodeBeat#beatDueNanos; a second later until 2026-12-07), or longer where
   * that beat finds the store down.
   * Split by that one node, its claim on a sliding window held all of the fading, which its requests
   * did not need, and the store denied every other node's until the claim went idle (tune --simulate
   * --profile steady --nodes 256 --seed 1: the second window 16.8% of the limit short, 2.04% of requests
   * denied against the exact algorithm; {@code UnheardNodeClaimTest}). Until its count is confirmed it
   * holds no part of the fading of a key at half its limit or more ({@link #fadingPartTooSmall}: its
   * decisions take what fades from the store, as the other nodes' do); confirmed alone, it holds all of
   * it. (Holding a part where its demand, split against what the limit frees, would be worth one: the
   * demand the flusher last measured can be the key's rate of a burst gone by, and it then held all of it.)
   */
  private boolean aloneUnconfirmed() {
    return !nodeCountConfirmed.getAsBoolean();
  }

  /**
   * Whether this node's claims on a sliding window hold no part of the fading because it counts itself
   * alone and the registry has not confirmed it yet ({@link #aloneUnconfirmed}): its asks alone take
   * what fades, so one that found too little free asks again as the fading frees its need
   * (WindowClaims#slidingBackoff).
   */
  boolean partWithheldUntilConfirmed() {
    return sliding && claimNodes() < 2 && aloneUnconfirmed();
  }

  /**
   * Under the view's monitor: {@code plain} asking for a claim of {@code want} permits, at least
   * {@code need} of them where that much is free, split as {@link #claimSplit} says, with claims ahead
   * where they are due ({@link ClaimsAhead#withClaimsAhead}) and, where {@code noPart} ({@link
   * #fadingPartTooSmall}, which the caller has already asked), no part of a sliding window's fading.
   * The claim of a decision's claim call and of a regular sync alike.
   */
  Delta claimDelta(Delta plain, long want, long need, boolean noPart, KeyView v, long now) {
    int split = claimSplit(v, now);
    if (need > 0 && split < 2 && sliding && alonePerhapsNot()
        && (v.syncedAt() == Long.MIN_VALUE || mayNotFitBelowHalf(v, need, now))) {
      // the store grants a node alone on a sliding window all that is free where less than its need
      // is (the fading frees the rest for it), and a part of all the fading. A node that counts itself
      // alone on a count it cannot vouch for asks as one of two where the key is new to it or its
      // request may not fit below half the limit: a denied request of the whole limit had left it a
      // claim of all that was free, or its part held what faded for the rest of the window, and the
      // other nodes' requests were denied far below the limit (WindowProbe seeds 930408, 930454 and
      // 932024 at start-up; 940850, a key new to the node; 942793, a count 40 minutes old). Not at half
      // the limit or more of a key it knows, where the others' requests meet the limit anyway: the
      // accuracy kit's figures stay the same to the decision.
      split = 2;
    }
    Delta d = ahead.withClaimsAhead(plain.claiming(want, need, split), v, now);
    return noPart && d.want() > 0 ? d.withoutFadingPart() : d;
  }

  /**
   * Whether this node counts itself alone on a count it cannot vouch for: the registry's first answer
   * (see {@link #aloneUnconfirmed}), or one more than two beat intervals old (a quiet node's beats ride
   * on flushes it does not make, and nodes started since are not in it).
   */
  private boolean alonePerhapsNot() {
    return claimNodes() < 2 && (aloneUnconfirmed() || !countCurrent.getAsBoolean());
  }

  /** Whether the key is below half its limit as the view shows it, and {@code need} more than half of what is free there. */
  private boolean mayNotFitBelowHalf(KeyView v, long need, long now) {
    double used = weighted(v.globalPrev(), v.globalCur(), prevWeight(v.window(), now));
    return used < capacity(v) / 2.0 && 2 * need > capacity(v) - used;
  }

  /** The fewest permits of a sliding window's fading, over two sync intervals, a decision's claim holds. */
  static final long MIN_FADING_PART = 8;

  /**
   * Under the view's monitor, for a decision that asks the store: what to ask for beyond what the
   * request needs, at most {@code cap}. What the key is likely to ask before the next regular sync; a
   * key asking again within a sync interval doubles what it asked beyond last time (a burst, a key
   * warming up).
   */
  long aheadOfDemand(KeyView v, long now, long cap) {
    return v.claimAheadOfDemand(now, cap, syncIntervalNanos, expectedDemand(v, now));
  }

  /**
   * Under the view's monitor: the key's demand on this node, permits a second. The flusher measures it
   * at each sync of the key ({@code v.rate()}); a key whose every decision asked the store (a take: a claim
   * that counts the decision's permit) has nothing to sync, so the flusher never measured it, and a claim
   * sized by a rate of 0 covered nothing ahead: every decision of a key asked a few times a second stayed
   * a store call, minute after minute (1,000 store calls per 1,000 decisions on 50 keys at 4 a second
   * under a limit of 1,000 a minute; the RLS server beside envoyproxy/ratelimit on 1,000 descriptors: one
   * script per decision). Until the flusher has measured it: its requests since its first over the time
   * since, once that spans a sync interval.
   */
  double demandRate(KeyView v, long now) {
    // (claims only: reservation mode's leases sized by it held permits the other nodes' requests then
    // missed, up to 1% of requests more denied in the accuracy kit's small-limit and shapes profiles)
    return asksClaims() ? askedRate(v, now) : v.rate();
  }

  /**
   * Under the view's monitor: the permits a second the key asked for on this node, as the flusher
   * measured it, or, where it has not, its requests since its first over the time since, once that
   * spans a sync interval; 0 when unknown. (Reservation mode caps a sliding window's grants by it near
   * the window's end, where the flusher rarely measures a key: a lease pays for the admissions.)
   */
  double askedRate(KeyView v, long now) {
    if (v.rate() > 0 || v.rateSince() == Long.MIN_VALUE || v.hits() <= 0) {
      return v.rate();
    }
    long elapsed = now - v.rateSince();
    return elapsed >= syncIntervalNanos ? v.hits() * 1e9 / elapsed : 0;
  }

  /**
   * What the key is expected to ask for until the next regular sync (its demand rate over two sync
   * intervals); 0 for a key asked less than about once a sync interval: a claim it would hold
   * unused blocks the other nodes, and its next request asks the store anyway.
   */
  long expectedUntilSync(KeyView v) {
    double expected = v.rate() * 2 * syncIntervalNanos / 1e9;
    return expected < 1 ? 0 : (long) Math.ceil(expected);
  }

  /**
   * The weight of the previous window's count at {@code at} in {@code window}: a sliding window's part
   * of the previous window still in the window that ends at {@code at} (1 at the window's start, 0 at
   * its end), 0 for a fixed window.
   */
  double prevWeight(long window, long at) {
    return sliding ? (double) ((window + 1) * windowNanos - at) / windowNanos : 0;
  }

  /** A window's count as a sliding window weighs it: the previous window's at {@code prevWeight}, and the current. */
  static double weighted(long prev, long cur, double prevWeight) {
    return prev * prevWeight + cur;
  }

  /**
   * Under the view's monitor: what a claim is sized for, the key's demand over its horizon (0 below
   * one permit): two sync intervals near the limit, for a key far below its limit the rest of its
   * window, between them the time the key takes to spend an eighth of what is free ({@link
   * #claimHorizonNanos}). A
   * key is far below its limit when what the store counted, this node's pending permits and every
   * node asking at this node's rate until the window's end stay within half of the limit: there
   * the store grants claims ahead of demand anyway (half of what is free), and a claim that lasts
   * the window saves a store call per request or per sync interval on a key asked a few times a
   * second.
   */
  long expectedDemand(KeyView v, long now) {
    long horizon = claimHorizonNanos(v, now);
    double rate = demandRate(v, now);
    if (horizon > 2 * syncIntervalNanos) {
      // the rest of the window: at least the rate of this node's whole window before, which the
      // rate measured over the last sync intervals (a few requests at most) swings far below
      rate = Math.max(rate, v.ownPrev() * 1e9 / windowNanos);
    }
    double expected = rate * horizon / 1e9;
    return expected < 1 ? 0 : (long) Math.ceil(expected);
  }

  /**
   * Under the view's monitor: the key's rate over all nodes, permits a second, from this node's
   * ({@code ownRate}) times the nodes that share the key ({@link #keyNodes}), what the store counted so far in the window, or the window
   * before's count where the view saw it, whichever is most (the registry may count fewer nodes than
   * there are).
   */
  double keyRate(KeyView v, long now, double ownRate) {
    double elapsedSeconds = Math.max(now - v.window() * windowNanos, syncIntervalNanos) / 1e9;
    double rate = Math.max(ownRate * keyNodes(v), v.globalCur() / elapsedSeconds);
    return v.lastWindowTotal() >= 0 ? Math.max(rate, v.lastWindowTotal() * 1e9 / windowNanos) : rate;
  }

  /**
   * Under the view's monitor: whether the key's demand over all nodes (this node's times the nodes, or
   * what the store counted, whichever is more; see {@link #keyRate}) is at most {@code times} its limit a
   * window.
   */
  boolean demandAtMost(KeyView v, long now, double times) {
    return keyRate(v, now, demandRate(v, now)) * windowNanos / 1e9 <= times * capacity(v);
  }

  long claimHorizonNanos(KeyView v, long now) {
    long near = 2 * syncIntervalNanos;
    long windowStart = v.window() * windowNanos;
    long rest = windowStart + windowNanos - now;
    if (!asksClaims() || rest <= near) {
      return near;
    }
    double ownRate = demandRate(v, now);
    double rate = keyRate(v, now, ownRate);
    double weighs = weighsNow(v, now);
    if (farBelowLimit(v, ownRate, rate, weighs, rest)) {
      return rest;
    }
    // between far below and near: the time the key, at its rate over all nodes, takes to spend an
    // eighth of what is free (the nodes sized so hold an eighth of it together). Two sync intervals
    // there made a key at half a sliding window's limit per minute ask the store at nearly every
    // decision, minute after minute (ColdKeyClaimTest: 960 store calls per 1,000 decisions, now 6);
    // a quarter held too much near the limit (the accuracy kit's shapes profile, fixed windows, 8
    // nodes: false denials 0.196% -> 0.224%; 0.168% with an eighth)
    double free = capacity(v) - weighs;
    if (!(rate > 0) || free <= 0) {
      return near;
    }
    return Math.max(near, Math.min(rest, (long) (free / (8 * rate) * 1e9)));
  }

  /**
   * Under the view's monitor: whether the view keeps its claim to its window's end, idle or not: a
   * fixed window's key far below its limit, where the claim blocks nobody and ends with its window
   * at no cost (a sliding window's claimant holds a part of the fading that weighs in the next window
   * until a flush gives it up: kept claims there cost more Redis commands than they saved, 3,195 ->
   * 3,429 per 1,000 decisions on Zipf over 1,000 keys).
   */
  boolean keepsClaimToWindowEnd(KeyView v, long now) {
    return asksClaims() && !sliding && farBelowLimit(v, now);
  }

  /**
   * Under the view's monitor: whether the key stays within half its limit to its window's end, as
   * far as this view can tell: what the store counted, this node's pending permits and every node
   * asking at this node's rate until then, judged for a key the view saw through the window before,
   * or one new to this node whose rate it has measured (its requests over a sync interval or more:
   * a first request's rate is a guess). Without the second, every key of a long window was sized for
   * two sync intervals until the window after its first: a key asked once a second under a limit per
   * minute gave its claim up between requests and every request asked the store.
   */
  boolean farBelowLimit(KeyView v, long now) {
    double ownRate = demandRate(v, now);
    long rest = Math.max(0, v.window() * windowNanos + windowNanos - now);
    return farBelowLimit(v, ownRate, keyRate(v, now, ownRate), weighsNow(v, now), rest);
  }

  /**
   * {@link #farBelowLimit(KeyView, long)} from its parts: this node's rate, the key's over all nodes,
   * what the key weighs now ({@link #weighsNow}) and the nanoseconds left in its window.
   */
  private boolean farBelowLimit(KeyView v, double ownRate, double rate, double weighs, long rest) {
    if (v.lastWindowTotal() < 0 && !(ownRate > 0)) {
      return false;
    }
    return weighs + rate * rest / 1e9 <= capacity(v) / 2.0;
  }

  /**
   * Under the view's monitor: what the key weighs now as this view sees it: what the store counted
   * and this node's pending permits, a sliding window's previous window at its weight.
   */
  private double weighsNow(KeyView v, long now) {
    double prevWeight = prevWeight(v.window(), now);
    return weighted(v.globalPrev(), v.globalCur(), prevWeight) + v.pendingCur() + v.pendingPrev() * prevWeight;
  }

  /**
   * Under the view's monitor: how long a key holding a claim may go without a request before the
   * next regular sync gives the claim up: a sync interval, or for a key sized for the rest of its
   * window twice its mean gap between requests (within that window).
   */
  long idleAfterNanos(KeyView v, long now) {
    if (keepsClaimToWindowEnd(v, now)) {
      // a claim on a key far below its limit blocks nobody: it is kept through the window, however
      // long the key's gaps (twice a mean gap measured over a few sync intervals gave claims up
      // between requests of a key asked every 200 ms, and its next request asked the store)
      return windowNanos;
    }
    long horizon = claimHorizonNanos(v, now);
    if (horizon <= 2 * syncIntervalNanos || v.rate() <= 0) {
      return syncIntervalNanos;
    }
    // (the rate counts permits: over the mean cost, a rate of requests. Read as one, a key asked
    // every 250 ms at costs near 1,000 was idle after a sync interval, and each request on it made a
    // store call to take and another to give its claim up)
    return Math.max(syncIntervalNanos, Math.min(horizon, (long) (2e9 * Math.max(1, v.meanCost()) / v.rate())));
  }

  /** The batch size of a key: larger for a hot key, so that it reaches the store less often. */
  long batchFor(KeyView view) {
    return view.hot() ? batchSize * hotBatchMultiplier : batchSize;
  }

  /**
   * What the node would admit far from the limit before its next answer, the claim a flush asks for:
   * a batch, four times the key's demand over a flush cycle or store round trip (whichever is
   * longer), or this node's part of the error budget, {@code limit * maxError / N} (so that a large
   * limit is never refused for want of a sync), or two of the key's requests at their mean cost,
   * whichever is most. The store grants less near the limit.
   */
  long untilNextAnswer(KeyView view) {
    int nodes = Math.max(1, activeNodes.getAsInt());
    long inFlight = (long) Math.ceil(view.rate() * 4 * Math.max(calls.roundTripNanos(), flushCycleNanos) / 1e9);
    long errorBudget = (long) (capacity(view) * maxError / nodes);
    // (a claim smaller than a request's cost pays for none: at costs of 3,000 under 1,000,000 a minute,
    // every request of a key asked four times a second took its own permits from the store, its claim
    // ahead of 1,000 never used)
    long requests = (long) Math.ceil(2 * view.meanCost());
    return Math.max(1, Math.max(Math.max(batchFor(view), inFlight), Math.max(errorBudget, requests)));
  }

  /** The budget of the view's window ({@link WindowBudget#capacity}). */
  long capacity(KeyView v) {
    return budget.capacity(v);
  }
}
