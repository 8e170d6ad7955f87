package io.sluice.sync.internal;

import io.micrometer.core.instrument.Timer;
import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.Outcome;
import io.sluice.node.Ticker;
import io.sluice.sync.StoreBreaker;
import io.sluice.sync.SyncConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.CounterStore;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * The inside of one {@link SyncedLimiter}: its parts, wired once for the limit's algorithm and mode,
 * and the operations the facade passes on. Internal: no compatibility promise; a user builds a
 * {@link SyncedLimiter}, which owns one of these.
 *
 * <h2>Concurrency</h2>
 * Deciding threads and one flusher thread share the state, in four kinds:
 * <ul>
 *   <li>a key's {@code KeyView}: guarded by the view's own monitor, except its credit, taken with one
 *       CAS ({@code KeyView#takeCredit}); every section under the monitor settles the credit first;</li>
 *   <li>the view table ({@code ViewTable}) and the flusher's queues ({@code FlushQueue}):
 *       concurrent collections; a view is queued under its monitor and drained under it;</li>
 *   <li>the flusher's own state ({@code Flusher}, {@code BatchSender}: sequences, batches in flight,
 *       groups that lost their data, the hot-key mean): guarded by its sync lock, which a sync holds
 *       (the flusher thread, or a caller of {@link #sync} or {@link #close});
 *       the time of the last heartbeat is the flusher thread's alone;</li>
 *   <li>meters and flags read across threads: {@code LongAdder}s, atomics and volatiles (the nodes the
 *       registry counts and {@code closed}, the flusher's; whether the store keeps claims,
 *       {@code ClaimSizing}'s); store calls and the breaker: {@code StoreCalls}.</li>
 * </ul>
 * The parts, each made once in the constructor for this limit's algorithm and mode, over what they
 * share ({@code LimiterSetup}: the limit, its mode and settings, the store's calls, the views, the
 * queue), never over the facade: {@code WindowDecisions} (a window limit's decisions under its views'
 * monitors), {@code WindowClaims} and {@code ClaimSizing} (the claim and share arithmetic and the
 * store's answers into a view), {@code WindowLeases} (reservation), {@code Flusher} (the sync),
 * {@code TokenClaims} (batched buckets), {@code StoreDecisions} (exact mode, and buckets and logs while
 * the store fails), the limiter's mode, chosen once ({@code Admission}: {@code ExactAdmission},
 * {@code TokenAdmission} or {@code WindowAdmission}, each with its decisions that never block and its
 * {@link #release}), this class (the checks, then the mode) and {@code CloseSequence}
 * ({@link #close}).
 * A decision that asks the store holds its view's monitor through that one call, never the sync
 * lock; a sync takes views' monitors one at a time, never while waiting for the store.
 */
public final class LimiterCore {
  /** What the parts share: the limit, its mode and settings, the store's calls, the views, the queue. */
  final LimiterSetup setup;
  /** How a decision answers, whichever part made it. */
  private final Answers answers;
  /** The decisions one store call makes: exact mode, batched buckets, the failure policy's for buckets and logs. */
  private final StoreDecisions byStore;
  /** The limiter's mode, chosen once: it decides and releases ({@code Admission}). */
  private final Admission admission;
  private final Limit limit;
  private final Ticker ticker;
  private final StoreCalls calls;
  /** A window limit's claim, share and lease arithmetic. */
  private final WindowClaims claims;
  /** The sync: batches to the store and their answers into the views; the registry's heartbeat. */
  private final Flusher flusher;

  /**
   * The parts of a limiter for {@code limit} on {@code store}, with the settings {@code c} and the
   * batch size in force (the facade's builder has checked both); its flusher thread starts here when
   * {@code c} syncs on its own. {@code breakerClock}: the clock of the store breaker's open state (null:
   * the system's).
   */
  public LimiterCore(Limit limit, CounterStore store, SyncConfig c, long batchSize, Clock breakerClock) {
    LimiterSetup l = new LimiterSetup(limit, store, c, batchSize, breakerClock);
    this.setup = l;
    FlushQueue queue = l.queue;
    this.answers = new Answers(limit, c.listener(), l.sliding);
    this.claims = new WindowClaims(l, c, queue);
    this.flusher = new Flusher(l, c, claims, queue);
    l.flusher(flusher);
    WindowDecisions windows = new WindowDecisions(l, claims, queue, flusher);
    // buckets and logs while the store fails, under LOCAL_SHARE: this node's even part of the limit
    LocalShares localShares = new LocalShares(limit, l.ticker, c.maxKeys(), l.activeNodes);
    this.byStore = new StoreDecisions(l, localShares, queue, answers);
    // the mode, chosen once: exact scripts, a batched bucket's token claims, or a window limit's views
    WindowAdmission onViews = l.windowed ? new WindowAdmission(l, queue, answers, windows) : null;
    Admission admission = l.exact != null ? new ExactAdmission(byStore, onViews)
        : l.tokens != null ? new TokenAdmission(byStore)
        : onViews;
    if (admission == null) {
      throw new IllegalStateException("no mode decides " + limit); // (the builder's checks leave none)
    }
    this.admission = admission;
    this.limit = limit;
    this.ticker = l.ticker;
    this.calls = l.calls;
    flusher.start();
  }

  // ------------------------------------------------------------------ decisions (see SyncedLimiter)
  // Each checks the request, whether the limiter is open and whether the breaker keeps the store out,
  // then hands it to the mode, written out in each rather than through one shared method: the facade's
  // call, this one and the mode's make a chain HotSpot inlines whole only within its default inlining
  // depth. With one level more (a router between this class and the mode) a known key's tryAcquire
  // took 27.3 ns against 22.5 before the move (means of 5 runs, some at 31-35 ns; a scratch loop of 20
  // million decisions on 16 keys in memory), and the same with -XX:MaxInlineLevel=25; without it, 23.5
  // against 23.7 (6 runs each, 2026-12-05).

  public boolean tryAcquire(String key, long cost) {
    checkRequest(key, cost);
    checkOpen();
    return admission.decide(key, cost, Answers.BARE, ticker.read(), storeDown()).allowed();
  }

  public Decision acquire(String key, long cost) {
    checkRequest(key, cost);
    checkOpen();
    return admission.decide(key, cost, Answers.TOLD, ticker.read(), storeDown());
  }

  public Decision acquireUntold(String key, long cost) {
    checkRequest(key, cost);
    checkOpen();
    return admission.decide(key, cost, Answers.UNTOLD, ticker.read(), storeDown());
  }

  /**
   * {@link #acquire}, or null where a window limit's decision would wait for the answer to a flush that
   * gives this node's claim on the key up (see SyncedLimiter#acquireUnlessAwaitingRelease).
   */
  public Decision acquireUnlessAwaitingRelease(String key, long cost) {
    if (!(admission instanceof WindowAdmission)) {
      return acquire(key, cost); // (no claims: nothing to wait for)
    }
    checkRequest(key, cost);
    checkOpen();
    return ((WindowAdmission) admission).decideUnlessAwaitingRelease(key, cost, ticker.read(), storeDown());
  }

  public Decision acquireWithoutWaiting(String key, long cost) {
    checkRequest(key, cost);
    checkOpen();
    return admission.decideNow(key, cost, Answers.TOLD, ticker.read(), storeDown());
  }

  public CompletionStage<Decision> acquireAsync(String key, long cost) {
    return decideAsync(key, cost, Answers.TOLD);
  }

  public CompletionStage<Decision> acquireUntoldAsync(String key, long cost) {
    return decideAsync(key, cost, Answers.UNTOLD);
  }

  private CompletableFuture<Decision> decideAsync(String key, long cost, int answer) {
    checkRequest(key, cost);
    checkOpen();
    return admission.decideAsync(key, cost, answer, ticker.read(), storeDown(), this);
  }

  /** A decision handed over to a waiting thread ({@code Admission#handOver}): it may wait for the store. */
  Decision decide(String key, long cost, int answer) {
    checkRequest(key, cost);
    checkOpen();
    return admission.decide(key, cost, answer, ticker.read(), storeDown());
  }

  public void tellBreach(String key, Decision breach) {
    answers.notifyBreach(key, breach);
  }

  public void release(String key, long cost, Decision acquired) {
    checkRequest(key, cost);
    if (acquired == null || acquired.outcome() != Outcome.ALLOWED || acquired.limit() != limit) {
      throw new IllegalArgumentException("acquired: must be an allowed decision of this limiter (" + limit.name()
          + "), got " + acquired);
    }
    admission.release(key, cost, acquired);
  }

  /**
   * Whether the circuit breaker keeps the store out: the failure policy decides. (A breaker whose wait
   * is over lets this decision try the store: see {@code StoreCalls#keepsDecisionOut}.)
   */
  private boolean storeDown() {
    return calls.keepsDecisionOut();
  }

  /** Refuses a decision of a closed limiter. */
  private void checkOpen() {
    if (flusher.closed()) {
      throw new IllegalStateException("limiter " + limit.name() + " is closed");
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
    if (setup.counter.regionalBucket() && cost > setup.counter.staticBurst()) {
      // (a region's bucket holds its part of the burst: a larger cost can never be admitted, and it would
      // fail the store client's argument checks, which the breaker counts as a store failure)
      throw new IllegalArgumentException("cost: must be between 1 and the region's part "
          + setup.counter.staticBurst() + " of the burst of limit " + limit.name() + ", got " + cost);
    }
  }

  // ------------------------------------------------------------------ syncs and the registry

  /** Whether a decision asked for a sync since the last call, clearing the request. */
  public boolean takeSyncRequest() {
    return setup.queue.takeSyncRequest();
  }

  /** A sync; {@code all}: also the permits a claim still pays for (see SyncedLimiter#flushAll). */
  public boolean sync(boolean all) {
    return flusher.sync(all);
  }

  public int heartbeatNow() {
    return flusher.heartbeatNow();
  }

  /** The flusher thread's heartbeat step, for a limiter without one (see SyncedLimiter#heartbeatIfDue). */
  public void heartbeatIfDue() {
    if (setup.config.autoSync()) {
      throw new IllegalStateException("heartbeatIfDue: the limiter's flusher thread beats (autoSync is on)");
    }
    flusher.beatRound(setup.ticker.read());
  }

  public void close() {
    CloseSequence.close(setup, flusher);
  }

  // ------------------------------------------------------------------ settings and numbers

  public Limit limit() {
    return setup.limit;
  }

  public String nodeId() {
    return setup.nodeId;
  }

  public SyncConfig config() {
    return setup.config;
  }

  public long batchSize() {
    return setup.batchSize;
  }

  public StoreBreaker storeBreaker() {
    return setup.calls.view();
  }

  public long giveBacksFailed() {
    return byStore.giveBacksFailed();
  }

  public long fallbackDecisions() {
    return setup.fallbackDecisions.sum();
  }

  public long storeNanos() {
    return setup.calls.nanos();
  }

  public long hotKeys() {
    return flusher.hotKeys();
  }

  public int activeNodes() {
    return Math.max(1, setup.activeNodes.getAsInt());
  }

  public long clockOffsetNanos() {
    return setup.storeClock == null ? 0 : setup.storeClock.offsetNanos();
  }

  public int registeredNodes() {
    return Math.max(1, flusher.registeredNodes());
  }

  public long waitedDecisions() {
    return setup.calls.waitedDecisions();
  }

  public long waitedNanos() {
    return setup.calls.waitedNanos();
  }

  public long admitted() {
    return answers.admitted();
  }

  public long denied() {
    return answers.denied();
  }

  public long cachedDenials() {
    return setup.cachedDenials.sum();
  }

  public long storeDataLosses() {
    return flusher.storeLosses();
  }

  public long refilledPermits() {
    return flusher.refilledPermits();
  }

  public long storeCalls() {
    return setup.calls.calls();
  }

  public long storeOutOfMemoryErrors() {
    return setup.store.outOfMemoryErrors();
  }

  public long storeFailures() {
    return setup.calls.failures();
  }

  public long pending() {
    return setup.queue.pendingPermits.sum();
  }

  public long deltasSent() {
    return flusher.deltasSent();
  }

  public int keys() {
    return setup.views.size();
  }

  public long overflowed() {
    return setup.views.overflowed();
  }

  /**
   * Records every store call's duration to {@code calls} and every decision's wait for the store to
   * {@code waited} from now on (the meters' histograms, bound by SyncedLimiterMetrics).
   */
  public void recordTo(Timer calls, Timer waited) {
    setup.calls.recordTo(calls, waited);
  }

  // ------------------------------------------------------------------ for tests that look inside

  /** A view's time relative to {@code now}, in ms; "never" for a time not set (Long.MIN_VALUE). */
  private static String relative(long at, long now) {
    return at == Long.MIN_VALUE ? "never" : String.format(java.util.Locale.ROOT, "%+.1f ms", (at - now) / 1e6);
  }

  /** The flusher's sweep of idle views (see {@code ViewTable#sweepSome}). */
  public void sweepSome() {
    setup.views.sweepSome();
  }

  /** The view of a key, or null. */
  KeyView viewOf(String key) {
    return setup.views.get(key);
  }

  /** Whether decisions ask the store for claims. */
  public boolean claimsAsked() {
    return claims.asksClaims();
  }

  /**
   * What this node holds of a key, in one line (the view's counts, claim, lease and timers, times
   * relative to {@code now}), or "no view": for a test's or a tool's debugging output.
   */
  public String describeView(String key, long now) {
    if (setup.tokens != null) {
      return setup.tokens.describe(key, TimeUnit.NANOSECONDS.toMicros(now));
    }
    KeyView v = setup.views.get(key);
    if (v == null) {
      return "no view";
    }
    synchronized (v) {
      return String.format(java.util.Locale.ROOT, "view global %d/%d pending %d/%d unsent %d own %d claim %d (at %s,"
          + " nodes %d) released %d leased %d nothingFree %s noneFree %s synced %s deniedUntil %s credit %d%s allowed %d",
          v.globalCur(), v.globalPrev(), v.pendingCur(), v.pendingPrev(), v.unsentCur(), v.ownCur(), v.claim(), relative(v.claimAt(), now),
          v.claimNodes(), v.releasedCur(), v.leaseHeld(), v.nothingFreeUntil() > now ? "until " + relative(v.nothingFreeUntil(), now)
          : "no", v.noneFree(), relative(v.syncedAt(), now), relative(v.deniedUntil(), now), v.creditLeft(now),
          v.creditFromAllowance() ? " (allowance)" : "", v.allowedInWindow());
    }
  }
}
