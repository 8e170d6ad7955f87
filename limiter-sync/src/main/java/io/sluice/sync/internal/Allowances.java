package io.sluice.sync.internal;

import io.sluice.sync.spi.Delta;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * A node's allowance on the keys of a fixed window or sliding window counter: permits it may admit on a
 * key in a window without a claim and without asking the store, counted by its next flush ({@code
 * Delta#allowing}); one permit, or on a large limit the node's part of the error budget, at most a
 * batch ({@link #perKey}). Without it, a key's first decision in each window on each node waits for a claim
 * call: on many keys that is most decisions (Zipf over 1,000 keys on 3 nodes, 32% of decisions waited
 * on a fixed window, 69% on a sliding one).
 *
 * <p>What keeps it within the limit: every node's flushes and claim calls on the window carry a
 * reserve, its count of nodes times the allowance, and the store grants claims and takes only out of
 * the capacity less what is left of that reserve (the allowed permits counted so far taken off it).
 * Counts, claims and the allowances not yet counted therefore never pass the capacity together.
 * Nodes use their allowance until two sync intervals before the window's end and send it with
 * the next sync (at once in the window's third sync interval from the end); their calls carry the
 * reserve only until one sync interval before the end, when what is left of it (the allowances of
 * nodes that had no request for the key) goes back to the claims, so that a key at its limit whose
 * requests all reach one node is not held short of it. In the last two sync intervals, where the error
 * budget allows a permit a node, nodes may admit up to half their part of the budget without a claim,
 * kept in no reserve ({@link #tailPerKey}): together they pass the limit by at most half the budget.
 *
 * <p>Only where the reserve is a small part of the limit (the limit at least {@link
 * #CAPACITY_PER_NODE} permits per node, {@link #CAPACITY_PER_NODE_SLIDING} on a sliding window) and
 * the window long enough for the margins (at least {@link #SYNCS_PER_WINDOW} sync intervals); only for
 * a node that every other node has counted since before the window began (see NodeBeat#countedByOthers:
 * the others' reserve is as many allowances as they count nodes), whose store answers it and whose
 * count of nodes the others share ({@link #countShared}), on a store
 * that keeps the reserve; and unless turned off ({@code SyncConfig.Builder#coldKeyAllowance}).
 *
 * <p>Sliding windows: at a window's start the previous window's count weighs whole and may fill the
 * limit (the reserve went back to the claims at that window's end), so there is room for the reserve
 * only once it has faded by the reserve, at most reserve / limit of the window in ({@link #partStart}):
 * nodes use their allowances only from then, and the store starts a claim's part of the fading no
 * earlier where the claim finds the counts past what the reserve leaves (Delta#partStartMicros). Used
 * from the window's start, allowances let 3 and 8 nodes pass the accuracy kit's limits by 1-4 permits.
 * A node that asks the store with its allowance unused, or with the rest of one a flush kept (its
 * permits all counted), gives it up and spends it with the ask (KeyView#spendAllowanceForAsk; the store
 * records each node's spend, so a claim-only call applied twice spends once): the reserve would
 * otherwise hold the key's asks short until the node's next flush.
 *
 * <p>Concurrency: immutable; reads volatile state of the registry and the breaker. {@link #admits} runs
 * under the view's monitor.
 */
final class Allowances {
  /**
   * The least allowance, permits per key, node and window. Where the error budget allows more, a node's
   * allowance is its part of the budget, {@code limit * maxError / N}, at most a batch ({@link #perKey}).
   */
  static final long PER_KEY = 1;
  /**
   * The least limit per node for which nodes hold allowances (with one permit a node, the reserve is then
   * at most a sixteenth of the limit; with more, the error budget, {@code limit * maxError}).
   */
  static final long CAPACITY_PER_NODE = 16;
  /**
   * The same on a sliding window, where a key at its limit stays there, and what the reserve holds of
   * it is held all the window long rather than once at its end: tune's default (a limit of 100 on 4
   * nodes, the reserve 4% of it) denied 0.040% of requests the exact algorithm admitted with allowances
   * there and 0.028% without (`tune --simulate`, batch 100), for 57% of decisions asking the store
   * instead of 61%. With the reserve a 32nd of the limit or less (Zipf over 1,000 keys on 3 nodes at a
   * limit of 100), the accuracy kit's decisions that waited 69% -> 44%, requests not made up in their
   * window the same or up to 0.02 points more.
   */
  static final long CAPACITY_PER_NODE_SLIDING = 32;
  /** The shortest window, in sync intervals, for which nodes hold allowances. */
  static final long SYNCS_PER_WINDOW = 8;

  private final boolean possible;
  private final boolean sliding;
  private final long capacity;
  /** The error budget of a key-window, {@code limit * maxError} (permits, not rounded). */
  private final double budget;
  private final long batchSize;
  private final long windowNanos;
  private final long syncIntervalNanos;
  private final IntSupplier nodes;
  private final LongSupplier countedFor;
  private final StoreCalls calls;
  /** How recently the store must have answered (two heartbeat intervals: a working node beats every one). */
  private final long answeredWithinNanos;
  /**
   * The last window in whose course the others began to count this node (Long.MAX_VALUE before they
   * do): its allowance holds from the window after, see {@link #counted}.
   */
  private final AtomicLong countedFromWindow;
  /** When the registry's answer last lowered the count, and whether its count is current (see LimiterSetup#countFellAgo, #countCurrent). */
  private final LongSupplier countFellAgo;
  private final BooleanSupplier countCurrent;
  /** How much longer than a sync interval the node's syncs take now (Flusher#syncLateNanos). */
  private final LongSupplier syncLate;
  /** How long after the count fell every node that may hold an allowance has heard of it. */
  private final long countSettlesNanos;

  Allowances(LimiterSetup l, ClaimSizing sizing) {
    this.possible = l.config.coldKeyAllowance() && l.claimsKept && !l.regional && l.leases == null
        && l.store.keepsAllowances() && l.windowNanos >= SYNCS_PER_WINDOW * l.syncIntervalNanos;
    this.sliding = l.sliding;
    this.capacity = l.limit.capacity();
    this.budget = l.limit.capacity() * l.config.maxError();
    this.batchSize = l.batchSize;
    this.windowNanos = l.windowNanos;
    this.syncIntervalNanos = l.syncIntervalNanos;
    this.nodes = sizing::claimNodes;
    this.countedFor = l.countedFor;
    this.calls = l.calls;
    this.answeredWithinNanos = 2 * l.config.heartbeatInterval().toNanos();
    this.countedFromWindow = new AtomicLong(Long.MAX_VALUE);
    this.countFellAgo = l.countFellAgo;
    this.syncLate = l.syncLate;
    this.countCurrent = l.countCurrent;
    // (nodes that answer within two beat intervals have heard of the fall by then, and a permit one
    // spent just before is sent within a sync interval or two)
    this.countSettlesNanos = answeredWithinNanos + 2 * syncIntervalNanos;
  }

  /** The nodes' allowances' reserve on window {@code w}, as a call at {@code at} carries it (0: none). */
  long reserve(long w, long at) {
    return reserve(w, at, nodes.getAsInt());
  }

  private long reserve(long w, long at, int n) {
    return holds(n) && at < reserveEnds(w) ? n * perKey(n) : 0;
  }

  /** Whether nodes hold allowances on this limit when there are {@code n}: the reserve a small part of it. */
  private boolean holds(int n) {
    return possible && capacity >= (sliding ? CAPACITY_PER_NODE_SLIDING : CAPACITY_PER_NODE) * n;
  }

  /** Permits per key and window a node may admit under its allowance, the reserve's part for it. */
  long perKey() {
    return perKey(nodes.getAsInt());
  }

  /**
   * The allowance with {@code n} nodes: the node's part of the error budget where that is more than
   * {@link #PER_KEY}, at most a batch. On a large limit a key asked many times in its window on a node
   * (100,000 keys with limits far away, each asked a few times a window) is then decided without a
   * store call until the node's next sync has claimed for it; with one permit its second request in the
   * window waited for a claim call. The reserve stays within the error budget (or N permits), the share
   * of the limit that claims may not take until a sync interval before the window's end.
   */
  private long perKey(int n) {
    return Math.max(PER_KEY, Math.min(batchSize, (long) (budget / n)));
  }

  /**
   * What a node may admit under its allowance on a key-window in the window's last two sync intervals,
   * where the calls carry no reserve for it by the time its permit arrives: half its part of the error
   * budget, at most a batch, 0 where that is under a permit. Nothing is kept for these permits, so
   * nodes together may pass the limit by that much where claims have taken everything else: at most
   * half the error budget. Without them a key's first request in those intervals waited for a claim
   * call (a fifth of a 1 s window's requests at a sync interval of 100 ms, on keys asked once a
   * window).
   */
  private long tailPerKey(int n) {
    return Math.min(batchSize, (long) (budget / (2.0 * n)));
  }

  /** When calls on window {@code w} stop carrying the reserve (ticker time): a sync interval before its end. */
  long reserveEnds(long w) {
    return (w + 1) * windowNanos - syncIntervalNanos;
  }

  /**
   * Under the view's monitor: whether a decision of {@code cost} at {@code at}, which no claim pays for,
   * may be admitted under the node's allowance on the view's window: where the nodes' calls still carry
   * the reserve a sync interval later (time for the permit to reach the store), or, in the window's
   * last intervals, within what the budget allows there ({@link #tailPerKey}).
   */
  boolean admits(KeyView v, long at, long cost) {
    int n = nodes.getAsInt();
    return holds(n) && cost <= left(v, at, n) && standsFor(v.window(), at);
  }

  /**
   * Under the view's monitor: what is left of the node's allowance on the view's window for a decision
   * at {@code at}, with {@code n} nodes: where the nodes' calls still carry the reserve when its permit
   * reaches the store, the allowance from the part of the window where it fits ({@link #partStart}); in
   * the window's last intervals, the tail's ({@link #tailPerKey}).
   */
  private long left(KeyView v, long at, int n) {
    // (a permit goes with the next sync: a sync interval on, or later where syncs take longer than that)
    long reaches = at + syncIntervalNanos + 2 * syncLate.getAsLong();
    if (reaches < reserveEnds(v.window())) {
      return at >= partStart(v.window(), n * perKey(n)) ? perKey(n) - v.allowedInWindow() : 0;
    }
    return tailPerKey(n) - v.allowedInWindow();
  }

  /**
   * Whether the nodes' reserve on window {@code w} stands for this node's allowance at {@code at}: the
   * others count it, its store answers it, and its count of nodes is one they share.
   */
  private boolean standsFor(long w, long at) {
    return counted(w, at) && storeAnswers() && countShared(w, at);
  }

  /**
   * Under the view's monitor, after a decision at {@code at} was admitted under the allowance: what
   * more of it later decisions on the window may take without the monitor, as a credit, until {@link
   * #creditUntil} (0: none). On a large limit, where the allowance is many permits, a key asked about
   * once a sync interval was decided under the monitor every time (a judgement of the whole view, most of
   * a decision's cost on 100,000 keys); under the credit it costs one compare-and-set.
   */
  long creditLeft(KeyView v, long at) {
    int n = nodes.getAsInt();
    return holds(n) && perKey(n) > PER_KEY ? Math.max(0, left(v, at, n)) : 0;
  }

  /**
   * Until when (ticker time, exclusive) a credit of the allowance granted at {@code at} on window {@code
   * w} may pay: while {@link #admits} would still admit in the same part of the window (before the
   * reserve's cutoff, and before the interval whose permits go at once, {@link #sendsAtOnce}; in the
   * tail, to the window's end), and for at most two sync intervals unless the flusher renews it ({@link
   * #renewsCredit}): a node whose syncs stop (a store that no longer answers) stops using it soon.
   */
  long creditUntil(long w, long at) {
    long ends = reserveEnds(w);
    long cutoff = Math.min(ends - syncIntervalNanos - 2 * syncLate.getAsLong(), ends - 2 * syncIntervalNanos);
    long part = at < cutoff ? cutoff : (w + 1) * windowNanos;
    return Math.min(part, at + 2 * syncIntervalNanos);
  }

  /**
   * Under the view's monitor, at a sync at {@code at} that keeps the view for a later one: whether its
   * credit of the allowance may go on paying (then until {@link #creditUntil}): the allowance still
   * holds as it did for the decision that was granted it.
   */
  boolean renewsCredit(KeyView v, long at) {
    int n = nodes.getAsInt();
    return holds(n) && at >= partStart(v.window(), n * perKey(n)) && standsFor(v.window(), at);
  }

  /**
   * Under the view's monitor, at a sync at {@code at}: whether the view's permits, all admitted under
   * the allowance, may wait for a later sync. They must reach the store before the calls stop carrying
   * the reserve, and the next sync still sends them in time; meanwhile the node's later decisions on the
   * key spend the same allowance, and one delta a window counts them all (a delta per sync interval was
   * a key update per key and interval on 100,000 keys asked about once an interval). Only on a large
   * limit, where the allowance is more than a permit, and while at most half of it is used: a key that
   * uses more flushes as before, so that the claim its flush asks for is there when the allowance runs
   * out. {@code claimHeld}: what the node's claim on the window pays now (a view with one flushes).
   */
  boolean defers(KeyView v, long at, long claimHeld) {
    int n = nodes.getAsInt();
    long perKey = perKey(n);
    return holds(n) && perKey > PER_KEY && claimHeld == 0 && v.window() == Math.floorDiv(at, windowNanos)
        && v.allowedUnsent() > 0 && v.unsentCur() == v.allowedUnsent() && 2 * v.allowedInWindow() <= perKey
        && v.deltasOut() == 0 && v.unsentPrev() == 0 && !v.prevClaimHeld() && v.deniedUnsent() == 0
        && v.deniedUnsentPrev() == 0 && !v.syncWanted() && !v.hasUnsettledTake() && !v.leaseWanted()
        && at + 2 * syncIntervalNanos + 2 * syncLate.getAsLong() < reserveEnds(v.window())
        && storeAnswers() && countShared(v.window(), at);
  }

  /**
   * Whether this node's count of nodes is one the others share: the registry answered it within the
   * last two beat intervals, and has not lowered it within {@link #countSettlesNanos}. Whether a node
   * holds an allowance, and the reserve its calls carry, follow from its count; a node that spends one
   * on a count the others no longer share may find their calls carrying no reserve for it. A count
   * answered long before left two nodes counting two, each holding an allowance on a limit of 37 an
   * hour (one per 16 permits and node), after a third had started: counting three, its calls carried no
   * reserve, and it was granted all 37 while the two spent theirs (WindowProbe seed 910225 with
   * -Dsluice.probe.hot=true, syncs 6 minutes apart, on which the beats rode: 39 admitted). And a node
   * that hears first that the count fell may hold an allowance the others, counting one more, carry no
   * reserve for until they hear it too. Nor for the rest of a window in which the count fell: the
   * store's spends on it still hold those of the nodes gone, and an allowance that grew with the smaller
   * count (limit * maxError / N) would find the reserve short by them. (A node started less than two beat
   * intervals after another's last answer is not yet in that node's count: for that long, calls of the
   * new node that count too many nodes for allowances carry no reserve for the other's, at most one
   * allowance per such node and key-window.)
   */
  private boolean countShared(long w, long at) {
    long fellAgo = countFellAgo.getAsLong();
    return countCurrent.getAsBoolean() && fellAgo >= countSettlesNanos && fellAgo > at - w * windowNanos;
  }

  /**
   * Whether every other node has counted this one since window {@code w} began at the latest: their
   * calls on {@code w} have then all carried a reserve with this node's allowance in it. A node counted
   * only from within the window found its counts filled by the nodes there before it (their allowances
   * were all the reserve held) and admitted its own on top (WindowProbe seed 802684 with unit costs: a
   * fixed window of 100 an hour, two nodes started after the count reached 100, each a permit over).
   */
  private boolean counted(long w, long at) {
    long from = countedFromWindow.get();
    if (from == Long.MAX_VALUE) {
      noteCounted(at);
      from = countedFromWindow.get();
    }
    return w > from;
  }

  /**
   * At every sync and every decision the allowance might pay, at {@code at} (ticker time): notes, once
   * the others count this node, the window in whose course they began to.
   */
  void noteCounted(long at) {
    if (countedFromWindow.get() != Long.MAX_VALUE) {
      return;
    }
    long since = countedFor.getAsLong();
    if (since >= 0) {
      // (counted from a window's very start counts for that window)
      long w = since == Long.MAX_VALUE ? Long.MIN_VALUE : Math.floorDiv(at - since - 1, windowNanos);
      countedFromWindow.compareAndSet(Long.MAX_VALUE, w);
    }
  }

  /**
   * When, with calls carrying {@code reserve}, nodes may use their allowances on window {@code w}
   * (ticker time; the window's start for a fixed window or without a reserve): on a sliding window the
   * previous window's count weighs whole at the window's start and may fill the limit, and has faded by
   * the reserve from then on (Delta#partStartMicros).
   */
  long partStart(long w, long reserve) {
    long start = w * windowNanos;
    if (!sliding || reserve <= 0) {
      return start;
    }
    return start + 1_000 * Delta.partStartMicros(TimeUnit.NANOSECONDS.toMicros(windowNanos), reserve, capacity);
  }

  /**
   * Whether a permit admitted under the allowance at {@code at} goes at once rather than with the next
   * regular sync: in the window's third sync interval from its end, so that it reaches the store well
   * before the calls stop carrying the reserve (the next regular sync could come a whole interval
   * later). One admitted later is not in the reserve ({@link #tailPerKey}) and goes with the next sync.
   */
  boolean sendsAtOnce(KeyView v, long at) {
    long ends = reserveEnds(v.window());
    return at >= ends - 2 * syncIntervalNanos && at < ends - syncIntervalNanos;
  }

  /**
   * Whether the store answers this node: its breaker closed, a call answered lately and none failed
   * within two sync intervals. An allowance's permit is counted by the node's next sync; one a store
   * cannot count in time would pass the reserve the other nodes keep for it, and a node that cannot
   * reach its store decides by its failure policy.
   */
  private boolean storeAnswers() {
    return !calls.open() && calls.answeredWithin(answeredWithinNanos) && !calls.troubleWithin(2 * syncIntervalNanos);
  }
}
