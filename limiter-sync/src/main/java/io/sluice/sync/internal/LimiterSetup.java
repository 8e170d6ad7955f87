package io.sluice.sync.internal;

import io.sluice.node.Algorithm;
import io.sluice.node.Limit;
import io.sluice.node.Ticker;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.LeaseStore;
import io.sluice.sync.spi.TokenStore;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * What a {@link SyncedLimiter}'s parts share, settled once in its constructor: the limit and the store
 * counter it writes, the mode (exact, approximate with claims, regional shares, reservation, batched
 * buckets), the settings in nanoseconds, the store and its guarded calls, the view table, the flush
 * queue, the node count and the meters every part adds to. The parts ({@link WindowDecisions},
 * {@link WindowClaims}, {@link Flusher} and the others) take this, not the facade, so that they depend
 * on what the limiter is, not on its API.
 *
 * <p>Concurrency: final fields, made before any decision or the flusher thread; the meters are
 * {@code LongAdder}s, and the one field set after the constructor (the flusher) is set once by the
 * limiter's constructor, before anything reads it.
 */
final class LimiterSetup {
  final Limit limit;
  final SyncConfig config;
  final Counter counter;
  /** One region's part of a global quota: the cap is the share the coordinator gives the region. */
  final boolean regional;
  /** What a window limit's key is decided against: the limit's capacity or a region's share. */
  final WindowBudget budget;
  final CounterStore store;
  /**
   * Whether the limit counts windows, which nodes batch and claim; buckets and the sliding log are
   * decided by the store's exact scripts alone, and by a local share of the limit while it fails.
   */
  final boolean windowed;
  /** The store's exact scripts when the batch size is 1, else null. */
  final ExactStore exact;
  /**
   * Window limits (not regional quotas): flushes ask the store for claims (see flush.lua), and a node
   * admits within its claim, so that nodes never pass the limit together (by more than the error
   * budget, on sliding windows: see WindowClaims#borrow).
   */
  final boolean claimsKept;
  /** Approximate mode: decisions may take a view's credit without its monitor (see {@link KeyView}). */
  final boolean credited;
  /**
   * A token bucket or leaky bucket meter in batched mode (batch size above 1, a {@link TokenStore}):
   * nodes claim tokens of the store's bucket ahead, each usable from its due time; else null.
   */
  final TokenClaims tokens;
  /** A regional token bucket's share records as this node last read them (exact decisions and token claims); else null. */
  final ShareRecords shareRecords;
  /** The store's leases in reservation mode, else null. */
  final LeaseStore leases;
  final String nodeId;
  /**
   * Who the store knows this limiter's batches and claims by: node id, limit, and an incarnation of
   * this instance. A process killed and started again under the same node id (a fixed id, a pod name)
   * must not take over the claims its predecessor left in the store: the dead process may have admitted
   * permits under them that it never flushed, and the claim is what keeps those from being spent twice
   * (RestartedNodeClaimTest). The registry still knows the node by its id alone.
   */
  final String owner;
  /** The node's clock: its ticker, or that ticker set to agree with the store's ({@link #storeClock}). */
  final Ticker ticker;
  /** The ticker aligned to the store's clock, or null where it is taken as it is. */
  final StoreClock storeClock;
  /** This limiter's calls for the store's time (not work: see NodeBeat#workCalls). */
  final LongAdder clockCalls = new LongAdder();
  final long windowNanos;
  final boolean sliding;
  final long batchSize;
  final long syncIntervalNanos;
  final long staleAfterNanos;
  /** How long a node keeps within its local share after its last decision on it (see WindowFallback#admits). */
  final long shareHoldNanos;
  final IntSupplier activeNodes;
  /** Whether {@link #activeNodes} is a count the node can act on (see NodeBeat#countConfirmed). */
  final BooleanSupplier nodeCountConfirmed;
  /**
   * How long the other nodes have counted this one, nanoseconds, -1 while they do not (see
   * NodeBeat#countedForNanos; Long.MAX_VALUE where the node count is configured).
   */
  final LongSupplier countedFor;
  /**
   * How long ago the registry's answers last lowered the node count, nanoseconds (see
   * NodeBeat#countFellNanosAgo; long ago where the node count is configured).
   */
  final LongSupplier countFellAgo;
  /**
   * Whether the registry last answered within two beat intervals (NodeBeat#countAgeNanos): every node
   * alive has beaten since the answer before, so the count holds the nodes started meanwhile, and theirs
   * holds this one. Always where the node count is configured.
   */
  final BooleanSupplier countCurrent;
  /** How much longer than a sync interval the flusher's syncs take now (Flusher#syncLateNanos). */
  final LongSupplier syncLate;
  final Duration flushTimeout;
  /** How long a decision waits for a claim or lease it asks for (then the failure policy decides). */
  final Duration claimTimeout;
  final StoreFailurePolicy onStoreFailure;
  final StoreCalls calls;
  /** A hot key wakes the flusher at most once in this time (a tenth of the sync interval). */
  final long hotSyncIntervalNanos;
  final ViewTable views;
  final LongAdder cachedDenials = new LongAdder();
  final LongAdder fallbackDecisions = new LongAdder();
  /** What this node has to send, and the flusher's wake-up. */
  final FlushQueue queue;
  /** The sync, once made (the registry's node count is read through it): set once, before any decision. */
  private Flusher flusher;

