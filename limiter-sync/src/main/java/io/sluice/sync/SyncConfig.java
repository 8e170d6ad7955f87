package io.sluice.sync;

import io.sluice.node.Durations;
import io.sluice.node.LimitListener;
import io.sluice.node.Ticker;
import io.sluice.sync.spi.Delta;
import java.time.Duration;
import java.util.Optional;
import java.util.function.IntSupplier;

/**
 * How a {@link SyncedLimiter} shares its limit with the other nodes: batching, syncing, the error
 * budget, the failure policy and the node's identity. Immutable; one config may serve every limit of a
 * process ({@link SyncedLimiter#of}), in the manner of Resilience4j's {@code RateLimiterConfig}:
 * {@link #custom()} starts from the defaults, {@link #from(SyncConfig)} and {@link #toBuilder()} from
 * another config.
 *
 * <p>Every setter checks what it can check alone and names its field in the message
 * ({@code syncInterval: must be positive, got 0s}); what depends on the limit or the store (a sync
 * interval at most half the window, a store that keeps leases for reservation mode) is checked when
 * the limiter is built, with the same kind of message.
 */
public final class SyncConfig {
  public static final long DEFAULT_BATCH_SIZE = 100;
  public static final Duration DEFAULT_SYNC_INTERVAL = Duration.ofMillis(100);
  public static final double DEFAULT_MAX_ERROR = 0.005;
  public static final Duration DEFAULT_CLAIM_TIMEOUT = Duration.ofMillis(200);
  public static final Duration DEFAULT_FLUSH_TIMEOUT = Duration.ofSeconds(2);
  public static final Duration DEFAULT_HEARTBEAT_INTERVAL = Duration.ofSeconds(1);
  public static final int DEFAULT_MAX_KEYS = 1_000_000;

  private final String nodeId;
  private final Ticker ticker;
  private final long batchSize;
  private final boolean batchSizeSet;
  private final long bucketBatchSize;
  private final Duration syncInterval;
  private final double maxError;
  private final IntSupplier activeNodes;
  private final StoreFailurePolicy onStoreFailure;
  private final StoreBreakerConfig storeBreaker;
  private final Duration heartbeatInterval;
  private final boolean reservation;
  private final double hotKeyFactor;
  private final double minHotRate;
  private final long hotBatchMultiplier;
  private final int maxKeys;
  private final int minNodes;
  private final Duration flushTimeout;
  private final Duration claimTimeout;
  private final boolean autoSync;
  private final boolean coldKeyAllowance;
  private final Boolean alignClockToStore;
  private final int regions;
  private final LimitListener listener;

  private SyncConfig(Builder b) {
    this.nodeId = b.nodeId;
    this.ticker = b.ticker;
    this.batchSize = b.batchSize;
    this.batchSizeSet = b.batchSizeSet;
    this.bucketBatchSize = b.bucketBatchSize;
    this.syncInterval = b.syncInterval;
    this.maxError = b.maxError;
    this.activeNodes = b.activeNodes;
    this.onStoreFailure = b.onStoreFailure;
    this.storeBreaker = b.storeBreaker;
    this.heartbeatInterval = b.heartbeatInterval;
    this.reservation = b.reservation;
    this.hotKeyFactor = b.hotKeyFactor;
    this.minHotRate = b.minHotRate;
    this.hotBatchMultiplier = b.hotBatchMultiplier;
    this.maxKeys = b.maxKeys;
    this.minNodes = b.minNodes;
    this.flushTimeout = b.flushTimeout;
    this.claimTimeout = b.claimTimeout;
    this.autoSync = b.autoSync;
    this.coldKeyAllowance = b.coldKeyAllowance;
    this.alignClockToStore = b.alignClockToStore;
    this.regions = b.regions;
    this.listener = b.listener;
  }

  /** The defaults, with a node id of its own (random). */
  public static SyncConfig ofDefaults() {
    return custom().build();
  }

  /** A builder starting from the defaults, with a random node id. */
  public static Builder custom() {
    return new Builder();
  }

  /** A builder starting from {@code base}. */
  public static Builder from(SyncConfig base) {
    if (base == null) {
      throw new IllegalArgumentException("base: must not be null");
    }
    return new Builder(base);
  }

  /** A builder starting from this config. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  public String nodeId() {
    return nodeId;
  }

  public Ticker ticker() {
    return ticker;
  }

  /**
   * The batch size set, for the limits that batch (window limits); empty when left at its default
   * ({@link #DEFAULT_BATCH_SIZE} for window limits, 1 for the limits shared in exact mode only).
   */
  public Optional<Long> batchSize() {
    return batchSizeSet ? Optional.of(batchSize) : Optional.empty();
  }

