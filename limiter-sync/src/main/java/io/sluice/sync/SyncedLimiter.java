package io.sluice.sync;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.sluice.node.Algorithm;
import io.sluice.node.Decision;
import io.sluice.node.KeyedLimiter;
import io.sluice.node.Limit;
import io.sluice.node.LimitListener;
import io.sluice.node.Mode;
import io.sluice.node.Outcome;
import io.sluice.node.RateLimiter;
import io.sluice.node.Ticker;
import io.sluice.sync.BatchSender.InFlight;
import io.sluice.sync.BatchSender.Pending;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.ExactResult;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.LeaseStore;
import io.sluice.sync.spi.TokenStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntSupplier;

/**
 * A node's limiter for one limit shared with other nodes through a {@link CounterStore}. For a window
 * limit (fixed window or sliding window counter) decisions are local when the node holds a claim that
 * pays for them; the permits admitted are flushed in batches. Token buckets and leaky buckets (meters)
 * are shared in exact mode by default (batch size 1: one store script per decision, the algorithm's
 * own, as Bucket4j and Redisson do) and, given a batch size, by token claims ({@link TokenClaims}:
 * tokens taken from the store's bucket ahead, each used no earlier than its due time); sliding window
 * logs in exact mode only.
 * (The leaky bucket shaper delays requests in a queue of one process and is not shared.)
 *
 * <h2>How a node decides</h2>
 * Each key has a view (see {@link KeyView}): the global counts as of the last sync, plus what this
 * node admitted since (pending). A request is admitted when
 * <ol>
 *   <li>the estimate over global and pending counts stays within the limit, and</li>
 *   <li>this node's pending permits stay within its <em>claim</em>.</li>
 * </ol>
 * A claim is what the store granted the node (see {@code flush.lua}): permits reserved for it beyond
 * what the store counted from it. Counts plus claims never pass the limit, so nodes admitting within
 * their claims never pass it together, however late a flush comes (a starved or cut-off node's
 * admissions are covered by its claim). Flushes ask for what the key is likely to need until the next
 * regular sync; the store grants ahead of demand at most half of what no count holds, an even part per
 * node, so the other nodes' unused claims never deny a key below half its limit. A sliding window frees
 * budget continuously as the previous window fades: each claimant also holds a part of that flow from
 * the time of its claim (the split the store answered).
 *
 * <p>A decision the claim cannot pay, on a key below its limit as far as the node knows (a cold key, a
 * small limit, a large cost, the first decision of a window), asks the store for a claim of at least
 * what it needs, in one claim-only call under the key's monitor, and decides from the answer; if the
 * call fails, the {@link StoreFailurePolicy} decides. Where such a call found less free than needed,
 * the node denies without asking for a sync interval (longer after several in a row). A decision never
 * asks while a flush that gives the node's claim up is on its way: it waits for that answer first.
 *
 * <p>Regional quotas (and a store that keeps no claims) use a share instead: the budget remaining
 * at the last sync divided by 2N - 1 for N active nodes (every other node may hold such a share
 * unseen), plus for a sliding window an even part of what faded since; a view older than twice the
 * sync interval gets the cold allowance ({@code limit * maxError / nodes}, at least 1).
 *
 * <p>A key whose global count alone is over the limit is denied locally until the count can allow
 * it again (the end of the window, or enough decay of the previous window), without store calls.
 *
 * <h2>Hot keys</h2>
 * The flusher measures each key's admission rate between syncs; a key far above the running mean
 * (heavy hitter) gets batches and leases several times larger and wakes the flusher at most ten
 * times per sync interval, so one key cannot keep a store shard busy. (Splitting a hot key over
 * several Redis Cluster slots is not built: a claim is granted against the key's count and every
 * node's claim in one atomic step, which needs them in one key.)
 *
 * <h2>When the store fails</h2>
 * Every store call goes through a Resilience4j circuit breaker (failure rate and slow-call rate,
 * sized for flush rates by default) and waits at most the flush timeout (and the store's own command
 * timeout): flushes on the flusher thread, claim calls on the deciding thread. While the breaker is
 * open the {@link StoreFailurePolicy} decides; permits admitted meanwhile are kept and flushed once
 * the breaker lets calls through again. The node
 * registry (a heartbeat every second in the store) tells how many nodes share the limit.
 *
 * <h2>Nothing lost, nothing counted twice</h2>
 * One flusher thread sends batches, one at a time per store group, each with this node's next
 * sequence number for the group (starting from the clock in microseconds, so a restarted node never
 * reuses one). A batch that fails or times out is kept and sent again, unchanged, before anything
 * new: the store applies a sequence once, so an indeterminate flush is never applied twice. New
 * admissions meanwhile accumulate as unsent. {@link #close()} flushes what is left.
 *
 * <h2>Concurrency</h2>
 * Deciding threads and one flusher thread share the state, in four kinds:
 * <ul>
 *   <li>a key's {@link KeyView}: guarded by the view's own monitor, except its credit, taken with one
 *       CAS ({@link KeyView#takeCredit}); every section under the monitor settles the credit first;</li>
 *   <li>the view table ({@link ViewTable}) and the flusher's queues ({@code dirty}, {@code orphans}):
 *       concurrent collections; a view is queued under its monitor and drained under it;</li>
 *   <li>the flusher's own state ({@code sequences}, {@code inFlight}, {@code lostGroups},
 *       {@code syncRound}, the hot-key mean): guarded by {@code syncLock}, which a sync holds (the
 *       flusher, or a caller of {@link #syncNow}, {@link #flushAll} or {@link #close}); the time of
 *       the last heartbeat is the flusher thread's alone;</li>
 *   <li>meters and flags read across threads: {@code LongAdder}s, atomics and volatiles
 *       ({@code registeredNodes}, {@code storeKeepsClaims}, {@code closed}); store calls and the
 *       breaker: {@link StoreCalls}.</li>
 * </ul>
 * A decision that asks the store holds its view's monitor through that one call, never the sync
 * lock; a sync takes views' monitors one at a time, never while waiting for the store.
 */
public final class SyncedLimiter implements KeyedLimiter {
  private final Limit limit;
  private final SyncConfig config;
  private final Counter counter;
  /** One region's part of a global quota: the cap is the share the coordinator gives the region. */
  private final boolean regional;
  private final CounterStore store;
  /**
   * Whether the limit counts windows, which nodes batch and claim; buckets and the sliding log are
   * decided by the store's exact scripts alone, and by a local share of the limit while it fails.
   */
  private final boolean windowed;
  /** Buckets and logs while the store fails, under LOCAL_SHARE: this node's even part of the limit. */
  private final LocalShares localShares;
  /** The store's exact scripts when the batch size is 1, else null. */
  private final ExactStore exact;
  /**
   * Window limits (not regional quotas): flushes ask the store for claims (see flush.lua), and a node
   * admits within its claim, so that nodes never pass the limit together.
   */
  private final boolean claimsKept;
  /**
   * The store keeps claims (true until an answer shows otherwise): a decision the view's claim
   * cannot pay asks the store for one, and waits for it, instead of denying.
   */
  private volatile boolean storeKeepsClaims;
  /** Approximate mode: decisions may take a view's credit without its monitor (see {@link KeyView}). */
  private final boolean credited;
  /**
   * A token bucket or leaky bucket meter in batched mode (batch size above 1, a {@link TokenStore}):
   * nodes claim tokens of the store's bucket ahead, each usable from its due time; else null.
   */
  private final TokenClaims tokens;
  /** Per thread: what a token decision answers besides its outcome (see TokenClaims#decide). */
  private static final ThreadLocal<long[]> TOKEN_ANSWER = ThreadLocal.withInitial(() -> new long[3]);
  /** The store's leases in reservation mode, else null. */
  private final LeaseStore leases;
  private final String nodeId;
  private final Ticker ticker;
  private final long windowNanos;
  private final boolean sliding;
  private final long batchSize;
  private final long syncIntervalNanos;
  private final long staleAfterNanos;
  /** How long a node keeps within its local share after its last decision on it (see fallbackAdmits). */
  private final long shareHoldNanos;
  private final double maxError;
  private final IntSupplier activeNodes;
  private final int maxKeys;
  private final Duration flushTimeout;
  /** How long a decision waits for a claim or lease it asks for (then the failure policy decides). */
  private final Duration claimTimeout;
  private final StoreFailurePolicy onStoreFailure;
  private final LimitListener listener;
  private final StoreCalls calls;
  private final long heartbeatIntervalNanos;
  /** Nodes alive as the registry last answered; 0 until it has (a node alone must not assume it is). */
  private volatile int registeredNodes;
  /** Exact mode: give-backs (release) that failed, leaving their permits spent. */
  private final LongAdder giveBacksFailed = new LongAdder();
  /** Decisions that waited for a store call (exact checks and claims asked for on the decision path). */
  private final LongAdder waitedDecisions = new LongAdder();
  private final LongAdder waitedNanos = new LongAdder();
  private long lastHeartbeat = Long.MIN_VALUE;

  private static final System.Logger LOG = System.getLogger(SyncedLimiter.class.getName());
  /** System.nanoTime after which a closing limiter starts no new batch (MAX_VALUE while open). */
  private volatile long closeDeadline = Long.MAX_VALUE;
  private final ViewTable views;
  private final ConcurrentLinkedQueue<KeyView> dirty = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<Delta> orphans = new ConcurrentLinkedQueue<>();
  private final ReentrantLock syncLock = new ReentrantLock();
  /** The last take token used (see {@link Delta#taking}): from the clock, so a restarted node never reuses one. */
  private final java.util.concurrent.atomic.AtomicLong takeTokens = new java.util.concurrent.atomic.AtomicLong(
      System.currentTimeMillis() * 1_000L);
  /** The flusher's batches on their way to the store (numbered, in waves, a failed one kept). */
  private final BatchSender sender;
  private final AtomicBoolean syncRequested = new AtomicBoolean();
  private volatile boolean closed;
  private final Thread flusher;

  private final LongAdder admitted = new LongAdder();
  private final LongAdder denied = new LongAdder();
  private final LongAdder cachedDenials = new LongAdder();
  private final LongAdder storeLosses = new LongAdder();
  /**
   * Flusher thread, under the sync lock: the groups whose store was found to have lost its data during
   * the current sync, each with the number of the last numbered flush answered there before (see
   * refill), and the sync's number, which a view records when it is refilled (once per sync).
   */
  private final Map<Integer, Long> lostGroups = new HashMap<>();
  private long syncRound;
  /** Per group, the highest number of a numbered flush answered (see BatchSender#numberedSent). */
  private final ConcurrentHashMap<Integer, Long> numberedDone = new ConcurrentHashMap<>();
  private final LongAdder refilledPermits = new LongAdder();
  private final LongAdder fallbackDecisions = new LongAdder();
  /** Permits admitted here that the store has not acknowledged yet (sent or not). */
  private final LongAdder pendingPermits = new LongAdder();
  private final LongAdder deltasSent = new LongAdder();
  private final LongAdder hotKeys = new LongAdder();
  /**
   * Time between the starts of consecutive syncs while the flusher is busy (a sync asked for at
   * once), nanoseconds: a running mean that jumps up to any slower cycle. With the round trip, how
   * long a permit waits for its acknowledgement.
   */
  private volatile long flushCycleNanos;
  private long lastSyncStart = Long.MIN_VALUE;
  /** Running mean of the admission rates of synced keys, per second (flusher thread only). */
  private double meanKeyRate;
  private final long hotBatchMultiplier;
  private final double hotKeyFactor;
  private final double minHotRate;
  private final long hotSyncIntervalNanos;
  /** Where a view hands unsent permits of windows it rolls past (one object, not one per decision). */
  private final KeyView.OrphanSink orphanSink = this::orphan;
  /** One decision per outcome with no numbers, for {@link #tryAcquire}, which reads only the outcome. */
  private final Decision[] bare;