  LimiterSetup(Limit limit, CounterStore store, SyncConfig c, long batchSize, java.time.Clock breakerClock) {
    this.config = c;
    this.limit = limit;
    this.counter = c.regions() > 0 ? Counter.regional(limit, c.regions())
        : limit.algorithm() == Algorithm.SLIDING_WINDOW_LOG ? Counter.ofLog(limit) : Counter.of(limit);
    this.windowed = SyncedLimiter.batches(limit);
    this.regional = c.regions() > 0;
    this.budget = WindowBudget.of(this);
    this.store = store;
    // (a bucket in reservation mode with a batch size of 1: each decision is the store's, exact mode)
    this.exact = batchSize == 1 && !(c.reservation() && windowed) ? (ExactStore) store : null;
    // (a bucket's reservations are its token claims: leases are of windows)
    this.leases = c.reservation() && windowed ? (LeaseStore) store : null;
    this.credited = windowed && exact == null && leases == null;
    // (credited: a fixed or sliding window, so its counter counts windows)
    this.claimsKept = credited && !regional && store.keepsClaims();
    this.nodeId = c.nodeId();
    this.owner = nodeId + "/" + limit.name() + "/" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 24, 36);
    this.storeClock = c.alignsClockToStore() && store.tellsTime() ? StoreClock.of(c.ticker()) : null;
    this.ticker = storeClock != null ? storeClock : c.ticker();
    this.calls = StoreCalls.create("sluice-" + limit.name() + "-" + c.nodeId(), c.storeBreaker(), c.flushTimeout(),
        store.callTimeout(), c.autoSync() ? System::nanoTime : ticker::read, breakerClock);
    // (before this limiter reads its clock: see StoreClock#first)
    if (storeClock != null
        && storeClock.first(calls, store, c.claimTimeout().compareTo(c.flushTimeout()) < 0 ? c.claimTimeout() : c.flushTimeout())) {
      clockCalls.increment();
    }
    this.windowNanos = limit.periodNanos();
    this.sliding = limit.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER;
    this.batchSize = batchSize;
    this.syncIntervalNanos = c.syncInterval().toNanos();
    this.staleAfterNanos = 2 * syncIntervalNanos;
    // (the flusher is made after this: the supplier reads it only once decisions begin)
    IntSupplier counted = c.activeNodes().orElse(this::nodesInRegistry);
    int minNodes = c.minNodes();
    // (never fewer than the deployment says run: before the registry has answered, too)
    this.activeNodes = minNodes > 1 ? () -> Math.max(minNodes, counted.getAsInt()) : counted;
    // (a count the caller supplies is its own to vouch for)
    this.nodeCountConfirmed = c.activeNodes().isPresent() ? () -> true : this::registryConfirmed;
    this.countedFor = c.activeNodes().isPresent() ? () -> Long.MAX_VALUE : () -> flusher.countedForNanos();
    this.countFellAgo = c.activeNodes().isPresent() ? () -> Long.MAX_VALUE : () -> flusher.countFellNanosAgo();
    long currentWithin = 2 * c.heartbeatInterval().toNanos();
    this.countCurrent = c.activeNodes().isPresent() ? () -> true : () -> flusher.countAgeNanos() <= currentWithin;
    this.syncLate = () -> flusher.syncLateNanos();
    this.queue = new FlushQueue(counter, ticker);
    // (keys seen before sized claims ahead: fixed windows' claims only)
    this.views = new ViewTable(c.maxKeys(), windowNanos, ticker, queue::settle, claimsKept && !sliding);
    this.flushTimeout = c.flushTimeout();
    this.claimTimeout = c.claimTimeout().compareTo(c.flushTimeout()) < 0 ? c.claimTimeout() : c.flushTimeout();
    this.onStoreFailure = c.onStoreFailure();
    // nodes cut off together come back within a breaker's wait in the open state and a flush of each
    // other (twice, for the probe that fails first): a local share is held that long after its last use
    this.shareHoldNanos = 2 * (c.storeBreaker().waitInOpenState().toNanos() + flushTimeout.toNanos()) + syncIntervalNanos;
    this.shareRecords = counter.regionalBucket() ? new ShareRecords(c.maxKeys()) : null;
    this.tokens = !windowed && batchSize > 1
        ? new TokenClaims(limit, counter.regionalBucket() ? counter : null, queue::demand, shareRecords,
            (TokenStore) store, calls, syncIntervalNanos, batchSize, c.maxKeys(), activeNodes, claimTimeout,
            c.reservation())
        : null;
    this.hotSyncIntervalNanos = Math.max(1, syncIntervalNanos / 10);
  }

  /** The sync, made by the limiter once this is: its registry's node count is what {@link #activeNodes} reads. */
  void flusher(Flusher flusher) {
    this.flusher = flusher;
  }

  /** Nodes alive as the registry last answered: 0 until it has (a node alone must not assume it is). */
  private int nodesInRegistry() {
    return flusher.registeredNodes();
  }

  private boolean registryConfirmed() {
    return flusher.nodeCountConfirmed();
  }
}