  /**
   * For token buckets and leaky-bucket meters: the most tokens a node claims ahead at once; 1 (the
   * default) shares them in exact mode. See {@link Builder#bucketBatchSize}.
   */
  public long bucketBatchSize() {
    return bucketBatchSize;
  }

  public Duration syncInterval() {
    return syncInterval;
  }

  public double maxError() {
    return maxError;
  }

  /** The number of nodes, when set; empty means the node registry in the store (heartbeats). */
  public Optional<IntSupplier> activeNodes() {
    return Optional.ofNullable(activeNodes);
  }

  public StoreFailurePolicy onStoreFailure() {
    return onStoreFailure;
  }

  /** The store circuit breaker's settings (by default {@link StoreBreakerConfig#ofDefaults()}, sized for flush rates). */
  public StoreBreakerConfig storeBreaker() {
    return storeBreaker;
  }

  public Duration heartbeatInterval() {
    return heartbeatInterval;
  }

  public boolean reservation() {
    return reservation;
  }

  public double hotKeyFactor() {
    return hotKeyFactor;
  }

  public double minHotRate() {
    return minHotRate;
  }

  public long hotBatchMultiplier() {
    return hotBatchMultiplier;
  }

  public int maxKeys() {
    return maxKeys;
  }

  /** The fewest nodes a node assumes share the limit (default 1); see {@link Builder#minNodes}. */
  public int minNodes() {
    return minNodes;
  }

  public Duration flushTimeout() {
    return flushTimeout;
  }

  /** The claim timeout set; a limiter waits at most the flush timeout, whichever is shorter. */
  public Duration claimTimeout() {
    return claimTimeout;
  }

  public boolean autoSync() {
    return autoSync;
  }

  /**
   * Whether the node sets its clock to agree with its store's, where the store tells time (see {@link
   * Builder#alignClockToStore}): as set, else when the ticker is the wall clock ({@link Ticker#cached()},
   * the default, or {@link Ticker#system()}).
   */
  public boolean alignsClockToStore() {
    return alignClockToStore != null ? alignClockToStore : ticker == Ticker.cached() || ticker == Ticker.system();
  }

  /** Whether nodes admit a key's first permit in a window without asking the store (see {@link Builder#coldKeyAllowance}). */
  public boolean coldKeyAllowance() {
    return coldKeyAllowance;
  }

  /** The regions of a regional quota; 0 for a limit of its own. */
  public int regions() {
    return regions;
  }

  public LimitListener listener() {
    return listener;
  }

  @Override
  public String toString() {
    return "SyncConfig{nodeId=" + nodeId + ", batchSize=" + (batchSizeSet ? batchSize : "default")
        + (bucketBatchSize > 1 ? ", bucketBatchSize=" + bucketBatchSize : "")
        + ", syncInterval=" + Durations.format(syncInterval) + ", maxError=" + maxError + ", onStoreFailure=" + onStoreFailure
        + (reservation ? ", reservation" : "") + ", maxKeys=" + maxKeys + ", minNodes=" + minNodes
        + ", flushTimeout=" + Durations.format(flushTimeout)
        + ", claimTimeout=" + Durations.format(claimTimeout) + (coldKeyAllowance ? "" : ", no cold-key allowance")
        + (alignClockToStore == null ? "" : alignClockToStore ? ", clock aligned to the store" : ", own clock")
        + (regions > 0 ? ", regions=" + regions : "") + "}";
  }

  /** Settings of a {@link SyncConfig}; each setter checks its value and names the field when it refuses it. */
  public static final class Builder {
    private String nodeId;
    private Ticker ticker = Ticker.cached();
    private long batchSize = DEFAULT_BATCH_SIZE;
    private boolean batchSizeSet;
    private long bucketBatchSize = 1;
    private Duration syncInterval = DEFAULT_SYNC_INTERVAL;
    private double maxError = DEFAULT_MAX_ERROR;
    private IntSupplier activeNodes;
    private StoreFailurePolicy onStoreFailure = StoreFailurePolicy.LOCAL_SHARE;
    private StoreBreakerConfig storeBreaker = StoreBreakerConfig.ofDefaults();
    private Duration heartbeatInterval = DEFAULT_HEARTBEAT_INTERVAL;
    private boolean reservation;
    private double hotKeyFactor = 10;
    private double minHotRate = 1_000;
    private long hotBatchMultiplier = 4;
    private int maxKeys = DEFAULT_MAX_KEYS;
    private int minNodes = 1;
    private Duration flushTimeout = DEFAULT_FLUSH_TIMEOUT;
    private Duration claimTimeout = DEFAULT_CLAIM_TIMEOUT;
    private boolean autoSync = true;
    private boolean coldKeyAllowance = true;
    private Boolean alignClockToStore;
    private int regions;
    private LimitListener listener = LimitListener.NONE;

