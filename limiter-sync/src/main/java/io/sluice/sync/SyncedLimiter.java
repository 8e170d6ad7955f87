package io.sluice.sync;

import io.sluice.node.Algorithm;
import io.sluice.node.Decision;
import io.sluice.node.KeyedLimiter;
import io.sluice.node.Limit;
import io.sluice.node.LimitListener;
import io.sluice.node.Ticker;
import io.sluice.sync.internal.LimiterCore;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.TokenStore;
import java.time.Duration;
import java.util.function.IntSupplier;

/**
 * A node's limiter for one limit shared with other nodes through a {@link CounterStore}. For a window
 * limit (fixed window or sliding window counter) decisions are local when the node holds a claim that
 * pays for them; the permits admitted are flushed in batches. Token buckets and leaky buckets (meters)
 * are shared in exact mode by default (batch size 1: one store script per decision, the algorithm's
 * own, as Bucket4j and Redisson do) and, given a batch size, by token claims ({@code TokenClaims}:
 * tokens taken from the store's bucket ahead, each used no earlier than its due time); sliding window
 * logs in exact mode only.
 * (The leaky bucket shaper delays requests in a queue of one process and is not shared.)
 *
 * <h2>How a node decides</h2>
 * Each key has a view: the global counts as of the last sync, plus what this node admitted since
 * (pending). A request is admitted when the estimate over global and pending counts stays within the
 * limit and this node's pending permits stay within its <em>claim</em>: permits the store reserved for
 * it beyond what it counted from it (see {@code flush.lua}). Counts plus claims never pass the limit,
 * so nodes admitting within their claims never pass it together, however late a flush comes. The
 * store grants ahead of demand at most half of what no count holds, an even part per node. A decision
 * the claim cannot pay, on a key below its limit as far as the node knows, asks the store for a claim
 * of at least what it needs, in one call under the key's monitor, and decides from the answer; if the
 * call fails, the {@link StoreFailurePolicy} decides. A key whose global count alone is over the limit
 * is denied locally, without store calls, until the count can allow it again. Regional quotas (and a
 * store that keeps no claims) use a share instead of claims. docs/architecture.md follows one decision
 * and one flush; the README's "Claims" and "Which decisions wait" say which decisions ask the store.
 *
 * <h2>Hot keys</h2>
 * A key far above the running mean of the keys' rates (a heavy hitter) gets larger batches and wakes
 * the flusher at most ten times per sync interval ({@link SyncConfig.Builder#hotKeys}).
 *
 * <h2>When the store fails</h2>
 * Every store call goes through a Resilience4j circuit breaker ({@link StoreBreakerConfig}) and waits
 * at most the flush timeout; while the breaker is open the {@link StoreFailurePolicy} decides, and the
 * permits admitted meanwhile are flushed once calls get through again. Each batch carries this node's
 * next sequence number for its store group (from the clock, so a restarted node never reuses one); a
 * batch that fails or times out is sent again unchanged before anything new, and the store applies a
 * sequence once: nothing is lost, nothing counted twice. {@link #close()} flushes what is left.
 *
 * <h2>Concurrency</h2>
 * Every method may be called from any thread. Decisions on different keys do not wait for each other;
 * a decision that asks the store holds only its key through that one call. Inside: {@code
 * io.sluice.sync.internal.LimiterCore}, which documents how the state is shared.
 */
public final class SyncedLimiter implements KeyedLimiter {
  /** The parts, wired once for the limit's algorithm and mode; this class passes its calls on. */
  final LimiterCore core;

  private SyncedLimiter(Limit limit, CounterStore store, SyncConfig c, long batchSize, java.time.Clock breakerClock) {
    this.core = new LimiterCore(limit, store, c, batchSize, breakerClock);
  }

  public static Builder builder(Limit limit, CounterStore store) {
    return new Builder(limit, store);
  }

  @Override
  public Limit limit() {
    return core.limit();
  }

  public String nodeId() {
    return core.nodeId();
  }

  // ------------------------------------------------------------------ decisions

  /** Whether one permit of the key is admitted; allocation-free for a known key in the approximate mode. */
  public boolean tryAcquire(String key) {
    return core.tryAcquire(key, 1);
  }

  @Override
  public boolean tryAcquire(String key, long cost) {
    return core.tryAcquire(key, cost);
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
    return core.acquire(key, cost);
  }