  private SyncedLimiter(Limit limit, CounterStore store, SyncConfig c, long batchSize) {
    this.config = c;
    this.limit = limit;
    this.counter = c.regions() > 0 ? Counter.regional(limit, c.regions())
        : limit.algorithm() == Algorithm.SLIDING_WINDOW_LOG ? Counter.ofLog(limit) : Counter.of(limit);
    this.windowed = batches(limit);
    this.regional = c.regions() > 0;
    this.store = store;
    this.exact = batchSize == 1 && !c.reservation() ? (ExactStore) store : null;
    this.leases = c.reservation() ? (LeaseStore) store : null;
    this.credited = windowed && exact == null && leases == null;
    this.claimsKept = credited && counter.kind() == Counter.Kind.WINDOW && !regional;
    this.nodeId = c.nodeId();
    this.ticker = c.ticker();
    this.windowNanos = limit.periodNanos();
    this.sliding = limit.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER;
    this.batchSize = batchSize;
    this.syncIntervalNanos = c.syncInterval().toNanos();
    this.staleAfterNanos = 2 * syncIntervalNanos;
    this.maxError = c.maxError();
    this.activeNodes = c.activeNodes().orElse(() -> registeredNodes);
    this.storeKeepsClaims = claimsKept;
    this.maxKeys = c.maxKeys();
    this.views = new ViewTable(c.maxKeys(), windowNanos, ticker, this::settle);
    this.localShares = new LocalShares(limit, ticker, c.maxKeys(), activeNodes);
    this.flushTimeout = c.flushTimeout();
    this.claimTimeout = c.claimTimeout().compareTo(c.flushTimeout()) < 0 ? c.claimTimeout() : c.flushTimeout();
    this.onStoreFailure = c.onStoreFailure();
    this.listener = c.listener();
    this.calls = new StoreCalls(CircuitBreaker.of("sluice-" + limit.name() + "-" + c.nodeId(),
        c.circuitBreaker().orElseGet(() -> StoreCalls.defaultBreakerConfig(c.flushTimeout(), store.callTimeout()))),
        c.flushTimeout());
    // nodes cut off together come back within a breaker's wait in the open state and a flush of each
    // other (twice, for the probe that fails first): a local share is held that long after its last use
    this.shareHoldNanos = 2 * (calls.breaker().getCircuitBreakerConfig().getWaitIntervalFunctionInOpenState().apply(1)
        * 1_000_000L + flushTimeout.toNanos()) + syncIntervalNanos;
    this.tokens = !windowed && batchSize > 1
        ? new TokenClaims(limit, (TokenStore) store, calls, syncIntervalNanos, batchSize, maxKeys, activeNodes,
            claimTimeout)
        : null;
    // the store keeps sequences per (node, limit): limits of one node each number their own batches,
    // so one limit's numbers must not make the store take another's batches for replays
    this.sender = new BatchSender(store, calls, ticker, c.nodeId() + "/" + limit.name(), flushTimeout,
        () -> closeDeadline, this::answered, this::requeue);
    this.heartbeatIntervalNanos = c.heartbeatInterval().toNanos();
    this.hotBatchMultiplier = c.hotBatchMultiplier();
    this.hotKeyFactor = c.hotKeyFactor();
    this.minHotRate = c.minHotRate();
    this.hotSyncIntervalNanos = Math.max(1, syncIntervalNanos / 10);
    this.bare = new Decision[Outcome.values().length];
    for (Outcome o : Outcome.values()) {
      bare[o.ordinal()] = Decision.of(o, limit, 0, 0, 0);
    }
    if (c.autoSync()) {
      this.flusher = new Thread(this::flushLoop, "sluice-flusher-" + limit.name());
      this.flusher.setDaemon(true);
      this.flusher.start();
    } else {
      this.flusher = null;
    }
  }

  public static Builder builder(Limit limit, CounterStore store) {
    return new Builder(limit, store);
  }

  @Override
  public Limit limit() {
    return limit;
  }

  public String nodeId() {
    return nodeId;
  }

  // ------------------------------------------------------------------ decisions

  /** Whether one permit of the key is admitted; allocation-free for a known key in the approximate mode. */
  public boolean tryAcquire(String key) {
    return decide(key, 1, BARE).allowed();
  }

  @Override
  public boolean tryAcquire(String key, long cost) {
    return decide(key, cost, BARE).allowed();
  }

  public Decision acquire(String key) {
    return acquire(key, 1);
  }

  /**
   * Decides for {@code cost} permits of the key. In the approximate and reservation modes the node
   * decides from its own view when its claim (or lease) pays for the request, and otherwise waits for
   * one store call that asks for one (see the class comment); in exact mode (batch size 1) it waits
   * for one script call. A call waits at most the flush timeout, and the fallback policy decides if it
   * fails.
   */
  @Override
  public Decision acquire(String key, long cost) {
    return decide(key, cost, TOLD);
  }

  /** {@link #acquire(String, long)}, with a soft or shadow breach counted but not told to the listener yet. */
  @Override
  public Decision acquireUntold(String key, long cost) {
    return decide(key, cost, UNTOLD);
  }

  @Override
  public void tellBreach(String key, Decision breach) {
    notifyBreach(key, breach);
  }

  /** How a decision answers: its outcome only (one of the prebuilt decisions: {@link #tryAcquire} allocates nothing). */
  private static final int BARE = 0;
  /** A decision of its own, a breach told to the listener. */
  private static final int TOLD = 1;
  /** A decision of its own, a breach left for the caller to tell ({@link #acquireUntold}). */
  private static final int UNTOLD = 2;

  /** The decision, answered as {@code answer} says ({@link #BARE}, {@link #TOLD}, {@link #UNTOLD}). */
  private Decision decide(String key, long cost, int answer) {
    return decide(key, cost, answer, false);
  }

  /** {@code exactTried}: an exact check failed already (a retry on a retired view must not repeat it). */
  private Decision decide(String key, long cost, int answer, boolean exactTried) {
    checkRequest(key, cost);
    if (closed) {
      throw new IllegalStateException("limiter " + limit.name() + " is closed");
    }
    long now = ticker.read();
    if (answer == BARE && credited) {
      KeyView known = views.get(key);
      int paid = known != null && !storeDown() ? known.takeCredit(now, cost) : KeyView.UNPAID;
      if (paid != KeyView.UNPAID) {
        if (paid == KeyView.PAID_SYNC) {
          requestSync();
        }
        admitted.increment();
        return bare[Outcome.ALLOWED.ordinal()];
      }
    }
    boolean fallback = storeDown();
    if (tokens != null && !fallback) {
      long[] out = TOKEN_ANSWER.get();
      long askedAt = System.nanoTime();
      int r = tokens.decide(key, cost, now, out);
      if (out[2] != 0) {
        waited(askedAt);
      }
      if (r != TokenClaims.FAILED) {
        // (window 0: decided on the store's bucket; what the failure policy decides carries none)
        return answer(key, r == TokenClaims.ALLOWED, answer, out[0], limit.quotaWindowNanos(), out[1], 0);
      }
      fallback = true; // the store failed this decision: the policy decides it, the breaker counts it
    }
    if (exact != null && !fallback && !exactTried) {
      long askedAt = System.nanoTime();
      ExactResult r = calls.guarded(() -> exact.acquire(limit, key, cost, TimeUnit.NANOSECONDS.toMicros(now)));
      waited(askedAt);
      if (r != null) {
        return exactDecision(key, now, cost, r, answer);
      }
      fallback = true; // the store failed this decision: the policy decides it, the breaker counts it
    }
    if (!windowed) {
      return fallbackDecision(key, cost, answer);
    }
    return decideWindow(key, cost, answer, now, fallback || exactTried);
  }

  /**
   * A window limit's decision, under the key's monitor ({@link #judge}); a view retired from the
   * table meanwhile is decided on its successor.
   */
  private Decision decideWindow(String key, long cost, int answer, long now, boolean fallback) {
    KeyView view = view(key);
    Judgement j = JUDGEMENT.get();
    if (j.inUse) {
      j = new Judgement(); // a decision made inside another's store call (a store that calls back)
    }
    j.start(cost, now, fallback);
    try {
      synchronized (view) {
        judge(view, j);
      }
      if (!j.retired) {
        if (j.urgent) {
          requestSync();
        }
        return decision(key, j, answer);
      }
    } finally {
      j.inUse = false;
    }
    return decide(key, cost, answer, exact != null);
  }

  /**
   * The thread's judgement, reused by each of its window decisions that take a view's monitor, so that
   * a denial (or a reservation-mode decision) allocates nothing, as the credit path does not. One in
   * use (a decision made inside another decision's store call) is not shared: the inner one gets its own.
   */
  private static final ThreadLocal<Judgement> JUDGEMENT = ThreadLocal.withInitial(Judgement::new);

  /**
   * One window decision as it goes: what the view shows at its moment ({@link #look}), the store
   * calls it made (at most one claim or lease call, and one wait for a flush that gives a claim up),
   * and the verdict. One per thread ({@link #JUDGEMENT}), started anew by each decision.
   */
  private static final class Judgement {
    long cost;
    long now;
    /** The decision's time in the view's window: a thread behind counts in the newer window. */
    long at;
    double prevWeight;
    double globalEstimate;
    double own;
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
    /** Dropped from the table as idle after this thread found it: decided on its successor. */
    boolean retired;
    long remaining;
    long retryAfter;
    /** The window an admission counted in (for release). */
    long countedWindow;
    /** A decision of this thread is using it. */
    boolean inUse;

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
      retired = false;
      remaining = 0;
      retryAfter = 0;
      countedWindow = Long.MIN_VALUE;
      inUse = true;
      return this;
    }