    private Builder() {
      this.nodeId = DeploymentNodeId.of(System.getenv());
    }

    private Builder(SyncConfig c) {
      this.nodeId = c.nodeId;
      this.ticker = c.ticker;
      this.batchSize = c.batchSize;
      this.batchSizeSet = c.batchSizeSet;
      this.bucketBatchSize = c.bucketBatchSize;
      this.syncInterval = c.syncInterval;
      this.maxError = c.maxError;
      this.activeNodes = c.activeNodes;
      this.onStoreFailure = c.onStoreFailure;
      this.storeBreaker = c.storeBreaker;
      this.heartbeatInterval = c.heartbeatInterval;
      this.reservation = c.reservation;
      this.hotKeyFactor = c.hotKeyFactor;
      this.minHotRate = c.minHotRate;
      this.hotBatchMultiplier = c.hotBatchMultiplier;
      this.maxKeys = c.maxKeys;
      this.minNodes = c.minNodes;
      this.flushTimeout = c.flushTimeout;
      this.claimTimeout = c.claimTimeout;
      this.autoSync = c.autoSync;
      this.coldKeyAllowance = c.coldKeyAllowance;
      this.alignClockToStore = c.alignClockToStore;
      this.regions = c.regions;
      this.listener = c.listener;
    }

    /**
     * Unique per process; the store's node registry counts nodes by it. Default: what the deployment
     * names the process ({@code SLUICE_NODE_ID}, {@code POD_NAME} or an exported {@code HOSTNAME}, so
     * that a process restarted in place is the same node), else random. Flushes and claims are kept per
     * limiter instance whatever the id, so a process restarted under its old id never spends what its
     * predecessor left.
     */
    public Builder nodeId(String nodeId) {
      if (nodeId == null || !DeploymentNodeId.VALID.matcher(nodeId).matches()) {
        throw new IllegalArgumentException("nodeId: must be 1 to 64 characters of [A-Za-z0-9_.:-], got " + nodeId);
      }
      this.nodeId = nodeId;
      return this;
    }

    public Builder ticker(Ticker ticker) {
      if (ticker == null) {
        throw new IllegalArgumentException("ticker: must not be null");
      }
      this.ticker = ticker;
      return this;
    }

    /**
     * Permits a window limit's key may gather before it is flushed (shrunk near the limit, see
     * {@link SyncedLimiter}); default 100. 1 means exact checking: every decision is one atomic script
     * call on the store (an {@link io.sluice.sync.spi.ExactStore}), waiting at most the flush timeout.
     * Token buckets, leaky buckets (meters) and sliding logs take 1 whatever is set here: a bucket
     * claims tokens ahead only with a {@link #bucketBatchSize} (or its own {@link
     * SyncedLimiter.Builder#batchSize}) above 1 (opt-in, see the README's accuracy kit figures), and a
     * sliding log is shared in exact mode only.
     */
    public Builder batchSize(long batchSize) {
      if (batchSize < 1) {
        throw new IllegalArgumentException("batchSize: must be at least 1, got " + batchSize);
      }
      this.batchSize = batchSize;
      this.batchSizeSet = true;
      return this;
    }

    /**
     * Token buckets and leaky-bucket meters built with this config: above 1, each node claims up to
     * that many of the store's tokens ahead in one call and decides from them (token claims, {@code
     * TokenClaims}; needs a {@link io.sluice.sync.spi.TokenStore}); 1 (the default) keeps them in exact
     * mode, one store script per decision. Opt-in, apart from the window limits' batch size: near a
     * bucket's limit the nodes together never pass it, but which request gets a refilled token differs
     * from the exact bucket (the README's accuracy kit figures). A bucket's own {@link
     * SyncedLimiter.Builder#batchSize} takes precedence.
     */
    public Builder bucketBatchSize(long bucketBatchSize) {
      if (bucketBatchSize < 1) {
        throw new IllegalArgumentException("bucketBatchSize: must be at least 1, got " + bucketBatchSize);
      }
      this.bucketBatchSize = bucketBatchSize;
      return this;
    }

    /** How often dirty keys are flushed even below their batch size; at most half the window. */
    public Builder syncInterval(Duration interval) {
      if (interval == null || interval.isNegative() || interval.isZero()) {
        throw new IllegalArgumentException("syncInterval: must be positive, got " + Durations.format(interval));
      }
      this.syncInterval = interval;
      return this;
    }