  /**
   * {@link #acquire(String, long)}, or null, having decided nothing, where the decision would wait for
   * the answer to a flush that gives this node's claim on the key up. Public for tools that run the
   * syncs themselves on a simulated clock: they move the clock to that answer and ask again.
   */
  public Decision acquireUnlessAwaitingRelease(String key, long cost) {
    return core.acquireUnlessAwaitingRelease(key, cost);
  }

  /** {@link #acquire(String, long)}, with a soft or shadow breach counted but not told to the listener yet. */
  @Override
  public Decision acquireUntold(String key, long cost) {
    return core.acquireUntold(key, cost);
  }

  @Override
  public void tellBreach(String key, Decision breach) {
    core.tellBreach(key, breach);
  }

  /**
   * {@link #acquire(String, long)} without blocking the caller's thread (an event loop): the same
   * views, claims, store calls, timeouts, breaker, failure policy and meters. A decision that needs no
   * store call is made on the caller's thread (the stage is complete on return); exact mode sends its
   * script and completes on the store's thread when it answers (or on the delay thread after the flush
   * timeout, by the failure policy); a decision that asks for a claim, a lease or a bucket's tokens holds
   * its key's monitor through the call, so it is handed to a bounded pool of waiting threads shared by
   * the process (with 4,096 decisions in its hands, the failure policy decides at once instead), as is
   * a decision on a key whose monitor such a call holds. A decision on the caller's thread still enters
   * its key's monitor, held by others for microseconds (or, in the instant between that check and the
   * call, through one store call, the claim timeout at most).
   *
   * @throws IllegalArgumentException for a null or empty key or a cost out of range, at once
   * @throws IllegalStateException if the limiter is closed, at once
   */
  @Override
  public java.util.concurrent.CompletionStage<Decision> acquireAsync(String key, long cost) {
    return core.acquireAsync(key, cost);
  }

  /**
   * The decision {@link #acquire(String, long)} would make, where it needs no store call and no wait (a
   * claim or lease that pays, a cached denial, the failure policy while the breaker is open), made on
   * the caller's thread; null, having decided and counted nothing, where it would need one (exact mode
   * always). For a server deciding on its event loop that hands only the rest to threads of its own
   * (the Envoy rate limit service); soft and shadow breaches are told to the listener as by
   * {@code acquire}. As {@link #acquireAsync}, it enters the key's monitor, which another decision may
   * hold through one store call in the instant it checks.
   *
   * @throws IllegalArgumentException for a null or empty key or a cost out of range
   * @throws IllegalStateException if the limiter is closed
   */
  public Decision acquireWithoutWaiting(String key, long cost) {
    return core.acquireWithoutWaiting(key, cost);
  }

  /** {@link #acquireAsync}, with a soft or shadow breach counted but not told to the listener yet. */
  @Override
  public java.util.concurrent.CompletionStage<Decision> acquireUntoldAsync(String key, long cost) {
    return core.acquireUntoldAsync(key, cost);
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
    core.release(key, cost, acquired);
  }

  /**
   * Whether a decision asked for a sync since the last call, clearing the request: without a flusher
   * thread ({@code autoSync(false)}) the caller runs that sync ({@link #syncNow()}).
   */
  public boolean takeSyncRequest() {
    return core.takeSyncRequest();
  }

  /**
   * The regular sync: sends what is due (retrying a failed batch first) and waits for the answers:
   * every key's unsent permits, except those a claim still pays for on a key that keeps asking (see
   * {@link #flushAll()}). Returns true when nothing sent is left unacknowledged. Called by the
   * flusher thread; public for tools and tests that drive time themselves.
   */
  public boolean syncNow() {
    return core.sync(false);
  }

  /**
   * {@link #syncNow()}, also sending the permits a claim still pays for: afterwards the store counts
   * everything this node admitted. {@link #close()} does this; public for tools and tests.
   */
  public boolean flushAll() {
    return core.sync(true);
  }

  /** Tells the registry this node is alive and learns how many are; public for tests and tools. */
  public int heartbeatNow() {
    return core.heartbeatNow();
  }