    /** Takes in what a {@link #claimStep} did. */
    void stepped(int step) {
      asked |= step == ASKED || step == ASK_FAILED || step == TAKEN || step == TAKE_FAILED;
      awaited |= step == WAITED || step == WAIT_FAILED;
      took |= step == TAKEN;
      takeUnsettled |= step == TAKE_FAILED;
      fallback |= step == ASK_FAILED || step == WAIT_FAILED || step == TAKE_FAILED;
    }
  }

  /** Under the view's monitor: looks, decides (asking the store when a verdict needs it), then records. */
  private void judge(KeyView view, Judgement j) {
    if (view.retired) {
      j.retired = true;
      return;
    }
    settle(view);
    view.roll(Math.floorDiv(j.now, windowNanos), orphanSink);
    while (true) {
      if (view.retired && !j.took && !j.takeUnsettled) {
        j.retired = true; // dropped while this decision waited for a release, before it took anything
        return;
      }
      settle(view); // (another thread may have been granted credit while this one waited)
      look(view, j);
      int step = verdict(view, j);
      if (step == DECIDED) {
        break;
      }
      j.stepped(step); // (AGAIN: a lease call, already taken in)
    }
    record(view, j);
  }

  /** The view's counts at the decision's moment, and a verdict not yet made. */
  private void look(KeyView view, Judgement j) {
    j.urgent = false;
    j.fromLease = false;
    j.retryAfter = 0;
    j.at = Math.max(j.now, view.window * windowNanos);
    j.prevWeight = sliding ? (double) (windowNanos - (j.at - view.window * windowNanos)) / windowNanos : 0;
    j.globalEstimate = view.globalPrev * j.prevWeight + view.globalCur;
    j.own = view.pendingPrev * j.prevWeight + view.pendingCur;
    j.capacity = capacity(view);
    j.remaining = (long) Math.floor(j.capacity - j.globalEstimate - j.own);
    // a sliding window's view from before its window began misses what the other nodes added to
    // the window that is now the previous one, and that still weighs: it is not fresh either
    j.fresh = view.syncedAt != Long.MIN_VALUE && j.now - view.syncedAt <= staleAfterNanos
        && (!sliding || view.syncedAt >= view.window * windowNanos);
  }

  /**
   * The verdict, in order of what settles it: {@link #DECIDED}, or a store call this decision makes
   * before deciding again ({@link #claimStep}'s answer, or {@link #AGAIN} after a lease call).
   */
  private int verdict(KeyView view, Judgement j) {
    long cost = j.cost;
    if (!j.took && !j.takeUnsettled && !j.fallback && view.shareCapWindow == view.window && j.now < view.shareCapUntil
        && view.ownCur + cost > view.shareCap) {
      // this node decided on its local share in this window while its breaker was open, and the
      // other nodes cut off with it may still be doing so: their admissions are not in the store
      // yet, so it keeps within its share (to the window's end, or until the others have had time to
      // come back too) rather than spend theirs (see fallbackAdmits)
      j.admit = false;
      j.remaining = 0;
      j.retryAfter = Math.min(view.shareCapUntil, (view.window + 1) * windowNanos) - j.at;
    } else if (j.took) {
      // the store counted this permit with the claim it granted: admitted, nothing to send for it
      j.admit = true;
    } else if (!j.takeUnsettled && view.releasedCur >= cost) {
      // permits this node gave back after the store had counted them: its own, used again (counted
      // as admitted below without being sent)
      j.admit = true;
      j.remaining = Math.max(0, j.remaining - cost);
    } else if (j.fallback) {
      fallbackDecisions.increment();
      j.admit = fallbackAdmits(view, j.prevWeight, cost, storeDown(), j.now)
          && (onStoreFailure == StoreFailurePolicy.FAIL_OPEN
          // a local share never passes what the node last saw of the limit: a key seen at its limit
          // stays denied however little this node admitted itself
          || j.globalEstimate + j.own + cost <= j.capacity);
      j.retryAfter = j.admit ? 0 : syncIntervalNanos;
      if (j.admit) {
        j.remaining -= cost;
      }
    } else if (leases != null) {
      return verdictOnLease(view, j);
    } else if (j.now < view.deniedUntil && j.fresh && j.globalEstimate + cost > j.capacity) {
      // (a smaller cost than the one that cached the denial may still fit)
      cachedDenials.increment();
      j.admit = false;
      j.retryAfter = view.deniedUntil - j.now;
    } else if (j.globalEstimate + j.own + cost > j.capacity) {
      return verdictOverTheLimit(view, j);
    } else {
      return verdictWithinTheLimit(view, j);
    }
    return DECIDED;
  }

  /** Reservation mode: admitted when the node's grant pays; a grant asked for when none does. */
  private int verdictOnLease(KeyView view, Judgement j) {
    long cost = j.cost;
    long now = j.now;
    if (view.leased < cost && !j.asked && leaseMayHelp(view, now)) {
      // no grant pays for it: the store decides, in one round trip, as for a claim
      j.asked = true;
      if (!leaseNow(view, now, cost - view.leased)) {
        j.fallback = true;
      }
      return AGAIN;
    }
    j.fromLease = true;
    j.admit = view.leased >= cost;
    if (j.admit) {
      view.leased -= cost;
      view.ownCur += cost;
      j.remaining = view.leased;
    } else {
      j.remaining = 0;
      j.retryAfter = view.lastRemaining == 0 && !sliding ? (view.window + 1) * windowNanos - j.at : syncIntervalNanos;
    }
    // ask ahead, so that the next grant is on its way before this one runs out; a sliding window
    // frees budget as the previous window fades, so with none left it asks again now and then
    boolean budgetLeft = view.lastRemaining != 0 || (sliding && now - view.syncedAt > syncIntervalNanos);
    if (!view.leaseWanted && expectedUntilSync(view) > 0 && view.leased < leaseSize(view) / 2 + cost && budgetLeft) {
      view.leaseWanted = true;
      j.urgent = true;
    }
    return DECIDED;
  }

  /** Over the limit with this node's own pending permits: denied, unless an old view must ask first. */
  private int verdictOverTheLimit(KeyView view, Judgement j) {
    long cost = j.cost;
    j.admit = false;
    j.retryAfter = retryAfter(view, j.at, cost);
    if (j.fresh && j.globalEstimate + cost > j.capacity) {
      view.deniedUntil = j.now + j.retryAfter;
    } else {
      // our own pending may have been counted already: fresh counts may show room, unless the
      // key was at its limit then too
      j.urgent = !j.fresh || !atLimit(view, j.globalEstimate, j.at);
      if (!j.asked && asksClaims() && !j.fresh) {
        // an old view: only the store knows, ask it now (its answer refreshes the counts) and
        // decide again. (A fresh view over the limit with this node's own permits is at the
        // limit, or its last permits are on their way to the store: the sync asked for shows it.)
        return claimStep(view, j.now, (long) Math.ceil(j.own + cost), cost, j.awaited);
      }
    }
    return DECIDED;
  }

  /** Within the limit as far as the view shows: admitted when the node's allowance (its claim) pays. */
  private int verdictWithinTheLimit(KeyView view, Judgement j) {
    long cost = j.cost;
    long now = j.now;
    boolean limitReached = atLimit(view, j.globalEstimate, j.at);
    long allowance = allowance(view, j.globalEstimate, j.fresh, j.at, limitReached);
    if (j.own + cost > allowance && !j.asked && asksClaims() && !(view.claim >= 0 && now < view.nothingFreeUntil)) {
      // below the limit as far as this node knows, and no claim that pays for the request: a
      // denial would be a guess, so the store decides, in one round trip (a key with a claim that
      // pays never gets here). Only where the store had less than a decision needed, within the
      // last sync interval, does the node deny without asking (the other nodes give claims they
      // do not use up at their regular syncs).
      return claimStep(view, now, (long) Math.ceil(j.own + cost), cost, j.awaited);
    }
    if (j.own + cost > allowance) {
      j.admit = false;
      // a sync may show budget the other nodes left; at the limit it shows none worth the call
      j.urgent = !j.fresh || !limitReached;
      j.retryAfter = syncIntervalNanos;
      // what this node can admit now (the rest of the limit is other nodes' claims): a 429 does
      // not announce a quota its retry would be denied
      j.remaining = Math.max(0, Math.min(j.remaining, (long) Math.floor(allowance - j.own)));
      return DECIDED;
    }
    j.admit = true;
    j.remaining -= cost;
    // flush a full batch, or near the limit half the allowance, so that the answer is back
    // before the allowance runs out (flushing later lets the other nodes' views fall behind:
    // over-admission tripled when it waited for two round trips' demand); at the limit only a
    // full batch (see atLimit). A key asked less than about once a sync interval (no claim
    // ahead of demand) waits for the regular sync: its permit is covered by the claim it
    // asked for, and a flush per request would double its store calls
    long batch = batchFor(view);
    boolean cold = claimsKept && storeKeepsClaims && expectedDemand(view, now) == 0;
    long trigger = limitReached || cold ? batch : Math.max(1, Math.min(batch, allowance / 2));
    // (a view whose claim pays needs no fresh counts: the claim is reserved for this node)
    boolean claimed = asksClaims() && view.claim >= 0;
    j.urgent = (!j.fresh && !(claimed && claimHorizonNanos(view, now) > 2 * syncIntervalNanos))
        || view.unsentCur + cost >= trigger;
    if (j.fresh && credited) {
      grantCredit(view, j, allowance, trigger);
    }
    return DECIDED;
  }

  /**
   * What the within-the-limit verdict would go on admitting, with nothing else changing: the next
   * decisions may take that without the monitor, and the one that fills the batch asks for the sync.
   */
  private void grantCredit(KeyView view, Judgement j, long allowance, long trigger) {
    long cost = j.cost;
    long now = j.now;
    double ownAfter = j.own + cost;
    long credit = Math.min((long) Math.floor(allowance - ownAfter), (long) Math.floor(j.capacity - j.globalEstimate - ownAfter));
    if (view.shareCapWindow == view.window && now < view.shareCapUntil) {
      credit = Math.min(credit, view.shareCap - view.ownCur - cost); // (a share held since a fault)
    }
    if (credit > 0) {
      boolean throttled = view.hot && view.lastUrgentSync != Long.MIN_VALUE
          && now - view.lastUrgentSync < hotSyncIntervalNanos;
      view.grantCredit(credit, Math.min((view.window + 1) * windowNanos, view.syncedAt + staleAfterNanos + 1),
          j.urgent || throttled ? 0 : trigger - (view.unsentCur + cost));
    }
  }

  /** Under the view's monitor, after the verdict: the key's demand, the admission's count, and its sync. */
  private void record(KeyView view, Judgement j) {
    long cost = j.cost;
    long now = j.now;
    // demand, allowed or not: the rate that decides how much to hold between syncs (measured from
    // the key's first request, which starts the clock: one request alone is no rate)
    if (view.rateSince == Long.MIN_VALUE) {
      view.rateSince = now;
    } else {
      view.hits += cost;
    }
    view.demandAt = now;
    if (regional && !j.admit) {
      view.deniedUnsent += cost; // demand the coordinator weighs, sent with the next flush
    }
    if (j.admit) {
      // (in exact mode this path admits only for the failure policy: the store took nothing to give back)
      j.countedWindow = exact == null ? view.window : Long.MIN_VALUE;
      if (j.took) {
        view.ownCur += cost;
        if (numberedDone(view.key) > view.takenMark) {
          // a numbered flush sent after the earlier takes was answered: they reached that store
          view.takenCur = 0;
          view.takenPrev = 0;
        }
        view.takenCur += cost;
        view.takenMark = sender.numberedSent();
      } else if (j.takeUnsettled) {
        // counted by the flush that settles the take (unless the take counted it), not as unsent
        view.pendingCur += cost;
        view.ownCur += cost;
        pendingPermits.add(cost);
      } else if (!j.fromLease) {
        countAdmitted(view, cost);
      }
    }
    if (j.takeUnsettled) {
      view.settleAdmitted = j.admit;
      j.urgent = true;
    }
    if (view.prevClaimHeld && !view.syncWanted) {
      // a claim (or a sliding window's part of the fading) held on the window gone by still weighs
      // for every node's claims in this one until a flush gives it up: at once, not at the next
      // regular sync
      j.urgent = true;
    }
    boolean wantsSync = j.urgent;
    view.syncWanted |= j.urgent;
    if (j.urgent && view.hot) {
      // a hot key wakes the flusher at most once per hot sync interval; it still goes with the
      // next regular sync, and its larger batches cover the gap
      if (view.lastUrgentSync != Long.MIN_VALUE && now - view.lastUrgentSync < hotSyncIntervalNanos) {
        j.urgent = false;
      } else {
        view.lastUrgentSync = now;
      }
    }
    if ((j.admit && !j.fromLease && !j.took) || wantsSync || (regional && !j.admit)) {
      enqueue(view);
    }
  }

  /** The decision a window verdict makes: counted, and told to the listener when it is a breach. */
  private Decision decision(String key, Judgement j, int answer) {
    Outcome outcome = j.admit ? Outcome.ALLOWED : outcomeOfBreach();
    if (outcome == Outcome.DENIED) {
      denied.increment();
    } else {
      admitted.increment();
    }
    boolean breach = outcome == Outcome.SOFT_EXCEEDED || outcome == Outcome.SHADOW_DENIED;
    if (answer == BARE && !(breach && listener != LimitListener.NONE)) {
      return bare[outcome.ordinal()];
    }
    long now = j.now;
    long reset = (Math.floorDiv(now, windowNanos) + (sliding ? 2 : 1)) * windowNanos - now;
    Decision d = Decision.of(outcome, limit, j.remaining, reset, j.retryAfter, j.countedWindow);
    if (breach && answer != UNTOLD) {
      notifyBreach(key, d);
    }
    return d;
  }

  /** Tells the listener of a soft or shadow limit's breach; a listener must not fail the request. */
  private void notifyBreach(String key, Decision d) {
    if (listener == LimitListener.NONE) {
      return;
    }
    try {
      listener.onBreach(limit, key, d);
    } catch (RuntimeException ignored) {
      // (the request goes on: it was allowed)
    }
  }

  /**
   * A bucket's or a log's decision while the store fails: the failure policy's. Under LOCAL_SHARE the
   * node keeps to an even part of the limit (the burst and the rate, or the log's limit, divided by the
   * nodes the registry counts) in an in-process limiter of its own, which starts full: nodes cut off
   * together admit at most the limit's burst again, then its rate, whatever the store had counted.
   */
  private Decision fallbackDecision(String key, long cost, int answer) {
    fallbackDecisions.increment();
    boolean allowed;
    long remaining = 0;
    long retryAfter = syncIntervalNanos;
    long reset = limit.quotaWindowNanos();
    switch (onStoreFailure) {
      case FAIL_OPEN:
        allowed = true;
        break;
      case FAIL_CLOSED:
        allowed = false;
        break;
      default: {
        RateLimiter part = localShares.limiter();
        // (a cost above the part is denied: the part cannot pay for it however long the node waits)
        if (part == null || cost > part.limit().capacity()) {
          allowed = false;
        } else {
          Decision d = part.acquire(key, cost);
          allowed = d.allowed();
          remaining = d.remaining();
          retryAfter = Math.max(d.retryAfterNanos(), 1);
          reset = d.resetNanos();
        }
      }
    }
    return answer(key, allowed, answer, remaining, reset, retryAfter, Long.MIN_VALUE);
  }

  /**
   * The decision of a bucket or log, or of the exact mode: counted, the limit's mode applied to a
   * denial (soft and shadow limits answer with their own outcome and notify the listener, unless the
   * caller tells it: {@link #UNTOLD}), and for {@code tryAcquire} ({@link #BARE}) an admission answered
   * with a prebuilt decision.
   */
  private Decision answer(String key, boolean allowed, int answer, long remaining, long resetNanos,
      long retryAfterNanos, long window) {
    Outcome outcome = allowed ? Outcome.ALLOWED : outcomeOfBreach();
    if (outcome == Outcome.DENIED) {
      denied.increment();
    } else {
      admitted.increment();
    }
    if (answer == BARE && outcome == Outcome.ALLOWED) {
      return bare[outcome.ordinal()];
    }
    Decision d = Decision.of(outcome, limit, remaining, resetNanos, allowed ? 0 : retryAfterNanos, window);
    if ((outcome == Outcome.SOFT_EXCEEDED || outcome == Outcome.SHADOW_DENIED) && answer != UNTOLD) {
      notifyBreach(key, d);
    }
    return d;
  }

  /** Batch size 1: the store decided, in one script call; the view only keeps this node's own count. */
  private Decision exactDecision(String key, long now, long cost, ExactResult r, int answer) {
    if (r.allowed() && windowed) {
      KeyView view = view(key);
      synchronized (view) {
        view.roll(Math.floorDiv(now, windowNanos), orphanSink);
        view.ownCur += cost;
      }
    }
    // the window the store counted in (the next one where a node whose clock is ahead opened it; for a
    // bucket, the refill period's index): what release gives back to, and the mark of a permit the
    // store took (a fallback's admission has none)
    long window = !r.allowed() || limit.algorithm() == Algorithm.SLIDING_WINDOW_LOG ? Long.MIN_VALUE
        : windowed && r.window() >= 0 ? r.window() : Math.floorDiv(now, windowNanos);
    return answer(key, r.allowed(), answer, r.remaining(), TimeUnit.MICROSECONDS.toNanos(r.resetMicros()),
        TimeUnit.MICROSECONDS.toNanos(r.retryAfterMicros()), window);
  }

  /** The nodes a claim is split between: as the registry counts them (1 before it answers). */
  private int claimNodes() {
    return Math.min(Delta.MAX_NODES, Math.max(1, activeNodes.getAsInt()));
  }

  /** Whether a decision the view cannot pay for asks the store for a claim (and waits for it). */
  private boolean asksClaims() {
    return claimsKept && storeKeepsClaims;
  }

  /**
   * Under the view's monitor: asks the store for a claim of at least {@code need} on the view's
   * window, in one claim-only call (no permits, so no sequence: it may cross the flusher's batches),
   * and takes the answer into the view. The monitor is held through the call: the key's other
   * decisions would wait for this answer anyway, and the flusher's answers for the key, which may
   * be older, land after it (an older claim is never the larger one, so a late answer only makes
   * the node use less).
   *
   * <p>The call also carries the decision's permits as a take ({@link Delta#taking}): counted with
   * the claim when it covers the need, so that a cold key's decision costs one store update, not a
   * claim and then a flush. A take whose answer never comes is settled by the key's next flush (see
   * {@link KeyView#settleToken}); while one is unsettled, calls carry no take.
   *
   * @return {@link #TAKEN}, {@link #ASKED} (answered, the take not counted), {@link #TAKE_FAILED} or
   *     {@link #ASK_FAILED} (no answer: the failure policy decides)
   */
  private int askClaim(KeyView v, long now, long need, long take) {
    long capacity = limit.capacity();
    long ahead = aheadOfDemand(v, now, untilNextAnswer(v));
    long want = Math.max(need, Math.min(capacity, need + ahead));
    boolean taking = take > 0 && take <= need && v.settleToken == 0 && store.countsTakes();
    Delta d = new Delta(counter, v.key, v.window, taking ? take : 0).claiming(want, Math.min(need, want), claimNodes());
    long token = 0;
    if (taking) {
      token = takeTokens.incrementAndGet();
      d = d.taking(token);
    }
    // a claim left on the window gone by still weighs in a sliding window (and blocks a fixed one's
    // claimants no more, but costs a flush): given up here when nothing of it is uncounted
    boolean givesUpPrevious = v.prevClaimHeld && v.unsentPrev == 0 && v.pendingPrev == 0;
    // (first: a sliding window's claimant part of the window gone by no longer weighs on this claim)
    List<Delta> deltas = givesUpPrevious ? List.of(new Delta(counter, v.key, v.window - 1, 0), d) : List.of(d);
    int at = deltas.size() - 1;
    long nowMicros = TimeUnit.NANOSECONDS.toMicros(now);
    Batch batch = new Batch(nodeId + "/" + limit.name(), store.group(counter, v.key), Batch.CLAIM_ONLY, nowMicros,
        deltas);
    long askedAt = System.nanoTime();
    v.claimCallSentAt = askedAt;
    FlushResult result = calls.guarded(() -> store.flush(batch), claimTimeout);
    waited(askedAt);
    if (result == null) {
      if (taking) {
        v.settleToken = token;
        v.settleWindow = v.window;
        v.settlePermits = take;
        v.settleInFlight = false;
        return TAKE_FAILED;
      }
      return ASK_FAILED;
    }
    settle(v);
    takeAnswer(v, d, result, at, now, now);
    if (givesUpPrevious) {
      v.prevClaimHeld = false;
    }
    return result.taken(at) ? TAKEN : ASKED;
  }

  /**
   * Reservation mode: whether a lease asked for now may grant something: not when the store's last
   * answer in this fixed window left nothing, nor, in a sliding window, before a permit can have
   * faded since that answer.
   */
  private boolean leaseMayHelp(KeyView v, long now) {
    if (v.lastRemaining != 0 || v.syncedAt == Long.MIN_VALUE) {
      return true;
    }
    return sliding && now - v.syncedAt >= windowNanos / Math.max(1, v.globalPrev);
  }

  /**
   * Reservation mode, under the view's monitor: takes a grant of at least {@code need} permits, if
   * the store has them, and what the key is likely to ask before the next regular sync; false when
   * the store did not answer.
   */
  private boolean leaseNow(KeyView v, long now, long need) {
    long want = Math.min(limit.capacity(), need + aheadOfDemand(v, now, leaseSize(v)));
    long w = v.window;
    long elapsedMicros = TimeUnit.NANOSECONDS.toMicros(now - w * windowNanos);
    long askedAt = System.nanoTime();
    LeaseStore.Lease lease = calls.guarded(() -> leases.lease(counter, v.key, w, elapsedMicros, want), claimTimeout);
    waited(askedAt);
    if (lease == null) {
      return false;
    }
    takeLeaseAnswer(v, lease, want, now);
    return true;
  }

  /** Under the view's monitor: a grant of the view's window, asked for {@code want}, into the view. */
  private void takeLeaseAnswer(KeyView v, LeaseStore.Lease lease, long want, long now) {
    v.leased += lease.granted();
    v.globalCur = lease.current();
    v.globalPrev = lease.previous();
    v.lastRemaining = lease.granted() < want ? 0 : Math.max(0, limit.capacity() - lease.current());
    v.syncedAt = now;
  }

  /**
   * Under the view's monitor, for a decision that asks the store: what to ask for beyond what the
   * request needs, at most {@code cap}. What the key is likely to ask before the next regular sync; a
   * key asking again within a sync interval doubles what it asked beyond last time (a burst, a key
   * warming up).
   */
  private long aheadOfDemand(KeyView v, long now, long cap) {
    long ahead = v.lastClaimAsked != Long.MIN_VALUE && now - v.lastClaimAsked < syncIntervalNanos
        ? Math.min(cap, Math.max(1, 2 * v.claimAhead))
        : Math.min(cap, expectedDemand(v, now));
    v.claimAhead = ahead;
    v.lastClaimAsked = now;
    return ahead;
  }

  /**
   * What {@link #claimStep} did: asked the store for a claim (and the store counted the decision's
   * take with it, or not), or waited for a release; each may fail.
   */
  private static final int ASKED = 0;
  private static final int ASK_FAILED = 1;
  private static final int WAITED = 2;
  private static final int WAIT_FAILED = 3;
  private static final int TAKEN = 4;
  private static final int TAKE_FAILED = 5;
  /** A verdict made: no store call to make first. */
  private static final int DECIDED = -1;
  /** A lease call made: decide again. */
  private static final int AGAIN = -2;

  /**
   * Under the view's monitor, for a decision its claim cannot pay: asks the store for a claim of at
   * least {@code need}, taking the decision's {@code cost} with it, or, while a flush that gives the
   * node's claim up is on its way, waits for its answer first (once per decision: a second wait
   * fails, and the failure policy decides).
   */
  private int claimStep(KeyView view, long now, long need, long cost, boolean awaited) {
    if (view.releasesInFlight > 0) {
      return !awaited && awaitReleases(view) ? WAITED : WAIT_FAILED;
    }
    return askClaim(view, now, need, cost);
  }

  /**
   * Under the view's monitor: waits, at most the claim timeout, until no flush that gives up this
   * node's claim on the key's window is on its way; false if one still is. A claim asked for while
   * such a flush travels could be granted before the flush arrives, and the flush would then give it
   * up with the rest while the decision admits under it.
   */
  private boolean awaitReleases(KeyView v) {
    long start = System.nanoTime();
    long deadline = start + claimTimeout.toNanos();
    try {
      while (v.releasesInFlight > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        v.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      waited(start);
    }
  }

  /** A decision waited for the store from {@code since} (System.nanoTime) until now. */
  private void waited(long since) {
    waitedDecisions.increment();
    waitedNanos.add(System.nanoTime() - since);
  }

  /**
   * What the key is expected to ask for until the next regular sync (its demand rate over two sync
   * intervals); 0 for a key asked less than about once a sync interval: a claim it would hold
   * unused blocks the other nodes, and its next request asks the store anyway.
   */
  private long expectedUntilSync(KeyView v) {
    double expected = v.rate * 2 * syncIntervalNanos / 1e9;
    return expected < 1 ? 0 : (long) Math.ceil(expected);
  }

  /**
   * Under the view's monitor: what a claim is sized for, the key's demand over its horizon (0 below
   * one permit): two sync intervals, or, for a key far below its limit, the rest of its window. A
   * key is far below its limit when what the store counted, this node's pending permits and every
   * node asking at this node's rate until the window's end stay within half of the limit: there
   * the store grants claims ahead of demand anyway (half of what is free), and a claim that lasts
   * the window saves a store call per request or per sync interval on a key asked a few times a
   * second.
   */
  private long expectedDemand(KeyView v, long now) {
    double expected = v.rate * claimHorizonNanos(v, now) / 1e9;
    return expected < 1 ? 0 : (long) Math.ceil(expected);
  }

  private long claimHorizonNanos(KeyView v, long now) {
    long near = 2 * syncIntervalNanos;
    long windowStart = v.window * windowNanos;
    long rest = windowStart + windowNanos - now;
    if (!asksClaims() || rest <= near) {
      return near;
    }
    // only for a key this view saw through the window before (a new key's rate is a guess), at the
    // key's rate over all nodes: this node's times the nodes, what the store counted so far in the
    // window, or the window before's count, whichever is most (the registry may count fewer nodes
    // than there are)
    if (v.lastWindowTotal < 0) {
      return near;
    }
    double elapsedSeconds = Math.max(now - windowStart, syncIntervalNanos) / 1e9;
    double rate = Math.max(Math.max(v.rate * claimNodes(), v.globalCur / elapsedSeconds),
        v.lastWindowTotal * 1e9 / windowNanos);
    double prevWeight = sliding ? (double) rest / windowNanos : 0;
    double projected = v.globalCur + v.globalPrev * prevWeight + v.pendingCur + v.pendingPrev * prevWeight
        + rate * rest / 1e9;
    return projected <= capacity(v) / 2.0 ? rest : near;
  }

  /**
   * Under the view's monitor: how long a key holding a claim may go without a request before the
   * next regular sync gives the claim up: a sync interval, or for a key sized for the rest of its
   * window twice its mean gap between requests (within that window).
   */
  private long idleAfterNanos(KeyView v, long now) {
    long horizon = claimHorizonNanos(v, now);
    if (horizon <= 2 * syncIntervalNanos || v.rate <= 0) {
      return syncIntervalNanos;
    }
    return Math.max(syncIntervalNanos, Math.min(horizon, (long) (2e9 / v.rate)));
  }

  private Outcome outcomeOfBreach() {
    return limit.mode() == Mode.SOFT ? Outcome.SOFT_EXCEEDED
        : limit.mode() == Mode.SHADOW ? Outcome.SHADOW_DENIED : Outcome.DENIED;
  }

  /** Whether the circuit breaker keeps the store out: the fallback policy decides. */
  private boolean storeDown() {
    CircuitBreaker.State state = calls.breaker().getState();
    return state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.FORCED_OPEN;
  }

  /**
   * The failure policy's decision. LOCAL_SHARE: what was free when the store last answered (the whole
   * limit in a window it never answered for) is split evenly between the nodes, and this node admits
   * within its part what the store has not acknowledged from it, and within an even split of the whole
   * limit what it admitted in all; the nodes' parts add up to what was free, so nodes cut off together
   * stay within the limit in the window the fault began too, whatever each had admitted before it (the
   * even split of the whole limit alone let the nodes that had admitted less add up to more). With the
   * breaker open ({@code breakerOpen}) on a fixed window, the node also fixes its part for the rest of
   * the window: once the store is back, other nodes may still be on theirs, and it must not spend
   * budget the store does not show yet (see the share cap in decide). It holds the part for at most
   * {@link #shareHoldNanos} after its last decision on the share: the time nodes cut off together take
   * to come back (a breaker's wait in the open state and a flush, twice); a node cut off for longer than
   * the others is a partial cut, where LOCAL_SHARE passes the limit by the cut nodes' shares anyway.
   */
  private boolean fallbackAdmits(KeyView view, double prevWeight, long cost, boolean breakerOpen, long now) {
    switch (onStoreFailure) {
      case FAIL_OPEN:
        return true;
      case FAIL_CLOSED:
        return false;
      default:
        if (regional && view.share < 0) {
          // a region's node that cannot reach its store and holds no share for this window admits
          // nothing: the coordinator, which sees it stop beating, counts the region at the shares its
          // leases gave only until they run out, and G / R now could push the regions' sum over G (a
          // node that never read a share, restarted while cut off, included)
          return false;
        }
        int nodes = Math.max(1, activeNodes.getAsInt());
        double free = Math.max(0, capacity(view) - (view.globalPrev * prevWeight + view.globalCur));
        // parts rounded down: rounded up, each node's part and whole split gained up to a permit, and
        // three nodes cut off together admitted 12 of a limit of 10 (a limit below the node count
        // admits nothing while every node is cut off: no node can tell which of them may)
        long part = (long) Math.floor(free / nodes + 1e-9);
        // and never more than an even split of the whole limit, its own admissions counted: that
        // bound is exact where the nodes had admitted evenly, while the parts of what was free rest on
        // the counts of each node's last answer, up to a sync interval apart (and behind each other)
        long whole = capacity(view) / nodes;
        if (breakerOpen && !sliding) {
          if (view.shareCapWindow != view.window || now >= view.shareCapUntil) {
            view.shareCapWindow = view.window;
            view.shareCap = Math.min(view.ownCur - view.pendingCur + part, Math.max(view.ownCur, whole));
          }
          view.shareCapUntil = now + shareHoldNanos;
        }
        double unacknowledged = view.pendingPrev * prevWeight + view.pendingCur;
        double own = view.ownPrev * prevWeight + view.ownCur;
        return unacknowledged + cost <= part && own + cost <= whole;
    }
  }

  /**
   * Reservation mode: how much to ask for at once. Half of a node's share of what is left (so that
   * grants shrink as the budget does and one node cannot take it all), at most the batch size.
   */
  private long leaseSize(KeyView view) {
    long left = view.lastRemaining >= 0 ? view.lastRemaining : limit.capacity();
    long nodes = Math.max(1, activeNodes.getAsInt());
    // (nor more than the key is likely to ask until the next regular sync: what a node holds unused
    // at the window's end is budget the others could not have)
    long size = Math.min(batchFor(view), (left + 2 * nodes - 1) / (2 * nodes));
    long expected = expectedUntilSync(view);
    return Math.max(1, expected > 0 ? Math.min(size, expected) : size);
  }

  /** The batch size of a key: larger for a hot key, so that it reaches the store less often. */
  private long batchFor(KeyView view) {
    return view.hot ? batchSize * hotBatchMultiplier : batchSize;
  }

  /**
   * Heavy-hitter detection, on the flusher thread for each key it syncs: the key's admission rate
   * since its last sync against a running mean over synced keys; a key is hot while its rate is at
   * least {@code hotKeyFactor} times the mean and at least {@code minHotRate} per second.
   */
  private void updateHeat(KeyView v, long now) {
    if (v.rateSince == Long.MIN_VALUE) {
      v.rateSince = now;
      return;
    }
    long elapsed = now - v.rateSince;
    if (elapsed < syncIntervalNanos / 2) {
      return; // too short to tell a rate
    }
    double rate = v.hits * 1e9 / elapsed;
    v.hits = 0;
    v.rateSince = now;
    v.rate = v.rate == 0 ? rate : v.rate * 0.5 + rate * 0.5;
    double mean = meanKeyRate;
    meanKeyRate = mean == 0 ? rate : mean * 0.95 + rate * 0.05;
    boolean hot = rate >= minHotRate && rate >= hotKeyFactor * mean;
    if (hot != v.hot) {
      v.hot = hot;
      hotKeys.add(hot ? 1 : -1);
    }
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
  private long allowance(KeyView view, double globalEstimate, boolean fresh, long at, boolean limitReached) {
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
  private long claimHeld(KeyView view, long at) {
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
   * limit is never refused for want of a sync), whichever is most. The store grants less near the
   * limit.
   */
  private long untilNextAnswer(KeyView view) {
    int nodes = Math.max(1, activeNodes.getAsInt());
    long inFlight = (long) Math.ceil(view.rate * 4 * Math.max(calls.roundTripNanos(), flushCycleNanos) / 1e9);
    long errorBudget = (long) (capacity(view) * maxError / nodes);
    return Math.max(1, Math.max(Math.max(batchFor(view), inFlight), errorBudget));
  }

  /**
   * Sliding window: the budget the previous window's count freed, as it faded, since the view was
   * last synced (or since its window began, if that is later).
   */
  private double freedSinceSync(KeyView view, long at) {
    long since = Math.max(view.syncedAt, view.window * windowNanos);
    return sliding && at > since ? (double) view.globalPrev * (at - since) / windowNanos : 0;
  }

  /**
   * Whether the key was at its limit at the last sync: what was left would give each node less
   * than one permit. A sync would then show no room worth its call; the view waits for the regular
   * sync, and meanwhile its allowance grows as a sliding window fades.
   */
  private boolean atLimit(KeyView view, double globalEstimate, long at) {
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
  private long capacity(KeyView v) {
    if (!regional) {
      return limit.capacity();
    }
    return v.share >= 0 ? v.share : counter.staticShare();
  }

  /** When the global count (as last seen) will have room for cost more. */
  private long retryAfter(KeyView v, long at, long cost) {
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

  private KeyView view(String key) {
    return views.viewFor(key);
  }

  /** The flusher's sweep of idle views (see {@link ViewTable#sweepSome}); for tests that drive it. */
  void sweepSome() {
    views.sweepSome();
  }

  /**
   * Under the view's monitor: takes its credit back and counts what decisions took from it as if
   * each had been admitted under the monitor (the view is already queued: the grant came with an
   * admission that queued it, and only a drain of the queue, which settles first, unqueues it).
   */
  private void settle(KeyView v) {
    long used = v.revokeCredit();
    if (used > 0) {
      countAdmitted(v, used);
      v.hits += used;
      v.demandAt = ticker.read();
    }
  }

  /** A key and cost a decision (or a release) of this limit can take. */
  private void checkRequest(String key, long cost) {
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("key: must not be null or empty");
    }
    if (cost < 1 || cost > limit.capacity()) {
      throw new IllegalArgumentException("cost: must be between 1 and the capacity " + limit.capacity()
          + " of limit " + limit.name() + ", got " + cost);
    }
  }

  /** Under the view's monitor: puts it in the flusher's queue, unless it is there already. */
  private void enqueue(KeyView v) {
    if (!v.queued) {
      v.queued = true;
      dirty.add(v);
    }
  }

  /**
   * Under the view's monitor: {@code permits} admitted in the view's window, to be sent, but for those
   * that permits given back after the store counted them pay for (see {@link #release}).
   */
  private void countAdmitted(KeyView v, long permits) {
    long reused = Math.min(permits, v.releasedCur);
    v.releasedCur -= reused;
    v.pendingCur += permits - reused;
    v.unsentCur += permits - reused;
    v.ownCur += permits;
    pendingPermits.add(permits - reused);
  }

  /**
   * Gives back permits an allowed acquire took for the key in the current window (another limit of the
   * request denied it, see {@link io.sluice.node.RequestLimiter}). Permits not sent yet are simply not
   * sent; permits the store has counted already (sent, or taken with a claim) pay for this node's next
   * admissions of the key in the window instead (admitted without asking anyone: they are this node's),
   * so they are never given back twice: at worst the window ends with them unused, as if the request
   * had used them. A request denied again and again therefore holds at most one request's permits per
   * node and key. In exact mode the store counted the permit in its decision and it stays counted.
   */
  @Override
  public void release(String key, long cost, Decision acquired) {
    checkRequest(key, cost);
    if (acquired == null || acquired.outcome() != Outcome.ALLOWED || acquired.limit() != limit) {
      throw new IllegalArgumentException("acquired: must be an allowed decision of this limiter (" + limit.name()
          + "), got " + acquired);
    }
    if (exact != null) {
      giveBackExact(key, cost, acquired);
      return;
    }
    if (tokens != null) {
      // token claims: the permits stay spent. Put back into a holding they would be covered by a grant
      // that did not pay for them, and given back to the store they would lower its backlog under other
      // nodes' claims (see TokenClaims#decide): under-admission, never over
      return;
    }
    KeyView v = views.get(key);
    if (v == null) {
      // a key not in the table was decided on the overflow view, while the table was full (or its
      // view has been dropped since, with its windows over: the window check below refuses those)
      v = views.get(ViewTable.OVERFLOW_KEY);
      if (v == null) {
        return;
      }
    }
    synchronized (v) {
      settle(v);
      long back = Math.min(cost, v.ownCur);
      // (only into the window the permits were counted in: after a roll they are that window's, gone by)
      if (v.window != acquired.window() || v.retired || back <= 0) {
        return;
      }
      v.ownCur -= back;
      if (leases != null) {
        v.leased += back; // (reservation: the permit came out of the node's lease)
        return;
      }
      long unsent = Math.min(back, v.unsentCur);
      v.unsentCur -= unsent;
      v.pendingCur -= unsent;
      pendingPermits.add(-unsent);
      v.releasedCur += back - unsent;
    }
  }

  /**
   * Exact mode: the store took the permits when it decided; one more script gives them back (a
   * bucket its tokens, a window its count in the decision's window), without waiting for the answer:
   * the request is already denied by another limit, and a give-back that fails leaves the permits
   * spent, which errs on the safe side. Not for the log, nor for what the failure policy admitted
   * while the store failed (such decisions carry no window), nor while the breaker is open. A bucket
   * gets its tokens back at the time of the release: the refill between the acquire and the release
   * (the time the request's other limits took to decide) is not taken off, so a release may leave
   * the bucket that much fuller than had the request never come.
   */
  private void giveBackExact(String key, long cost, Decision acquired) {
    if (acquired.window() == Long.MIN_VALUE || storeDown()) {
      return;
    }
    long back = cost;
    KeyView v = windowed ? views.get(key) : null;
    if (v != null) {
      synchronized (v) {
        // at most what this node admitted in that window: releases beyond it hand out no other node's permits
        if (v.window == acquired.window()) {
          back = Math.min(cost, v.ownCur);
          v.ownCur -= back;
        }
      }
    }
    if (back <= 0) {
      return;
    }
    long nowMicros = TimeUnit.NANOSECONDS.toMicros(ticker.read());
    try {
      exact.giveBack(limit, key, back, nowMicros, acquired.window()).whenComplete((done, failure) -> {
        if (failure != null) {
          giveBacksFailed.increment();
        }
      });
    } catch (RuntimeException e) {
      giveBacksFailed.increment(); // (a store that refuses at once: the permits stay spent)
    }
  }

  private void orphan(String key, long window, long amount) {
    orphans.add(new Delta(counter, key, window, amount));
  }

  // ------------------------------------------------------------------ syncing

  private void requestSync() {
    if (syncRequested.compareAndSet(false, true) && flusher != null) {
      LockSupport.unpark(flusher);
    }
  }

  /** The view of a key, or null (for tests that look inside). */
  KeyView viewOf(String key) {
    return views.get(key);
  }

  /** Whether decisions ask the store for claims (for tests that look inside). */
  boolean claimsAsked() {
    return asksClaims();
  }

  /** Whether a decision asked for a sync since the last call (without a flusher: for tests). */
  boolean takeSyncRequest() {
    return syncRequested.getAndSet(false);
  }

  private void flushLoop() {
    while (!closed) {
      if (!syncRequested.get()) {
        LockSupport.parkNanos(this, syncIntervalNanos);
      }
      boolean asked = syncRequested.getAndSet(false);
      if (closed) {
        return;
      }
      long start = System.nanoTime();
      if (asked && lastSyncStart != Long.MIN_VALUE) {
        long cycle = Math.min(start - lastSyncStart, syncIntervalNanos);
        flushCycleNanos = Math.max(cycle, (flushCycleNanos * 7 + cycle) / 8);
      }
      lastSyncStart = start;
      try {
        long now = System.nanoTime();
        if (lastHeartbeat == Long.MIN_VALUE || now - lastHeartbeat >= heartbeatIntervalNanos) {
          lastHeartbeat = now;
          heartbeatNow();
        }
        syncNow();
        sweepSome();
      } catch (RuntimeException e) {
        calls.countFailure(); // kept for the next round; the loop must survive anything
      }
    }
  }

  /**
   * The regular sync: sends what is due (retrying a failed batch first) and waits for the answers:
   * every key's unsent permits, except those a claim still pays for on a key that keeps asking (see
   * {@link #flushAll()}). Returns true when nothing sent is left unacknowledged. Called by the
   * flusher thread; public for tools and tests that drive time themselves.
   */
  public boolean syncNow() {
    return sync(false);
  }

  /**
   * Like {@link #syncNow()}, but also sends the permits a claim still pays for (a regular sync lets
   * those wait until the claim runs low, the batch fills or the key goes idle): afterwards the store
   * counts everything this node admitted. {@link #close()} does this; public for tools and tests.
   */
  public boolean flushAll() {
    return sync(true);
  }

  private boolean sync(boolean everything) {
    return sync(everything, Long.MAX_VALUE);
  }

  /**
   * A sync that starts no new batch after {@code deadline} (System.nanoTime; a batch under way may
   * take up to the flush timeout more) and, once the limiter is closing, none after its deadline:
   * what is left stays unsent. False when the lock was not had by the deadline or anything is left.
   */
  private boolean sync(boolean everything, long deadline) {
    if (deadline == Long.MAX_VALUE) {
      syncLock.lock();
    } else {
      try {
        if (!syncLock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
          return false;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    syncRound++;
    try {
      if (tokens != null) {
        tokens.sweep(ticker.read());
      }
      if (!sender.resendKept()) {
        return false; // (nothing new goes out while a kept batch is unanswered)
      }
      Map<Integer, List<Pending>> byGroup = new HashMap<>();
      for (Delta d; (d = orphans.poll()) != null; ) {
        byGroup.computeIfAbsent(store.group(counter, d.key()), g -> new ArrayList<>()).add(new Pending(null, d));
      }
      List<KeyView> wantLeases = new ArrayList<>();
      List<KeyView> later = new ArrayList<>();
      long drainedAt = ticker.read();
      for (KeyView v; (v = dirty.poll()) != null; ) {
        synchronized (v) {
          if (!drain(v, drainedAt, everything, byGroup, wantLeases)) {
            later.add(v);
          }
        }
      }
      dirty.addAll(later);
      byGroup.values().removeIf(List::isEmpty);
      for (KeyView v : wantLeases) {
        takeLease(v);
      }
      return sender.sendInWaves(new ArrayList<>(byGroup.entrySet()), deadline);
    } finally {
      try {
        refillLostGroups();
      } finally {
        lostGroups.clear();
        syncLock.unlock();
      }
    }
  }

  /**
   * Under the view's monitor, at a sync: puts what the view has to send in its group's list (its
   * windows' deltas, the claim it wants, the settling of a take whose answer never came) and notes
   * a lease it wants. False when the view has nothing that cannot wait for a later sync: it stays
   * queued.
   */
  private boolean drain(KeyView v, long drainedAt, boolean everything, Map<Integer, List<Pending>> byGroup,
      List<KeyView> wantLeases) {
    settle(v);
    if (v.unsentCur == 0 && v.unsentPrev == 0 && !v.prevClaimHeld && v.deniedUnsent == 0 && !v.leaseWanted
        && !v.syncWanted && v.syncedAt != Long.MIN_VALUE && drainedAt - v.syncedAt < syncIntervalNanos) {
      // nothing to send and answered within the sync interval: it waits for the regular sync
      // (a claim it holds is given up there if the key went idle), not for every sync another
      // key asked for
      return false;
    }
    if (!everything && !closed && claimLasts(v, drainedAt)) {
      // a claim that still pays for what the key asks until the next regular sync: its permits
      // are covered (the store counts the claim), so they wait for the claim to run low, the
      // batch to fill or the key to go idle, and a key asked a few times a second costs a few
      // store calls a window, not one per request or sync interval
      updateHeat(v, drainedAt);
      return false;
    }
    v.queued = false;
    v.syncWanted = false;
    updateHeat(v, drainedAt);
    if (v.leaseWanted) {
      wantLeases.add(v);
    }
    int group = store.group(counter, v.key);
    List<Pending> list = byGroup.computeIfAbsent(group, g -> new ArrayList<>());
    // a take whose answer never came goes with this flush, on its window's delta
    boolean settles = v.settleToken != 0 && !v.settleInFlight;
    if (settles) {
      v.settleInFlight = true;
    }
    if (v.unsentPrev > 0 || v.prevClaimHeld || (settles && v.settleWindow == v.window - 1)) {
      // (a delta asks for no claim: it also gives up the one held on the window gone by)
      Delta prev = new Delta(counter, v.key, v.window - 1, v.unsentPrev);
      list.add(new Pending(v, settles && v.settleWindow == v.window - 1 ? settling(v, prev) : prev));
      v.unsentPrev = 0;
      v.prevClaimHeld = false;
    }
    if (settles && v.settleWindow < v.window - 1) {
      list.add(new Pending(v, settling(v, new Delta(counter, v.key, v.settleWindow, 0))));
    }
    // always send the current window, even with nothing new: the answer refreshes the view
    // (in reservation mode the lease answer does that, so only real deltas go)
    if (leases == null || v.unsentCur > 0) {
      Delta d = new Delta(counter, v.key, v.window, v.unsentCur, v.deniedUnsent);
      if (claimsKept) {
        // a claim for what the node will admit until its next answer; none once the key has
        // been idle for a sync interval (a claim held blocks the other nodes)
        // (a key asked less than about once a sync interval holds none either: its next request
        // asks the store, which costs less than a claim held and refreshed at every sync)
        boolean idle = v.demandAt == Long.MIN_VALUE || drainedAt - v.demandAt > idleAfterNanos(v, drainedAt);
        long want = idle ? 0 : Math.min(untilNextAnswer(v), expectedDemand(v, drainedAt));
        d = d.claiming(Math.min(want, counter.limit().capacity()), claimNodes());
      }
      if (settles && v.settleWindow == v.window) {
        d = settling(v, d);
      }
      boolean release = claimsKept && d.want() == 0;
      if (release) {
        v.releasesInFlight++; // decisions do not ask for claims until it is answered
      }
      list.add(new Pending(v, d, release));
      v.unsentCur = 0;
      v.deniedUnsent = 0;
    }
    return true;
  }

  /**
   * Under the view's monitor, at a drain: whether the view holds a claim on the current window that
   * still pays for what the key is expected to ask until the next regular sync, with nothing else to
   * send and no sync asked for, on a key not idle and still far below its limit (nearer, a claim
   * held unused would keep the last permits from the nodes that have requests for them).
   */
  private boolean claimLasts(KeyView v, long now) {
    if (!asksClaims() || v.claim < 0 || v.syncWanted || v.unsentPrev > 0 || v.prevClaimHeld || v.deniedUnsent > 0
        || v.settleToken != 0
        || v.window != Math.floorDiv(now, windowNanos) || v.demandAt == Long.MIN_VALUE
        || now - v.demandAt > idleAfterNanos(v, now) || claimHorizonNanos(v, now) <= 2 * syncIntervalNanos) {
      return false;
    }
    return claimHeld(v, now) - v.pendingCur >= Math.max(1, expectedUntilSync(v));
  }

  /** Under the view's monitor: {@code d} settling the view's take whose answer never came. */
  private static Delta settling(KeyView v, Delta d) {
    return d.settling(v.settleToken, v.settlePermits, v.settleAdmitted);
  }

  /** Reservation mode: asks the store for the view's next grant and adds it to the view. */
  private void takeLease(KeyView v) {
    long w;
    long want;
    synchronized (v) {
      w = v.window;
      want = leaseSize(v);
    }
    long elapsedMicros = TimeUnit.NANOSECONDS.toMicros(ticker.read() - w * windowNanos);
    LeaseStore.Lease lease = calls.guarded(() -> leases.lease(counter, v.key, w, elapsedMicros, want));
    synchronized (v) {
      v.leaseWanted = false;
      if (lease == null) {
        if (!v.queued) { // ask again on the next round
          v.leaseWanted = true;
          v.queued = true;
          dirty.add(v);
        }
        return;
      }
      if (v.window != w) {
        return; // the window ended while we asked: the grant is given up (under-admission only)
      }
      takeLeaseAnswer(v, lease, want, ticker.read());
    }
  }

  private void requeue(Pending p) {
    if (p.view == null) {
      orphans.add(p.delta);
      return;
    }
    synchronized (p.view) {
      settle(p.view);
      released(p);
      if (p.delta.settle() != 0 && p.view.settleToken == p.delta.token()) {
        p.view.settleInFlight = false; // the next drain sends it again
        p.view.syncWanted = true;
      }
      if (p.delta.window() == p.view.window) {
        p.view.unsentCur += p.delta.amount();
        p.view.deniedUnsent += p.delta.denied();
      } else if (p.delta.window() == p.view.window - 1) {
        p.view.unsentPrev += p.delta.amount();
      } else if (p.delta.amount() > 0) {
        // (its permits only: a settle stays with the view, which sends it again; an orphaned copy as
        // well would settle twice)
        orphans.add(new Delta(counter, p.delta.key(), p.delta.window(), p.delta.amount()));
      }
      enqueue(p.view);
    }
  }

  /** Under the view's monitor: a release delta is answered (or back among the unsent): decisions may ask again. */
  private static void released(Pending p) {
    if (p.release) {
      p.view.releasesInFlight--;
      p.view.notifyAll();
    }
  }

  /** Takes a batch's answer into the views it carried. */
  private boolean answered(InFlight f, long index, FlushResult result) {
    long now = ticker.read();
    int group = f.batch.group();
    if (result.storeForgot()) {
      storeLosses.increment();
      lostGroups.putIfAbsent(group, numberedDone.getOrDefault(group, 0L));
    }
    Long doneBeforeLoss = lostGroups.get(group);
    if (doneBeforeLoss != null) {
      // this answer came from the store that lost its data: what this node had admitted before goes
      // again before the answer's own permits are taken off the views' pending (they are in the new store)
      for (Pending p : f.parts) {
        if (p.view != null) {
          refilledPermits.add(refill(p.view, doneBeforeLoss));
        }
      }
    }
    if (doneBeforeLoss == null) {
      // (an answer from a store found to have lost its data proves nothing about the old one: see refill)
      numberedDone.merge(group, index, Math::max);
    }
    deltasSent.add(f.parts.size());
    for (int i = 0; i < f.parts.size(); i++) {
      Pending p = f.parts.get(i);
      pendingPermits.add(-p.delta.amount());
      if (p.view == null) {
        continue;
      }
      KeyView v = p.view;
      synchronized (v) {
        settle(v); // the credit was sized on the counts this answer replaces
        released(p);
        if (p.delta.settle() != 0 && v.settleToken == p.delta.token()) {
          // the take is settled: a permit the failure policy admitted is counted now, one way or the other
          if (p.delta.settle() > 0) {
            if (p.delta.window() == v.window) {
              v.pendingCur -= p.delta.settle();
            } else if (p.delta.window() == v.window - 1) {
              v.pendingPrev -= p.delta.settle();
            }
            pendingPermits.add(-p.delta.settle());
          }
          v.settleToken = 0;
          v.settleInFlight = false;
        }
        long w = p.delta.window();
        if (w == v.window) {
          v.pendingCur -= p.delta.amount();
          if (f.sentAt < v.claimCallSentAt) {
            // a decision's claim call went out after this flush and was answered first: which of the
            // two the store ran last is not known here (Redis runs them in order, Hazelcast may not),
            // so the view keeps the smaller claim and the larger count of the two answers
            mergeOlderAnswer(v, result, i);
          } else {
            takeAnswer(v, p.delta, result, i, now, TimeUnit.MICROSECONDS.toNanos(f.batch.nowMicros()));
          }
        } else if (w == v.window - 1) {
          v.globalPrev = result.current(i);
          v.pendingPrev -= p.delta.amount();
          // the claim on the window gone by is given up: what it held may be free now
          v.nothingFreeUntil = Long.MIN_VALUE;
        }
      }
    }
    return true;
  }

  /** The number of the last numbered flush answered on the key's group (0: none yet). */
  private long numberedDone(String key) {
    return numberedDone.getOrDefault(store.group(counter, key), 0L);
  }

  /**
   * The store lost its data on a group (a numbered flush's answer said so, {@link
   * FlushResult#storeForgot()}): every view of the group sends again what this node admitted in the
   * windows that still weigh and the store had acknowledged, so that the counts are whole again instead
   * of starting over (the other nodes do the same for theirs, each when its own flush finds the store
   * changed). The views of the batches answered by the new store do so as their answers come (see
   * send); the others here, in one pass over the table at the end of the sync, whatever the number of
   * groups that lost their data (a Redis Cluster restarted whole: one per slot).
   */
  private void refillLostGroups() {
    if (lostGroups.isEmpty()) {
      return;
    }
    long permits = 0;
    int keys = 0;
    for (KeyView v : views.all()) {
      Long doneBeforeLoss = lostGroups.get(store.group(counter, v.key));
      if (doneBeforeLoss != null) {
        long sent = refill(v, doneBeforeLoss);
        permits += sent;
        keys += sent > 0 ? 1 : 0;
      } else {
        // another group (a slot of a Redis Cluster) may have lost its data too, unseen until a numbered
        // flush reaches it: every view goes with the next sync, which finds out
        synchronized (v) {
          v.syncWanted = true;
          enqueue(v);
        }
      }
    }
    refilledPermits.add(permits);
    LOG.log(System.Logger.Level.WARNING, "sluice: limiter {0} (node {1}): the store lost its data on {2} group(s) (no"
        + " record of this node''s batches it had acknowledged); sending again {3} admitted permits of {4} keys and"
        + " more as their flushes are answered", limit.name(), nodeId, lostGroups.size(), permits, keys);
  }

  /**
   * One view of a group whose store lost its data, once per sync: its admitted permits the old store
   * had acknowledged go back among its unsent ones, and its claims are gone (it holds none until it
   * asks again). Permits of takes answered after the last numbered flush that reached the old store was
   * sent ({@code doneBeforeLoss}) are left out: they may be in the new store already (a take is not
   * numbered), and sending them again could count them twice; those that reached the old one stay lost
   * (at most a sync interval's takes). Returns the permits it sends again.
   */
  private long refill(KeyView v, long doneBeforeLoss) {
    if (leases != null || exact != null) {
      return 0; // (reservation and exact modes: the store counts when it grants or decides, not by flushes)
    }
    synchronized (v) {
      if (v.refilledRound == syncRound || v.window == Long.MIN_VALUE) {
        return 0;
      }
      v.refilledRound = syncRound;
      settle(v);
      boolean takesUnproven = doneBeforeLoss <= v.takenMark;
      long cur = Math.max(0, v.ownCur - v.pendingCur - (takesUnproven ? v.takenCur : 0));
      long prev = Math.max(0, v.ownPrev - v.pendingPrev - (takesUnproven ? v.takenPrev : 0));
      v.takenCur = 0; // (accounted for: sent again, or left in the new store)
      v.takenPrev = 0;
      v.unsentCur += cur;
      v.pendingCur += cur;
      v.unsentPrev += prev;
      v.pendingPrev += prev;
      pendingPermits.add(cur + prev);
      v.claim = -1;
      v.claimNodes = 0;
      v.prevClaimHeld = false;
      v.noneFree = false;
      v.nothingFreeUntil = Long.MIN_VALUE;
      v.releasedCur = 0; // (given back after the old store counted them: the new one never did)
      if (cur + prev > 0) {
        v.syncWanted = true;
        enqueue(v);
      }
      return cur + prev;
    }
  }

  /**
   * Under the view's monitor: an answer to a flush sent before the view's last claim call and answered
   * after it. A claim call with a take leaves a smaller claim than the flush before it did, so the
   * later-arriving answer must not raise the claim back: the view keeps the smaller claim, the smaller
   * part of the fading and the larger counts (under-use at worst, never over-admission).
   */
  private void mergeOlderAnswer(KeyView v, FlushResult result, int i) {
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
  private void takeAnswer(KeyView v, Delta delta, FlushResult result, int i, long now, long askedAt) {
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
          v.nothingFreeUntil = now + (syncIntervalNanos << Math.min(3, v.fruitlessAsks));
          v.fruitlessAsks++;
        } else if (delta.need() > 0) {
          v.fruitlessAsks = 0;
        }
        v.claim = result.claim(i);
        v.claimAt = askedAt;
        v.claimNodes = result.split(i); // 0: no part of a sliding window's fading
        if (v.claim > 0 || v.claimNodes > 0) {
          // a claim held (or a sliding window's part of the fading, held even with a claim of 0, as
          // after a take) blocks the other nodes: the next regular sync gives it up if the key goes idle
          enqueue(v);
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

  /** Tells the registry this node is alive and learns how many are; public for tests and tools. */
  public int heartbeatNow() {
    Integer alive = calls.guarded(() -> store.heartbeat(nodeId, System.currentTimeMillis(),
        Duration.ofNanos(3 * heartbeatIntervalNanos)));
    if (alive != null) {
      registeredNodes = Math.max(1, alive);
    }
    return Math.max(1, registeredNodes);
  }

  /** The circuit breaker around this node's store calls (for metrics and tests). */
  public CircuitBreaker circuitBreaker() {
    return calls.breaker();
  }

  /** Exact mode: permits given back ({@link #release}) whose give-back failed, so they stay spent. */
  public long giveBacksFailed() {
    return giveBacksFailed.sum();
  }

  /** Decisions made by the fallback policy while the breaker was open. */
  public long fallbackDecisions() {
    return fallbackDecisions.sum();
  }

  /** Total time spent in store calls, nanoseconds. */
  public long storeNanos() {
    return calls.nanos();
  }

  /** Keys currently detected as hot (heavy hitters). */
  public long hotKeys() {
    return hotKeys.sum();
  }

  /** The number of nodes this limiter divides its allowances and shares by. */
  public int activeNodes() {
    return Math.max(1, activeNodes.getAsInt());
  }

  /** Nodes alive as last seen through the registry (1 until the first heartbeat). */
  public int registeredNodes() {
    return Math.max(1, registeredNodes);
  }

  /**
   * Stops the flusher and flushes what is left, retrying until the flush timeout has passed: returns
   * within about twice the flush timeout (a store call under way at the deadline may take one flush
   * timeout more). What could not be flushed in that time (the store unreachable, or too much left)
   * is lost to the store: a warning says how many permits, and {@link #pending()} still counts them.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    long deadline = System.nanoTime() + flushTimeout.toNanos();
    closeDeadline = deadline;
    closed = true;
    if (flusher != null) {
      LockSupport.unpark(flusher);
      try {
        flusher.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    while (!sync(true, deadline) && System.nanoTime() < deadline) {
      LockSupport.parkNanos(10_000_000L);
    }
    if (!storeDown()) {
      // out of the registry on purpose: a region coordinator tells this from a node cut off (which may
      // still be admitting) and does not hold the region's shares for it
      calls.guarded(() -> store.leave(nodeId, System.currentTimeMillis()));
    }
    long left = pending();
    if (left > 0) {
      LOG.log(System.Logger.Level.WARNING, "sluice: limiter {0} (node {1}) closed with {2} admitted permits not"
          + " flushed to the store within the flush timeout ({3} ms): the store does not count them", limit.name(),
          nodeId, left, flushTimeout.toMillis());
    }
  }

  // ------------------------------------------------------------------ numbers

  /**
   * Decisions that waited for a store call: exact checks (batch size 1) and, in the approximate
   * mode, decisions on a key with no claim that pays for them (a cold key, a small limit, a cost
   * above what the node holds).
   */
  public long waitedDecisions() {
    return waitedDecisions.sum();
  }

  /** Total time decisions spent waiting for the store, nanoseconds (see {@link #waitedDecisions()}). */
  public long waitedNanos() {
    return waitedNanos.sum();
  }

  /** Decisions that let the request through (allowed, soft or shadow). */
  public long admitted() {
    return admitted.sum();
  }

  public long denied() {
    return denied.sum();
  }

  /** Denials answered from the denial cache, without looking at counts or the store. */
  public long cachedDenials() {
    return cachedDenials.sum();
  }

  /**
   * Times a flush found that the store had lost its data (a restart without persistence, a flush of
   * every key), after which this node sent its admitted permits of the windows that still weigh again.
   */
  public long storeDataLosses() {
    return storeLosses.sum();
  }

  /** Admitted permits sent to the store again after it lost its data ({@link #storeDataLosses()}). */
  public long refilledPermits() {
    return refilledPermits.sum();
  }

  /** Flush calls made to the store, retries included. */
  public long storeCalls() {
    return calls.calls();
  }

  /**
   * Calls this limiter's store refused for want of memory since it was opened (Redis: maxmemory
   * reached under noeviction), counted by the store for every limit on it.
   */
  public long storeOutOfMemoryErrors() {
    return store.outOfMemoryErrors();
  }

  public long storeFailures() {
    return calls.failures();
  }

  /** Permits admitted here and not yet acknowledged by the store. */
  public long pending() {
    return pendingPermits.sum();
  }

  /** Deltas (one key and window each) acknowledged by the store: divided by store calls, the flush size. */
  public long deltasSent() {
    return deltasSent.sum();
  }

  public int keys() {
    return views.size();
  }

  public long overflowed() {
    return views.overflowed();
  }

  /**
   * Whether nodes batch the limit's permits and claim parts of it (the window algorithms: fixed window,
   * sliding window counter); the other algorithms are decided by one store script per decision, so a
   * batch size above 1 is refused for them.
   */
  public static boolean batches(Limit limit) {
    return limit.algorithm() == Algorithm.FIXED_WINDOW || limit.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER;
  }

  /**
   * Whether nodes may claim the limit's tokens ahead with a batch size above 1 (token buckets and
   * leaky bucket meters, see {@link TokenClaims}); their default is exact mode.
   */
  public static boolean claimsTokens(Limit limit) {
    return limit.algorithm() == Algorithm.TOKEN_BUCKET || limit.algorithm() == Algorithm.LEAKY_BUCKET;
  }

  /**
   * A limiter for {@code limit} on {@code store}, shared as {@code config} says. One config may serve
   * every limit of a process: its batch size applies to the limits that batch (window limits); token
   * buckets, leaky buckets and sliding logs are shared in exact mode (batch size 1) whatever it says.
   *
   * @throws IllegalArgumentException naming the field, for a config the limit or the store cannot
   *     take (a sync interval above half the window, reservation mode without a lease store, ...)
   */
  public static SyncedLimiter of(Limit limit, CounterStore store, SyncConfig config) {
    Builder b = builder(limit, store);
    if (config == null) {
      throw new IllegalArgumentException("config: must not be null");
    }
    return b.build(config);
  }

  /** The settings this limiter was built with (its batch size as set, see {@link #batchSize()}). */
  public SyncConfig config() {
    return config;
  }

  /** The batch size in force: 1 in exact mode, else what a key may gather before it is flushed. */
  public long batchSize() {
    return batchSize;
  }

  /**
   * Settings of a {@link SyncedLimiter} for one limit and store: a {@link SyncConfig} and the checks
   * that need the limit (made at once where the setter alone can tell, else in {@link #build}).
   */
  public static final class Builder {
    public static final long DEFAULT_BATCH_SIZE = SyncConfig.DEFAULT_BATCH_SIZE;
    public static final Duration DEFAULT_SYNC_INTERVAL = SyncConfig.DEFAULT_SYNC_INTERVAL;
    public static final double DEFAULT_MAX_ERROR = SyncConfig.DEFAULT_MAX_ERROR;
    public static final Duration DEFAULT_CLAIM_TIMEOUT = SyncConfig.DEFAULT_CLAIM_TIMEOUT;

    private final Limit limit;
    private final CounterStore store;
    private SyncConfig.Builder config = SyncConfig.custom();
    /**
     * A bucket's batch size, set on this builder only: a config shared by several limits leaves
     * buckets in exact mode (their token claims are opt-in, see {@link TokenClaims}).
     */
    private long bucketBatchSize = 1;

    Builder(Limit limit, CounterStore store) {
      if (limit == null) {
        throw new IllegalArgumentException("limit: must not be null");
      }
      if (store == null) {
        throw new IllegalArgumentException("store: must not be null");
      }
      if (limit.algorithm() == Algorithm.LEAKY_BUCKET_SHAPER) {
        throw new IllegalArgumentException("limit: " + limit.name() + " is a leaky bucket shaper, which delays"
            + " requests in one local queue and is not shared across nodes (use LEAKY_BUCKET, the meter, or"
            + " TOKEN_BUCKET)");
      }
      this.limit = limit;
      this.store = store;
    }

    /**
     * Every setting from {@code config}, replacing those set on this builder before; its batch size
     * applies if the limit batches (see {@link SyncedLimiter#of}).
     */
    public Builder config(SyncConfig config) {
      if (config == null) {
        throw new IllegalArgumentException("config: must not be null");
      }
      this.config = config.toBuilder();
      this.bucketBatchSize = 1;
      return this;
    }

    /** See {@link SyncConfig.Builder#nodeId}. */
    public Builder nodeId(String nodeId) {
      config.nodeId(nodeId);
      return this;
    }

    public Builder ticker(Ticker ticker) {
      config.ticker(ticker);
      return this;
    }

    /**
     * See {@link SyncConfig.Builder#batchSize}: 1 means exact checking. A token bucket or leaky bucket
     * meter given a batch size above 1 here claims tokens ahead ({@link TokenClaims}: at most that many
     * at once; needs a {@link TokenStore}); their default is 1, exact. A sliding log takes 1 only.
     */
    public Builder batchSize(long batchSize) {
      config.batchSize(batchSize);
      if (claimsTokens(limit)) {
        bucketBatchSize = batchSize;
      }
      if (batchSize > 1 && !batches(limit) && !claimsTokens(limit)) {
        throw new IllegalArgumentException("batchSize: " + limit.name() + " is a " + limit.algorithm()
            + ", shared in exact mode only (batch size 1, one store script per decision); batches and claims"
            + " count windows (FIXED_WINDOW, SLIDING_WINDOW_COUNTER) and buckets (TOKEN_BUCKET, LEAKY_BUCKET),"
            + " got " + batchSize);
      }
      return this;
    }

    /** See {@link SyncConfig.Builder#syncInterval}: at most half the window. */
    public Builder syncInterval(Duration interval) {
      config.syncInterval(interval);
      checkSyncInterval(interval);
      return this;
    }

    private void checkSyncInterval(Duration interval) {
      if (batches(limit) && interval.toNanos() * 2 > limit.periodNanos()) {
        throw new IllegalArgumentException("syncInterval: at most half the window "
            + Duration.ofNanos(limit.periodNanos()) + " of limit " + limit.name() + ", got " + interval);
      }
    }

    /** See {@link SyncConfig.Builder#maxError}. */
    public Builder maxError(double maxError) {
      config.maxError(maxError);
      return this;
    }

    /** Reservation mode, see {@link SyncConfig.Builder#reservation}. */
    public Builder reservation() {
      config.reservation(true);
      return this;
    }

    /** See {@link SyncConfig.Builder#hotKeys}. */
    public Builder hotKeys(double factor, double minRatePerSecond, long batchMultiplier) {
      config.hotKeys(factor, minRatePerSecond, batchMultiplier);
      return this;
    }

    /** See {@link SyncConfig.Builder#listener}. */
    public Builder listener(LimitListener listener) {
      config.listener(listener);
      return this;
    }

    /** What to decide while the store is unreachable (the breaker is open); default LOCAL_SHARE. */
    public Builder onStoreFailure(StoreFailurePolicy policy) {
      config.onStoreFailure(policy);
      return this;
    }

    /** The circuit breaker's settings; the default is sized for flush rates (see the class doc). */
    public Builder circuitBreaker(CircuitBreakerConfig breakerConfig) {
      config.circuitBreaker(breakerConfig);
      return this;
    }

    /** See {@link SyncConfig.Builder#heartbeatInterval}. */
    public Builder heartbeatInterval(Duration interval) {
      config.heartbeatInterval(interval);
      return this;
    }

    /** See {@link SyncConfig.Builder#activeNodes}. */
    public Builder activeNodes(IntSupplier activeNodes) {
      config.activeNodes(activeNodes);
      return this;
    }

    public Builder maxKeys(int maxKeys) {
      config.maxKeys(maxKeys);
      return this;
    }

    /** See {@link SyncConfig.Builder#claimTimeout}. */
    public Builder claimTimeout(Duration timeout) {
      config.claimTimeout(timeout);
      return this;
    }

    /** How long one flush may take before it counts as failed (and is retried unchanged). */
    public Builder flushTimeout(Duration timeout) {
      config.flushTimeout(timeout);
      return this;
    }

    /**
     * Makes the limit one region's part of a global quota: the limit's capacity is the global quota
     * G per window, shared by {@code regions} regions, each with its own store. The node enforces its
     * region's share, which a region coordinator writes to the store and every flush reads back (no
     * extra store call); without a share, or once the coordinator's lease on it has run out, the
     * static share G / regions. Denied requests are flushed too, as the demand the coordinator
     * weighs. Needs a fixed-window limit, the approximate mode (batch size above 1, no reservation)
     * and a store that keeps regional quotas (a standalone {@code RedisCounterStore}).
     */
    public Builder regionalQuota(int regions) {
      if (regions < 1) {
        throw new IllegalArgumentException("regionalQuota: regions must be at least 1, got " + regions);
      }
      config.regionalQuota(regions);
      return this;
    }

    /** Whether a flusher thread syncs on its own (default); without it, call {@link #syncNow()}. */
    public Builder autoSync(boolean autoSync) {
      config.autoSync(autoSync);
      return this;
    }

    public SyncedLimiter build() {
      return build(config.build());
    }

    private SyncedLimiter build(SyncConfig c) {
      // buckets batch only when this builder was given a batch size (their default is exact mode)
      long batchSize = batches(limit) ? c.batchSize().orElse(DEFAULT_BATCH_SIZE)
          : claimsTokens(limit) ? bucketBatchSize : 1;
      if (batchSize > 1 && claimsTokens(limit) && !(store instanceof TokenStore)) {
        throw new IllegalArgumentException("batchSize: a batched " + limit.algorithm() + " needs a store that"
            + " grants token claims (a TokenStore such as RedisCounterStore or HazelcastCounterStore); "
            + store.getClass().getSimpleName() + " is not one");
      }
      boolean reservation = c.reservation();
      if (reservation && !(store instanceof LeaseStore)) {
        throw new IllegalArgumentException("reservation: needs a store that grants leases (a LeaseStore such as"
            + " RedisCounterStore); " + store.getClass().getSimpleName() + " is not one");
      }
      if (!batches(limit) && !(store instanceof ExactStore)) {
        throw new IllegalArgumentException("limit: " + limit.name() + " is a " + limit.algorithm() + ", shared by"
            + " the store's exact scripts only (an ExactStore such as RedisCounterStore or HazelcastCounterStore); "
            + store.getClass().getSimpleName() + " is not one");
      }
      if (batchSize == 1 && !reservation && !(store instanceof ExactStore)) {
        throw new IllegalArgumentException("batchSize: 1 means exact checking, one store call per decision,"
            + " which needs a store with exact scripts (an ExactStore such as RedisCounterStore); "
            + store.getClass().getSimpleName() + " is not one");
      }
      checkSyncInterval(c.syncInterval());
      if (!batches(limit)) {
        if (reservation) {
          throw new IllegalArgumentException("reservation: leases are taken from window limits (FIXED_WINDOW,"
              + " SLIDING_WINDOW_COUNTER); " + limit.name() + " is a " + limit.algorithm());
        }
        if (limit.algorithm() != Algorithm.SLIDING_WINDOW_LOG) {
          Counter.of(limit); // a refill period in whole microseconds, a burst the store can hold: or a message
        }
      }
      if (c.regions() > 0) {
        Counter.regional(limit, c.regions()); // a fixed window with room for every region, or a message
        if (reservation || batchSize == 1) {
          throw new IllegalArgumentException("regionalQuota: shares are enforced in the approximate mode; not with "
              + (reservation ? "reservation" : "batchSize 1 (exact mode)"));
        }
        if (!store.sharesRegionalQuotas()) {
          throw new IllegalArgumentException("regionalQuota: needs a store that keeps regional quotas (a standalone"
              + " RedisCounterStore); " + store.getClass().getSimpleName() + " does not");
        }
      }
      return new SyncedLimiter(limit, store, c, batchSize);
    }
  }
}