    /**
     * The error budget, a fraction of the limit (default 0.5%): the most a claim asks for far from
     * the limit is at least a node's part of it; with a store that keeps no claims, and for regional
     * quotas, also what the nodes together may admit on a stale or unknown view before they sync.
     * (With claims, nodes never pass the limit together by more than this: no decision admits beyond
     * a claim, but for a sliding window's claimants on several nodes, which take a permit once their
     * part of the fading is half-way to it where half a permit each, and one more, fit this budget.)
     */
    public Builder maxError(double maxError) {
      if (!(maxError > 0 && maxError <= 1)) {
        throw new IllegalArgumentException("maxError: must be in (0, 1], got " + maxError);
      }
      this.maxError = maxError;
      return this;
    }

    /**
     * Reservation mode: the node admits only permits the store granted it in advance, so the nodes
     * together never pass the limit. Window limits take leases (of at most the batch size, shrinking
     * as the budget does; unused grants at the end of a window are budget given up) and need a {@link
     * io.sluice.sync.spi.LeaseStore}; token buckets and leaky-bucket meters take token claims (see
     * {@code TokenClaims}: every token taken from the store's bucket before it is used, sized by the
     * batch size) and need a {@link io.sluice.sync.spi.TokenStore}. A sliding log is refused: it is
     * shared in exact mode only.
     */
    public Builder reservation(boolean reservation) {
      this.reservation = reservation;
      return this;
    }

    /**
     * Hot keys: a key admitting at least {@code factor} times the mean rate of the keys synced, and at
     * least {@code minRatePerSecond}, gets batches (and leases) {@code batchMultiplier} times larger,
     * and is synced at most once per tenth of the sync interval. Defaults: 10x, 1,000/s, 4x.
     */
    public Builder hotKeys(double factor, double minRatePerSecond, long batchMultiplier) {
      if (!(factor >= 1)) {
        throw new IllegalArgumentException("hotKeys.factor: must be at least 1, got " + factor);
      }
      if (!(minRatePerSecond >= 0)) {
        throw new IllegalArgumentException("hotKeys.minRatePerSecond: must not be negative, got " + minRatePerSecond);
      }
      if (batchMultiplier < 1) {
        throw new IllegalArgumentException("hotKeys.batchMultiplier: must be at least 1, got " + batchMultiplier);
      }
      this.hotKeyFactor = factor;
      this.minHotRate = minRatePerSecond;
      this.hotBatchMultiplier = batchMultiplier;
      return this;
    }

    /**
     * Told of every breach of a soft or shadow limit (the request allowed, the breach recorded), as the
     * in-process limiter's listener is; called on the deciding thread, so it should be quick.
     */
    public Builder listener(LimitListener listener) {
      if (listener == null) {
        throw new IllegalArgumentException("listener: must not be null");
      }
      this.listener = listener;
      return this;
    }

    /** What to decide while the store is unreachable (the breaker is open); default LOCAL_SHARE. */
    public Builder onStoreFailure(StoreFailurePolicy policy) {
      if (policy == null) {
        throw new IllegalArgumentException("onStoreFailure: must not be null");
      }
      this.onStoreFailure = policy;
      return this;
    }

    /** The store circuit breaker's settings; the default is sized for flush rates (see {@link StoreBreakerConfig}). */
    public Builder storeBreaker(StoreBreakerConfig config) {
      if (config == null) {
        throw new IllegalArgumentException("storeBreaker: must not be null");
      }
      this.storeBreaker = config;
      return this;
    }

    /** How often the node tells the registry it is alive (default 1 s); it counts as gone after three missed. */
    public Builder heartbeatInterval(Duration interval) {
      if (interval == null || interval.toMillis() < 1) {
        throw new IllegalArgumentException("heartbeatInterval: must be at least 1ms, got " + Durations.format(interval));
      }
      this.heartbeatInterval = interval;
      return this;
    }

    /**
     * The number of nodes sharing the limit, fixed or from elsewhere; by default the node registry
     * kept in the store (heartbeats).
     */
    public Builder activeNodes(IntSupplier activeNodes) {
      if (activeNodes == null) {
        throw new IllegalArgumentException("activeNodes: must not be null");
      }
      this.activeNodes = activeNodes;
      return this;
    }