  /**
   * Without a flusher thread ({@code autoSync(false)}): what the flusher thread does about the
   * registry's heartbeat before each of its syncs, on this limiter's clock (a beat rides on the next
   * store call where one comes soon enough, see {@code NodeBeat}). Public for tools that drive time
   * themselves: call it before each regular or asked {@link #syncNow()}, as the flusher thread would
   * ({@link #heartbeatNow()} always calls the store).
   *
   * @throws IllegalStateException when the limiter's own flusher thread runs ({@code autoSync(true)})
   */
  public void heartbeatIfDue() {
    core.heartbeatIfDue();
  }

  /** The circuit breaker around this node's store calls: its state, a hand to force it open, a listener. */
  public StoreBreaker storeBreaker() {
    return core.storeBreaker();
  }

  /** Exact mode: permits given back ({@link #release}) whose give-back failed, so they stay spent. */
  public long giveBacksFailed() {
    return core.giveBacksFailed();
  }

  /** Decisions made by the fallback policy while the breaker was open. */
  public long fallbackDecisions() {
    return core.fallbackDecisions();
  }

  /** Total time spent in store calls, nanoseconds. */
  public long storeNanos() {
    return core.storeNanos();
  }

  /** Keys currently detected as hot (heavy hitters). */
  public long hotKeys() {
    return core.hotKeys();
  }

  /** The number of nodes this limiter divides its allowances and shares by. */
  public int activeNodes() {
    return core.activeNodes();
  }

  /**
   * How far this node's clock is set from its own to agree with the store's ({@link
   * SyncConfig.Builder#alignClockToStore}): positive when the store's clock is ahead; zero when the
   * clock is not aligned or before the store first told its time.
   */
  public java.time.Duration clockOffset() {
    return java.time.Duration.ofNanos(core.clockOffsetNanos());
  }

  /** Nodes alive as last seen through the registry (1 until the first heartbeat). */
  public int registeredNodes() {
    return core.registeredNodes();
  }

  /**
   * Stops the flusher and flushes what is left, retrying until the flush timeout has passed: returns
   * within about twice the flush timeout (a store call under way at the deadline may take one flush
   * timeout more). What could not be flushed in that time (the store unreachable, or too much left)
   * is lost to the store: a warning says how many permits, and {@link #pending()} still counts them.
   */
  @Override
  public void close() {
    core.close();
  }

  // ------------------------------------------------------------------ numbers

  /**
   * Decisions that waited for a store call: exact checks (batch size 1) and, in the approximate
   * mode, decisions on a key with no claim that pays for them (a cold key, a small limit, a cost
   * above what the node holds). Their durations' histogram is the {@code sluice.sync.decisions.waited}
   * timer of {@link SyncedLimiterMetrics}, once bound.
   */
  public long waitedDecisions() {
    return core.waitedDecisions();
  }

  /** Total time decisions spent waiting for the store, nanoseconds (see {@link #waitedDecisions()}). */
  public long waitedNanos() {
    return core.waitedNanos();
  }

  /** Decisions that let the request through (allowed, soft or shadow). */
  public long admitted() {
    return core.admitted();
  }

  public long denied() {
    return core.denied();
  }

  /** Denials answered from the denial cache, without looking at counts or the store. */
  public long cachedDenials() {
    return core.cachedDenials();
  }

  /**
   * Times a flush found that the store had lost its data (a restart without persistence, a flush of
   * every key), after which this node sent its admitted permits of the windows that still weigh again.
   */
  public long storeDataLosses() {
    return core.storeDataLosses();
  }

  /** Admitted permits sent to the store again after it lost its data ({@link #storeDataLosses()}). */
  public long refilledPermits() {
    return core.refilledPermits();
  }

  /** Flush calls made to the store, retries included. */
  public long storeCalls() {
    return core.storeCalls();
  }

  /**
   * Calls this limiter's store refused for want of memory since it was opened (Redis: maxmemory
   * reached under noeviction), counted by the store for every limit on it.
   */
  public long storeOutOfMemoryErrors() {
    return core.storeOutOfMemoryErrors();
  }

  public long storeFailures() {
    return core.storeFailures();
  }

  /** Permits admitted here and not yet acknowledged by the store. */
  public long pending() {
    return core.pending();
  }

  /** Deltas (one key and window each) acknowledged by the store: divided by store calls, the flush size. */
  public long deltasSent() {
    return core.deltasSent();
  }

  public int keys() {
    return core.keys();
  }

  public long overflowed() {
    return core.overflowed();
  }

