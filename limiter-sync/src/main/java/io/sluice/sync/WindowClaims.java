package io.sluice.sync;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * The arithmetic of a window limit's claims and shares for one {@link SyncedLimiter}: what a node
 * may admit beyond what the store counted from it (its claim, or a share where the store keeps none),
 * what it asks the store for and for how long ahead, when a denial may be retried; and the store's
 * answers taken into a view. Every method that takes a view runs under the view's monitor.
 * Reservation mode's leases are {@link WindowLeases}', and what the failure policy lets a node admit
 * while the store is out of reach is {@link WindowFallback}'s.
 *
 * <p>Concurrency: immutable settings, and two volatiles: {@code storeKeepsClaims} (cleared once by
 * the first answer that shows a store without claims) and {@code flushCycleNanos} (the flusher's).
 */
final class WindowClaims {
  private final IntSupplier activeNodes;
  private final long batchSize;
  private final StoreCalls calls;
  private final boolean claimsKept;
  private final Counter counter;
  private final long hotBatchMultiplier;
  private final Limit limit;
  private final double maxError;
  private final boolean regional;
  private final boolean sliding;
  private final long syncIntervalNanos;
  private final long windowNanos;
  private final FlushQueue queue;
  /**
   * The store keeps claims (true until an answer shows otherwise): a decision the view's claim
   * cannot pay asks the store for one, and waits for it, instead of denying.
   */
  volatile boolean storeKeepsClaims;
  /**
   * Time between the starts of consecutive syncs while the flusher is busy (a sync asked for at
   * once), nanoseconds: a running mean that jumps up to any slower cycle, the flusher's. With the
   * round trip, how long a permit waits for its acknowledgement.
   */
  volatile long flushCycleNanos;

  WindowClaims(SyncedLimiter l, SyncConfig c, FlushQueue queue) {
    this.activeNodes = l.activeNodes;
    this.batchSize = l.batchSize;
    this.calls = l.calls;
    this.claimsKept = l.claimsKept;
    this.storeKeepsClaims = l.claimsKept;
    this.counter = l.counter;
    this.hotBatchMultiplier = c.hotBatchMultiplier();
    this.limit = l.limit;
    this.maxError = c.maxError();
    this.regional = l.regional;
    this.sliding = l.sliding;
    this.syncIntervalNanos = l.syncIntervalNanos;
    this.windowNanos = l.windowNanos;
    this.queue = queue;
  }

  /** The nodes a claim is split between: as the registry counts them (1 before it answers). */
  int claimNodes() {
    return Math.min(Delta.MAX_NODES, Math.max(1, activeNodes.getAsInt()));
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
   * calls split by demand, with false denials the same).
   */
  int claimSplit(KeyView v, long now) {
    int nodes = claimNodes();
    if (!sliding || nodes < 2 || !(v.rate > 0) || v.globalPrev <= 0
        || weighted(v.globalPrev, v.globalCur, prevWeight(v.window, now)) < capacity(v) / 2.0) {
      return nodes;
    }
    double fadingPerSecond = v.globalPrev * 1e9 / windowNanos;
    double byDemand = Math.ceil(fadingPerSecond / v.rate - 1e-9);
    return (int) Math.max(nodes, Math.min(Delta.MAX_NODES, byDemand));
  }

  /**
   * The most windows a claim asks for ahead of its own: eight, or as many as fit in ten minutes, so
   * that a key does not live in the store for long after its last request; none for windows of more
   * than five minutes, where a key far below its limit holds a claim for the rest of its window
   * anyway and a claim ahead would spare one store call an hour.
   */
  int aheadWindows() {
    long fit = TimeUnit.MINUTES.toNanos(10) / windowNanos;
    return fit < 2 ? 0 : (int) Math.min(Math.min(8, Delta.MAX_AHEAD), fit);
  }

  /**
   * Under the view's monitor: {@code d} (a delta that asks for a claim on the view's window) also
   * asking for claims ahead, on the windows after it, where that saves store calls: a fixed window of
   * an ordinary limit, on a key far below its limit (its rate over all nodes at most a sixteenth of the
   * limit a window: the store lets claims ahead hold an eighth of it, twice that demand) that this node
   * has seen a few times (a measured rate), and whose claims ahead run out within half of their span.
   * Each window's claim is twice this node's demand a window (at least one permit). A key that warms
   * up finds them spread over the nodes whether or not its requests go there: held to an eighth of the
   * limit (a quarter let 8 nodes hold 240 of a limit of 500 on the accuracy kit's ramp, and false
   * denials at the limit went from 0.09% to 1.06% of requests). Such a key, asked a few times a minute
   * or a second on each node, otherwise makes one store call per key, node and window (its first
   * decision there asks for a claim). {@code d} as it is otherwise.
   */
  Delta withClaimsAhead(Delta d, KeyView v, long now) {
    int ahead = aheadWindows();
    if (ahead == 0 || sliding || !asksClaims() || d.want() == 0 || d.window() != v.window
        || v.aheadThrough >= v.window + (ahead + 1) / 2) {
      return d;
    }
    double ownRate = demandRate(v, now);
    if (!(ownRate > 0) && v.rateSince != Long.MIN_VALUE && v.hits <= 0 && now - v.rateSince >= syncIntervalNanos) {
      // a key this node has seen once before, a sync interval or more ago (most keys of many-key
      // traffic, at first): one request in the time since (a first request tells nothing: a hot key's
      // first on a node would hold claims ahead it outgrows at once, and they keep its claims from
      // being given up when idle; nor does a burst's second request, at the same moment)
      ownRate = 1e9 / (now - v.rateSince);
    }
    if (!(ownRate > 0)) {
      return d;
    }
    double perWindow = keyRate(v, now, ownRate) * windowNanos / 1e9;
    if (perWindow > capacity(v) / 16.0) {
      return d;
    }
    long want = Math.max(1, (long) Math.ceil(2 * ownRate * windowNanos / 1e9));
    return d.claimingAhead(ahead, want);
  }

  /** Whether a decision the view cannot pay for asks the store for a claim (and waits for it). */
  boolean asksClaims() {
    return claimsKept && storeKeepsClaims;
  }

  /**
   * Under the view's monitor, for a decision that asks the store: what to ask for beyond what the
   * request needs, at most {@code cap}. What the key is likely to ask before the next regular sync; a
   * key asking again within a sync interval doubles what it asked beyond last time (a burst, a key
   * warming up).
   */
  long aheadOfDemand(KeyView v, long now, long cap) {
    long ahead = v.lastClaimAsked != Long.MIN_VALUE && now - v.lastClaimAsked < syncIntervalNanos
        ? Math.min(cap, Math.max(1, 2 * v.claimAhead))
        : Math.min(cap, expectedDemand(v, now));
    v.claimAhead = ahead;
    v.lastClaimAsked = now;
    return ahead;
  }

  /**
   * Under the view's monitor: the key's demand on this node, permits a second. The flusher measures it
   * at each sync of the key ({@code v.rate}); a key whose every decision asked the store (a take: a claim
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
    return asksClaims() ? askedRate(v, now) : v.rate;
  }

  /**
   * Under the view's monitor: the permits a second the key asked for on this node, as the flusher
   * measured it, or, where it has not, its requests since its first over the time since, once that
   * spans a sync interval; 0 when unknown. (Reservation mode caps a sliding window's grants by it near
   * the window's end, where the flusher rarely measures a key: a lease pays for the admissions.)
   */
  double askedRate(KeyView v, long now) {
    if (v.rate > 0 || v.rateSince == Long.MIN_VALUE || v.hits <= 0) {
      return v.rate;
    }
    long elapsed = now - v.rateSince;
    return elapsed >= syncIntervalNanos ? v.hits * 1e9 / elapsed : 0;
  }

  /**
   * What the key is expected to ask for until the next regular sync (its demand rate over two sync
   * intervals); 0 for a key asked less than about once a sync interval: a claim it would hold
   * unused blocks the other nodes, and its next request asks the store anyway.
   */
  long expectedUntilSync(KeyView v) {
    double expected = v.rate * 2 * syncIntervalNanos / 1e9;
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
      rate = Math.max(rate, v.ownPrev * 1e9 / windowNanos);
    }
    double expected = rate * horizon / 1e9;
    return expected < 1 ? 0 : (long) Math.ceil(expected);
  }

  /**
   * Under the view's monitor: the key's rate over all nodes, permits a second, from this node's
   * ({@code ownRate}) times the nodes, what the store counted so far in the window, or the window
   * before's count where the view saw it, whichever is most (the registry may count fewer nodes than
   * there are).
   */
  private double keyRate(KeyView v, long now, double ownRate) {
    double elapsedSeconds = Math.max(now - v.window * windowNanos, syncIntervalNanos) / 1e9;
    double rate = Math.max(ownRate * claimNodes(), v.globalCur / elapsedSeconds);
    return v.lastWindowTotal >= 0 ? Math.max(rate, v.lastWindowTotal * 1e9 / windowNanos) : rate;
  }

  long claimHorizonNanos(KeyView v, long now) {
    long near = 2 * syncIntervalNanos;
    long windowStart = v.window * windowNanos;
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
    long rest = Math.max(0, v.window * windowNanos + windowNanos - now);
    return farBelowLimit(v, ownRate, keyRate(v, now, ownRate), weighsNow(v, now), rest);
  }

  /**
   * {@link #farBelowLimit(KeyView, long)} from its parts: this node's rate, the key's over all nodes,
   * what the key weighs now ({@link #weighsNow}) and the nanoseconds left in its window.
   */
  private boolean farBelowLimit(KeyView v, double ownRate, double rate, double weighs, long rest) {
    if (v.lastWindowTotal < 0 && !(ownRate > 0)) {
      return false;
    }
    return weighs + rate * rest / 1e9 <= capacity(v) / 2.0;
  }

  /**
   * Under the view's monitor: what the key weighs now as this view sees it: what the store counted
   * and this node's pending permits, a sliding window's previous window at its weight.
   */
  private double weighsNow(KeyView v, long now) {
    double prevWeight = prevWeight(v.window, now);
    return weighted(v.globalPrev, v.globalCur, prevWeight) + v.pendingCur + v.pendingPrev * prevWeight;
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
    if (horizon <= 2 * syncIntervalNanos || v.rate <= 0) {
      return syncIntervalNanos;
    }
    // (the rate counts permits: over the mean cost, a rate of requests. Read as one, a key asked
    // every 250 ms at costs near 1,000 was idle after a sync interval, and each request on it made a
    // store call to take and another to give its claim up)
    return Math.max(syncIntervalNanos, Math.min(horizon, (long) (2e9 * Math.max(1, v.meanCost) / v.rate)));
  }

  /** The batch size of a key: larger for a hot key, so that it reaches the store less often. */
  long batchFor(KeyView view) {
    return view.hot ? batchSize * hotBatchMultiplier : batchSize;
  }

  /**
   * What this node may admit beyond the counts the store has from it: its claim (see the class
   * comment), or its part of the error budget before its first claim in the window.
   *
   * <p>Without claims (regional quotas, a store that keeps none), a share: near the limit the
   * remaining budget R divided by {@code 2N - 1} for N nodes, since every other node may hold a share
   * of its own that this view does not show yet (N nodes holding one such share each still fit in R);
   * far from the limit {@link #untilNextAnswer}, not more, because a share granted but not yet used is
   * invisible to the other nodes. A stale or unknown view gets the cold allowance,
   * {@code limit * maxError / N}, at most a batch.
   */
  long allowance(KeyView view, double globalEstimate, boolean fresh, long at, boolean limitReached) {
    int nodes = Math.max(1, activeNodes.getAsInt());
    long batch = batchFor(view);
    long capacity = capacity(view);
    if (view.claim >= 0) {
      // the store's claim, fresh or not: it is reserved for this node whatever the others do; with a
      // sliding window also this node's part of what the previous window freed since the claim, as
      // the store counts it (prev / window / nodes per unit of time)
      return claimHeld(view, at);
    }
    if (claimsKept && storeKeepsClaims) {
      // no claim in this window yet (its first decisions, or a view the store has not answered): the
      // decision asks the store for one. (Admitting a part of the error budget first, as this node
      // once did, passed the limit in synchronized bursts whenever the registry counted fewer nodes
      // than there were, as at start-up; a wait for one round trip per key and window is cheaper.)
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
    return Math.max(0, Math.min(untilNextAnswer(view), share));
  }

  /** What the view's claim lets this node admit at {@code at} beyond its counted permits (claim >= 0). */
  long claimHeld(KeyView view, long at) {
    if (!sliding || view.claim < 0) {
      return Math.max(0, view.claim);
    }
    long windowStart = view.window * windowNanos;
    long from = Math.max(view.claimAt, windowStart);
    long to = Math.min(at, windowStart + windowNanos);
    if (to <= from || view.claimNodes < 1) {
      return view.claim;
    }
    if (view.claimNodes == 1) {
      // alone, on the window's own grid: a permit fades at the moment the exact algorithm frees it
      // (the grant was rounded down at the claim's time, and so is the fading then: together they
      // add up to what the exact algorithm has at the decision's time, never more)
      double perNano = (double) view.globalPrev / windowNanos;
      return view.claim + (long) Math.floor(perNano * (to - windowStart) + 1e-9)
          - (long) Math.floor(perNano * (from - windowStart) + 1e-9);
    }
    return view.claim + (long) Math.floor((double) view.globalPrev * (to - from) / windowNanos / view.claimNodes + 1e-9);
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
    long inFlight = (long) Math.ceil(view.rate * 4 * Math.max(calls.roundTripNanos(), flushCycleNanos) / 1e9);
    long errorBudget = (long) (capacity(view) * maxError / nodes);
    // (a claim smaller than a request's cost pays for none: at costs of 3,000 under 1,000,000 a minute,
    // every request of a key asked four times a second took its own permits from the store, its claim
    // ahead of 1,000 never used)
    long requests = (long) Math.ceil(2 * view.meanCost);
    return Math.max(1, Math.max(Math.max(batchFor(view), inFlight), Math.max(errorBudget, requests)));
  }

  /**
   * What a flush of a fixed window's view keeps of its claim (Delta#keeping), or -1 when it keeps all
   * of it. It trims when the node holds more of its claim unused than it would keep, and more than an
   * even part of what that claim leaves the other nodes, so the key is near its limit as this node sees
   * it. It keeps what the node may admit before the answer comes: four times the key's demand over a
   * store round trip or an eighth of the claim asked for, whichever is more, at least a permit; a
   * decision beyond it waits for the answer. Far from the limit a claim stays whole: the store would
   * grant it all again, and a warm key's claim that lasts its window saves store calls. (Trimming also
   * wherever the store's last answer had little free, KeyView#noneFree, cut the kit's false denials
   * further, 0.15% from 0.18% at 8 nodes, but raised them from 0.20-0.43% to 0.46-0.69% where demand
   * moved from one node to the others mid-window: the trimmed claims then went to every node evenly,
   * whatever its demand.) A sliding window's claim holds a part of the fading too, which a flush does
   * not trim.
   */
  long claimToKeep(KeyView v, long want) {
    if (sliding || v.claim < 0) {
      return -1;
    }
    long unused = v.claim - v.pendingCur;
    long inFlight = (long) Math.ceil(v.rate * 4 * calls.roundTripNanos() / 1e9);
    long keep = Math.max(1, Math.max(inFlight, (want + 7) / 8));
    boolean nearLimit = unused * Math.max(1, activeNodes.getAsInt()) > capacity(v) - v.globalCur - v.claim;
    return unused > keep && nearLimit ? keep : -1;
  }

  /**
   * Sliding window: the budget the previous window's count freed, as it faded, since the view was
   * last synced (or since its window began, if that is later).
   */
  double freedSinceSync(KeyView view, long at) {
    long since = Math.max(view.syncedAt, view.window * windowNanos);
    return sliding && at > since ? (double) view.globalPrev * (at - since) / windowNanos : 0;
  }

  /**
   * Whether the key was at its limit at the last sync: what was left would give each node less
   * than one permit. A sync would then show no room worth its call; the view waits for the regular
   * sync, and meanwhile its allowance grows as a sliding window fades.
   */
  boolean atLimit(KeyView view, double globalEstimate, long at) {
    if (view.claim >= 0) {
      return view.noneFree; // the store counts the claims too: it said so
    }
    int nodes = Math.max(1, activeNodes.getAsInt());
    return capacity(view) - globalEstimate - freedSinceSync(view, at) < 2.0 * nodes - 1;
  }

  /**
   * The budget of the view's window: the limit, or for a regional quota the region's share as the
   * store last told it, else the static share (the quota divided by the regions).
   */
  long capacity(KeyView v) {
    if (!regional) {
      return limit.capacity();
    }
    return v.share >= 0 ? v.share : counter.staticShare();
  }

  /** When the global count (as last seen) will have room for cost more. */
  long retryAfter(KeyView v, long at, long cost) {
    long windowStart = v.window * windowNanos;
    long untilNext = windowStart + windowNanos - at;
    long cur = v.globalCur + v.pendingCur;
    long prev = v.globalPrev + v.pendingPrev;
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
   * Under the view's monitor, at a drain: whether the view holds a claim on the current window that
   * still pays for what the key is expected to ask until the next regular sync, with nothing else to
   * send and no sync asked for, on a key not idle and still far below its limit (nearer, a claim
   * held unused would keep the last permits from the nodes that have requests for them).
   */
  boolean claimLasts(KeyView v, long now) {
    if (!asksClaims() || v.claim < 0 || v.syncWanted || v.unsentPrev > 0 || v.prevClaimHeld || v.deniedUnsent > 0
        || v.settleToken != 0 || v.window != Math.floorDiv(now, windowNanos)) {
      return false;
    }
    if (v.window <= v.aheadThrough
        || (v.demandAt != Long.MIN_VALUE && keepsClaimToWindowEnd(v, now) && now - v.demandAt <= idleAfterNanos(v, now))) {
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
      return claimHeld(v, now) - v.pendingCur >= expectedUntilSync(v);
    }
    if (v.demandAt == Long.MIN_VALUE
        || now - v.demandAt > idleAfterNanos(v, now) || claimHorizonNanos(v, now) <= 2 * syncIntervalNanos) {
      return false;
    }
    return claimHeld(v, now) - v.pendingCur >= Math.max(1, expectedUntilSync(v));
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
    if (sliding || !asksClaims() || v.unsentCur != 0 || v.pendingCur != 0 || v.settleToken != 0 || v.deniedUnsent != 0) {
      return false;
    }
    v.claim = -1;
    v.claimNodes = 0;
    return true;
  }

  /**
   * Sliding window, under the view's monitor: the ticker time from which the previous window will have
   * faded enough, by the view's counts, for {@code need} more permits to fit (the other nodes' claims
   * and parts are not in those counts: the store may still have less); {@code Long.MAX_VALUE} when
   * the current window's count alone leaves no room for it.
   */
  long fadedEnoughAt(KeyView v, long need, long now) {
    double room = capacity(v) - v.globalCur - need;
    if (room < 0) {
      return Long.MAX_VALUE;
    }
    if (v.globalPrev <= room) {
      return now;
    }
    long windowEnd = (v.window + 1) * windowNanos;
    return windowEnd - (long) (windowNanos * room / v.globalPrev);
  }

  /**
   * Under the view's monitor: an answer to a flush sent before the view's last claim call and answered
   * after it. A claim call with a take leaves a smaller claim than the flush before it did, so the
   * later-arriving answer must not raise the claim back: the view keeps the smaller claim, the smaller
   * part of the fading and the larger counts (under-use at worst, never over-admission).
   */
  void mergeOlderAnswer(KeyView v, FlushResult result, int i) {
    v.globalCur = Math.max(v.globalCur, result.current(i));
    v.globalPrev = Math.max(v.globalPrev, result.previous(i));
    if (claimsKept && result.claim(i) >= 0 && v.claim >= 0) {
      v.claim = Math.min(v.claim, result.claim(i));
      v.claimNodes = Math.min(v.claimNodes, result.split(i));
    }
  }

  /**
   * Under the view's monitor: the store's answer to delta i of a flush (or claim-only call) on the
   * view's current window, asked at ticker time {@code askedAt}: fresh counts, the claim, the share.
   */
  void takeAnswer(KeyView v, Delta delta, FlushResult result, int i, long now, long askedAt) {
    v.globalCur = result.current(i);
    v.globalPrev = result.previous(i);
    v.syncedAt = now;
    if (claimsKept) {
      if (result.claim(i) < 0) {
        storeKeepsClaims = false; // a store without claims: shares, as for regional quotas
      } else {
        // a take's amount is not permits the node reports; a take counted came out of the grant
        boolean take = delta.token() > 0 && delta.settle() == 0;
        long granted = result.claim(i) + (result.taken(i) ? delta.amount() : 0);
        long committed = Math.max(0, claimHeld(v, askedAt) - (take ? 0 : delta.amount()));
        // little was free (less than an eighth of what was asked): a sync would not bring more
        // worth its call before the regular one (see atLimit)
        v.noneFree = delta.want() > committed && granted - committed < Math.max(1, delta.want() / 8);
        // a decision asked for what it needed and the store had less: decisions the claim cannot pay
        // are denied without asking again for a sync interval (a flush's answer says nothing of it:
        // claims ahead of demand take only half of what is free, so a grant of none does not mean
        // none is free)
        if (delta.need() > 0 && granted < delta.need()) {
          // (twice as long after each such answer in a row, up to eight sync intervals: a key at its
          // limit whose last permits other nodes hold costs a few store calls a window, not ten a second)
          // (a sliding window frees budget continuously as the previous one fades: no doubling there,
          // or a back-off begun at a window's start outlived the fading and denied a key at 1 of 37)
          v.nothingFreeUntil = now + (sliding ? syncIntervalNanos : syncIntervalNanos << Math.min(3, v.fruitlessAsks));
          // (a small limit's sliding window frees a permit or two a sync interval: a back-off of a
          // whole interval denied what the exact algorithm admitted as the fading freed it, requests
          // not made up in their window. There the node asks again as soon as the fading has freed
          // what it needed by this answer's counts: at most two calls more a sync interval)
          if (sliding && (double) v.globalPrev * syncIntervalNanos / windowNanos <= 2) {
            v.nothingFreeUntil = Math.min(v.nothingFreeUntil, fadedEnoughAt(v, delta.need(), now));
          }
          v.freeBelow = delta.need();
          v.fruitlessAsks++;
        } else if (delta.need() > 0) {
          v.fruitlessAsks = 0;
        }
        v.claim = result.claim(i);
        v.claimAt = askedAt;
        if (delta.aheadWindows() > 0 && result.ahead(i) > 0) {
          v.aheadClaim = result.ahead(i);
          v.aheadThrough = delta.window() + delta.aheadWindows();
        }
        // 0: no part of a sliding window's fading. Nor is a part of a window before that counted
        // nothing: it is a part of nothing, and to give it up was a flush after each request the store
        // denied on a key at its limit (a limit of 1 a minute: two store calls per decision)
        v.claimNodes = result.previous(i) == 0 ? 0 : result.split(i);
        if (v.claim > 0 || v.claimNodes > 0) {
          // a claim held (or a sliding window's part of the fading, held even with a claim of 0, as
          // after a take) blocks the other nodes: the next regular sync gives it up if the key goes idle
          queue.enqueue(v);
        }
      }
    }
    if (regional) {
      long before = capacity(v);
      // an answer without a share for a window this node holds one for keeps the one it holds: the
      // record was lost (a regional Redis restarted empty) or the coordinator's clock has just opened
      // the next window; either way the coordinator counts the region at the share it leased until
      // its next round writes again, and the static share G / R now could push the regions' sum over
      // G (a lease never ends inside a window it covered)
      long share = result.share(i);
      long next = result.nextShare(i);
      v.share = share >= 0 || v.share < 0 ? share : v.share;
      v.nextShare = next >= 0 || v.nextShare < 0 ? next : v.nextShare;
      if (capacity(v) > before) {
        v.deniedUntil = Long.MIN_VALUE; // the coordinator gave more: the cached denial is out of date
      }
    }
  }
}