    /**
     * The fewest nodes that share the limit (default 1): a node sizes its parts of it (LOCAL_SHARE's,
     * and the even parts of what is free its claims are granted) for at least this many, also before
     * the node registry has answered it. Without it, a node started while the store is out of reach
     * takes itself for alone, and n such nodes admit up to n times the limit on LOCAL_SHARE until the
     * store answers. Set it to the fewest instances the deployment runs (a Kubernetes
     * HorizontalPodAutoscaler's minReplicas): more than run costs admissions and store calls (each part
     * smaller), never the limit.
     */
    public Builder minNodes(int minNodes) {
      if (minNodes < 1 || minNodes > Delta.MAX_NODES) {
        throw new IllegalArgumentException("minNodes: must be between 1 and " + Delta.MAX_NODES + ", got " + minNodes);
      }
      this.minNodes = minNodes;
      return this;
    }

    /** The keys a node keeps views of (default 1,000,000); the least recently used go beyond it. */
    public Builder maxKeys(int maxKeys) {
      if (maxKeys < 1) {
        throw new IllegalArgumentException("maxKeys: must be positive, got " + maxKeys);
      }
      this.maxKeys = maxKeys;
      return this;
    }

    /**
     * How long a decision waits for the claim (or, in reservation mode, the lease) it asks the store
     * for, when none it holds pays for it; then the failure policy decides, and the call counts as
     * failed for the circuit breaker. Default 200 ms; a limiter waits at most the flush timeout.
     */
    public Builder claimTimeout(Duration timeout) {
      if (timeout == null || timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("claimTimeout: must be positive, got " + Durations.format(timeout));
      }
      this.claimTimeout = timeout;
      return this;
    }

    /** How long one flush may take before it counts as failed (and is retried unchanged); default 2 s. */
    public Builder flushTimeout(Duration timeout) {
      if (timeout == null || timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("flushTimeout: must be positive, got " + Durations.format(timeout));
      }
      this.flushTimeout = timeout;
      return this;
    }

    /**
     * Makes the limit one region's part of a global quota shared by {@code regions} regions, each
     * with its own store (see {@link SyncedLimiter.Builder#regionalQuota}); 0 (default) for a limit of
     * its own.
     */
    public Builder regionalQuota(int regions) {
      if (regions < 0) {
        throw new IllegalArgumentException("regionalQuota: regions must not be negative, got " + regions);
      }
      this.regions = regions;
      return this;
    }

    /** Whether a flusher thread syncs on its own (default); without it, call {@link SyncedLimiter#syncNow()}. */
    public Builder autoSync(boolean autoSync) {
      this.autoSync = autoSync;
      return this;
    }

    /**
     * Fixed windows and sliding window counters in the approximate mode (default on): a node admits the
     * first permit of a key in each window without a claim and without asking the store, and counts it
     * with its next sync, so a key's first request on a node in a window does not wait for a store round
     * trip. The store keeps a permit per node and key free of claims until a sync interval before the
     * window's end, so the nodes still never pass the limit together. Only where that reserve is small (a
     * limit of at least 16 permits per node, 32 on a sliding window, a window of at least 8 sync
     * intervals), from two heartbeat
     * intervals after the node joined (until every other node counts it), while its store answers, and
     * not in its window's last two sync intervals; on a sliding window not before the window is nodes /
     * limit in either (the previous window, which may have filled the limit, has faded by the reserve
     * then). Off: every decision no claim pays for asks the store.
     */
    public Builder coldKeyAllowance(boolean allowance) {
      this.coldKeyAllowance = allowance;
      return this;
    }

    /**
     * Whether the node sets its clock to agree with its store's (Redis: {@code TIME}; a store that tells
     * no time leaves it alone). Windows follow the deciding node's clock, in every mode: nodes whose
     * clocks are half a millisecond apart disagree near a window's edge about which window a request
     * falls in, and a key-window can pass its limit by the requests of that moment. Aligned, they agree
     * within half a round trip to the store: the process reads the store's time while its first limiter
     * is built (the builder waits for that call, at most the claim timeout) and at the flushers' next
     * rounds until it has four readings, then every ten seconds (one call each), moves its offset only
     * as far as a reading's round trip says it must (a slow call moves it by nothing), and never runs
     * backwards (a clock set back runs at half speed until it has caught up); the limiters of a process
     * on the wall clock share one such clock. Default: aligned when the ticker is the wall clock ({@link Ticker#cached()}, the
     * default, or {@link Ticker#system()}); a ticker of your own (a test's, a simulation's) is taken as
     * it is unless this is set.
     */
    public Builder alignClockToStore(boolean align) {
      this.alignClockToStore = align;
      return this;
    }

    public SyncConfig build() {
      return new SyncConfig(this);
    }
  }
}