  /**
   * Whether nodes batch the limit's permits and claim parts of it (the window algorithms: fixed window,
   * sliding window counter). Buckets batch by token claims instead ({@link #claimsTokens}); a sliding
   * log is decided by one store script per decision, and a batch size above 1 is refused for it.
   */
  public static boolean batches(Limit limit) {
    return limit.algorithm() == Algorithm.FIXED_WINDOW || limit.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER;
  }

  /**
   * Whether nodes may claim the limit's tokens ahead with a batch size above 1 (token buckets and
   * leaky bucket meters, see {@code TokenClaims}); their default is exact mode.
   */
  public static boolean claimsTokens(Limit limit) {
    return limit.algorithm() == Algorithm.TOKEN_BUCKET || limit.algorithm() == Algorithm.LEAKY_BUCKET;
  }

  /**
   * A limiter for {@code limit} on {@code store}, shared as {@code config} says. One config may serve
   * every limit of a process: its batch size applies to the limits that batch (window limits), its
   * bucket batch size to token buckets and leaky-bucket meters (1 by default: exact mode); a sliding
   * log is shared in exact mode (batch size 1) whatever it says.
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
    return core.config();
  }

  /** The batch size in force: 1 in exact mode, else what a key may gather before it is flushed. */
  public long batchSize() {
    return core.batchSize();
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
     * A bucket's batch size set on this builder; -1 when none is: the config's bucket batch size (by
     * default 1, exact: token claims are opt-in, see {@code TokenClaims}).
     */
    private long bucketBatchSize = -1;

    Builder(Limit limit, CounterStore store) {
      BuilderChecks.checkLimitAndStore(limit, store);
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
      this.bucketBatchSize = -1;
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
     * meter given a batch size above 1 here claims tokens ahead ({@code TokenClaims}: at most that many
     * at once; needs a {@link TokenStore}); their default is 1, exact. A sliding log takes 1 only.
     */
    public Builder batchSize(long batchSize) {
      config.batchSize(batchSize);
      if (claimsTokens(limit)) {
        bucketBatchSize = batchSize;
      }
      BuilderChecks.checkBatchSize(limit, batchSize);
      return this;
    }

    /** See {@link SyncConfig.Builder#syncInterval}: at most half the window. */
    public Builder syncInterval(Duration interval) {
      config.syncInterval(interval);
      BuilderChecks.checkSyncInterval(limit, interval);
      return this;
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

    /** See {@link SyncConfig.Builder#alignClockToStore}. */
    public Builder alignClockToStore(boolean align) {
      config.alignClockToStore(align);
      return this;
    }

    /** See {@link SyncConfig.Builder#coldKeyAllowance}. */
    public Builder coldKeyAllowance(boolean allowance) {
      config.coldKeyAllowance(allowance);
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

    /** The store circuit breaker's settings; the default is sized for flush rates (see {@link StoreBreakerConfig}). */
    public Builder storeBreaker(StoreBreakerConfig breakerConfig) {
      config.storeBreaker(breakerConfig);
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

    /** See {@link SyncConfig.Builder#minNodes}. */
    public Builder minNodes(int minNodes) {
      config.minNodes(minNodes);
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
     * weighs. Needs a store that keeps regional quotas (a standalone {@code RedisCounterStore}) and a
     * fixed window or sliding window counter in the approximate mode (batch size above 1, no
     * reservation), or a token bucket (G its refill per period, the burst split evenly; the share is of
     * the rate) in exact mode (batch size 1, the default for buckets) or with token claims (a batch size
     * above 1: each claim takes only the tokens the region's bucket holds now), with FAIL_CLOSED or
     * FAIL_OPEN.
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

    /**
     * Tests: the clock the store breaker's wait in the open state runs on (null, the default: the
     * system's), such as the test's simulated time.
     */
    Builder breakerClock(java.time.Clock clock) {
      this.breakerClock = clock;
      return this;
    }

    private java.time.Clock breakerClock;

    public SyncedLimiter build() {
      return build(config.build());
    }

    private SyncedLimiter build(SyncConfig c) {
      // (a bucket's own batch size, set on this builder, over the shared config's bucket batch size)
      long bucket = bucketBatchSize > 0 ? bucketBatchSize : c.bucketBatchSize();
      long batchSize = BuilderChecks.batchSize(limit, store, c, bucket);
      return new SyncedLimiter(limit, store, c, batchSize, breakerClock);
    }
  }
}

