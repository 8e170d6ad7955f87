package io.sluice.sync.internal;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.Timer;
import io.sluice.sync.StoreBreaker;
import io.sluice.sync.StoreBreakerConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.SyncedLimiterMetrics;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Every store call of one {@link SyncedLimiter}, through its circuit breaker and bounded in time: the
 * breaker's permission, the wait for the answer, and what the breaker and the limiter's meters are
 * told of it. The only place that drives the breaker.
 *
 * <p>Concurrency: called at once from deciding threads (claim calls, exact decisions, leases) and the
 * flusher. The breaker is thread-safe; the counters are {@link LongAdder}s; the round-trip mean is a
 * volatile updated without a lock (two calls ending together may lose one update, which only delays
 * the mean by a call).
 */
final class StoreCalls {
  private final CircuitBreaker breaker;
  private final Duration defaultTimeout;
  /**
   * What a call's duration is measured on (the round trip, the breaker's slow calls): System.nanoTime
   * for a limiter with its own flusher thread; without one ({@code autoSync(false)}), the limiter's
   * ticker, the clock its caller drives (a simulation's: a real clock there timed the simulation's
   * own work, microseconds that varied run to run, and the claims sized by it made the simulated
   * figures vary too). Waiting for an answer is always bounded in real time.
   */
  private final LongSupplier callClock;
  private final LongAdder calls = new LongAdder();
  private final LongAdder failures = new LongAdder();
  private final LongAdder nanos = new LongAdder();
  /** Decisions that waited for a store call (exact checks, claims, leases asked for on the decision path). */
  private final LongAdder waitedDecisions = new LongAdder();
  private final LongAdder waitedNanos = new LongAdder();
  /** Store call duration, nanoseconds: a running mean that jumps up to any slower call (0 before). */
  private volatile long roundTripNanos;
  /** System.nanoTime of the last call that failed or that the open breaker kept out (Long.MIN_VALUE: none). */
  private volatile long lastTroubleNanos = Long.MIN_VALUE;
  /** System.nanoTime of the last call the store answered (Long.MIN_VALUE: none yet). */
  private volatile long lastAnswerNanos = Long.MIN_VALUE;
  /**
   * The histogram timers the metrics binder installed (one per registry it was bound to), of every
   * store call and of every decision that waited for one: empty until bound, so that a limiter no
   * one watches pays a volatile read and an empty loop. Arrays, replaced whole when a binder adds one,
   * so that recording takes no lock and allocates nothing.
   */
  private volatile Timer[] callTimers = NO_TIMERS;
  private volatile Timer[] waitTimers = NO_TIMERS;
  private static final Timer[] NO_TIMERS = new Timer[0];

  /** Whether a call failed, or the breaker kept one out, within the last {@code nanos}. */
  boolean troubleWithin(long nanos) {
    long at = lastTroubleNanos;
    return at != Long.MIN_VALUE && System.nanoTime() - at < nanos;
  }

  /** Whether the store answered a call within the last {@code nanos} (System.nanoTime). */
  boolean answeredWithin(long nanos) {
    long at = lastAnswerNanos;
    return at != Long.MIN_VALUE && System.nanoTime() - at < nanos;
  }

  /** A decision waited for the store from {@code since} (System.nanoTime) until now. */
  void waited(long since) {
    long took = System.nanoTime() - since;
    waitedDecisions.increment();
    waitedNanos.add(took);
    record(waitTimers, took);
  }

  /**
   * Records every later store call in {@code calls} and every later decision that waits for the store
   * in {@code waits} (see {@link SyncedLimiterMetrics}); a timer given again (the same registry bound
   * twice gives back the same one) is not added twice, so that nothing is counted twice.
   */
  synchronized void recordTo(Timer calls, Timer waits) {
    callTimers = with(callTimers, calls);
    waitTimers = with(waitTimers, waits);
  }

  private static Timer[] with(Timer[] timers, Timer added) {
    for (Timer t : timers) {
      if (t == added) {
        return timers;
      }
    }
    Timer[] more = Arrays.copyOf(timers, timers.length + 1);
    more[timers.length] = added;
    return more;
  }

  private static void record(Timer[] timers, long nanos) {
    for (Timer t : timers) {
      t.record(nanos, TimeUnit.NANOSECONDS);
    }
  }

  long waitedDecisions() {
    return waitedDecisions.sum();
  }

  long waitedNanos() {
    return waitedNanos.sum();
  }

  /** Whether the circuit breaker is closed: calls go to the store as usual. */
  boolean closed() {
    return breaker.getState() == CircuitBreaker.State.CLOSED;
  }

  /**
   * {@link #open()} for a decision about to be left to the failure policy: once the breaker's wait in
   * the open state is over it goes half-open here, and the decision's own store call tries the store
   * again. (Resilience4j leaves the open state only when a call asks it for a permission. Under
   * FAIL_CLOSED a node admits nothing while the breaker is open, so it has nothing to flush, and its
   * heartbeat may be another limiter's: no call asked, and the chaos suite's latency fault left a node's
   * breaker open 30 s after the store was back.) While the wait lasts this costs a read of the breaker's
   * clock per decision, on a path that only runs while the store is kept out.
   */
  boolean keepsDecisionOut() {
    CircuitBreaker.State state = breaker.getState();
    if (state == CircuitBreaker.State.OPEN && breaker.tryAcquirePermission()) {
      breaker.releasePermission(); // (the permission was only to move it: the decision's call asks again)
      noticeTransition();
      return false;
    }
    if (state != seenState.get()) {
      noticeTransition();
    }
    return state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.FORCED_OPEN;
  }

  /** Whether the circuit breaker keeps the store out (open or forced open): the failure policy decides. */
  boolean open() {
    CircuitBreaker.State state = breaker.getState();
    if (state != seenState.get()) {
      noticeTransition();
    }
    return state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.FORCED_OPEN;
  }

  /**
   * A limiter's store calls through a breaker named {@code name} with {@code config}'s settings; calls
   * without a timeout of their own wait at most {@code flushTimeout}; {@code storeCallTimeout}: the
   * store's own (null: none), which bounds what counts as slow; {@code breakerClock}: what the
   * breaker's wait in the open state runs on (null: the system clock).
   */
  static StoreCalls create(String name, StoreBreakerConfig config, Duration flushTimeout, Duration storeCallTimeout,
      LongSupplier callClock, java.time.Clock breakerClock) {
    CircuitBreakerConfig c = breakerConfig(config, flushTimeout, storeCallTimeout);
    if (breakerClock != null) {
      c = CircuitBreakerConfig.from(c).clock(breakerClock).build();
    }
    return new StoreCalls(CircuitBreaker.of(name, c), flushTimeout, callClock);
  }

  StoreCalls(CircuitBreaker breaker, Duration defaultTimeout, LongSupplier callClock) {
    this.callClock = callClock;
    this.breaker = breaker;
    this.defaultTimeout = defaultTimeout;
    this.seenState = new AtomicReference<>(breaker.getState());
  }

  /** The breaker's state as the last transition logged left it. */
  private final AtomicReference<CircuitBreaker.State> seenState;

  /**
   * Logs a change of the breaker's state once, with the reason: an operator learns when the failure
   * policy took over and when the store came back, without a line per failed call. Read where the
   * breaker is asked or told anyway, not through its event publisher: a listener there, even one for
   * transitions only, makes the breaker build an event (with a ZonedDateTime) for every call that
   * succeeds, an allocation and a clock read per exact decision. A state held between two calls (a
   * half-open probe that closed at once) may go unlogged.
   */
  private void noticeTransition() {
    CircuitBreaker.State now = breaker.getState();
    CircuitBreaker.State before = seenState.get();
    if (now == before || !seenState.compareAndSet(before, now)) {
      return;
    }
    if (now == CircuitBreaker.State.OPEN || now == CircuitBreaker.State.FORCED_OPEN) {
      CircuitBreaker.Metrics m = breaker.getMetrics();
      LOG.log(System.Logger.Level.WARNING, "sluice: circuit breaker {0} opened ({1} to {2}): failure rate {3}%, slow"
          + " calls {4}% of the last {5} store calls; the failure policy decides until a call gets through",
          breaker.getName(), before, now, m.getFailureRate(), m.getSlowCallRate(), m.getNumberOfBufferedCalls());
    } else {
      LOG.log(System.Logger.Level.INFO, "sluice: circuit breaker {0}: {1} to {2}", breaker.getName(), before, now);
    }
  }

  private static final System.Logger LOG = System.getLogger(StoreCalls.class.getName());

  /**
   * One store call, waiting at most the default timeout (the flush timeout): the answer, or null when
   * the breaker refused the call or the call failed or timed out (then the caller keeps its batch for
   * a retry, or lets the failure policy decide).
   */
  <T> T guarded(Supplier<CompletionStage<T>> call) {
    return guarded(call, defaultTimeout);
  }

  /** {@link #guarded(Supplier)} waiting at most {@code timeout}. */
  <T> T guarded(Supplier<CompletionStage<T>> call, Duration timeout) {
    long start = System.nanoTime();
    long tick = callClock.getAsLong();
    CompletableFuture<T> answer = start(call);
    return answer == null ? null : await(answer, start, timeout.toNanos(), () -> callClock.getAsLong() - tick);
  }

  /**
   * {@link #guarded(Supplier, Duration)} without waiting: a stage that completes with the answer, or
   * with null when the breaker refused the call (at once), the call failed, or it took longer than
   * {@code timeout}. The breaker and the meters hear of the call exactly once, as for {@code guarded}.
   * The stage never completes exceptionally; it completes on the caller's thread when the store
   * answered before this returns, else on the store's thread that brought the answer, or, on a
   * timeout, on {@link CallTimeouts}' thread: what depends on it must not block. The timeout
   * takes no lock on the caller's thread, so an event loop may call this.
   */
  <T> CompletableFuture<T> guardedAsync(Supplier<CompletionStage<T>> call, Duration timeout) {
    long tick = callClock.getAsLong();
    CompletableFuture<T> answer = start(call);
    if (answer == null) {
      return CompletableFuture.completedFuture(null);
    }
    // a copy bears the timeout: the store's own future is not completed by us
    CompletableFuture<T> timed = answer.isDone() ? answer : CallTimeouts.within(answer, timeout.toNanos());
    return timed.handle((value, failure) -> {
      long took = callClock.getAsLong() - tick;
      if (failure == null) {
        succeeded(took);
        return value;
      }
      failed(took, failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
          ? failure.getCause() : failure);
      return null;
    });
  }

  /**
   * A call begun now and awaited later ({@link #finish}), several at once (a sync's batches, its leases):
   * timed to its own answer, so that the breaker and the round trip hear the call's time, not the time
   * until the caller got to reading it behind the others.
   */
  <T> Started<T> begin(Supplier<CompletionStage<T>> call) {
    long startedAt = System.nanoTime();
    long tick = callClock.getAsLong();
    return new Started<>(start(call), startedAt, tick, callClock);
  }

  /**
   * The answer of a call {@link #begin begun}, waiting at most {@code timeoutNanos} from its start: null
   * when the breaker refused it, it failed, or it took longer.
   */
  <T> T finish(Started<T> call, long timeoutNanos) {
    return call.answer == null ? null : await(call.answer, call.startedAt, timeoutNanos, call::took);
  }

  /** A call {@link #begin begun}, its answer not read yet. */
  static final class Started<T> {
    /** Null when the breaker let no call through. */
    final CompletableFuture<T> answer;
    /** System.nanoTime when it was begun. */
    final long startedAt;
    private final long tick;
    private final LongSupplier clock;
    /** When the answer arrived on the calls' clock (MIN_VALUE before). */
    private volatile long answeredTick = Long.MIN_VALUE;

    private Started(CompletableFuture<T> answer, long startedAt, long tick, LongSupplier clock) {
      this.answer = answer;
      this.startedAt = startedAt;
      this.tick = tick;
      this.clock = clock;
      if (answer != null) {
        answer.whenComplete((value, failure) -> answeredTick = clock.getAsLong());
      }
    }

    /** How long the call took: to its answer, or until now for one not answered yet (a timeout). */
    private long took() {
      long at = answeredTick;
      return (at == Long.MIN_VALUE ? clock.getAsLong() : at) - tick;
    }
  }

  /**
   * Starts a store call without waiting for it: null when the breaker lets no call through; a call
   * that throws at once is a failed answer. The caller must {@link #await} a started call, so that the
   * breaker hears how it went.
   */
  <T> CompletableFuture<T> start(Supplier<CompletionStage<T>> call) {
    if (!breaker.tryAcquirePermission()) {
      lastTroubleNanos = System.nanoTime();
      noticeTransition();
      return null;
    }
    calls.increment();
    try {
      return call.get().toCompletableFuture();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Waits for a started call's answer, at most {@code timeoutNanos} from {@code startedAt}, and tells
   * the breaker how it went ({@code took}: the call's own time, which may end before this wait does).
   * Null when it failed or timed out.
   */
  <T> T await(CompletableFuture<T> answer, long startedAt, long timeoutNanos, LongSupplier took) {
    try {
      T value = answer.get(Math.max(0, timeoutNanos - (System.nanoTime() - startedAt)), TimeUnit.NANOSECONDS);
      succeeded(took.getAsLong());
      return value;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      breaker.releasePermission();
      failures.increment();
      return null;
    } catch (Exception e) {
      failed(took.getAsLong(), e);
      return null;
    }
  }

  private void succeeded(long took) {
    lastAnswerNanos = System.nanoTime();
    nanos.add(took);
    record(callTimers, took);
    // a running mean that follows a slower call at once, so that allowances cover spikes
    roundTripNanos = Math.max(took, (roundTripNanos * 7 + took) / 8);
    breaker.onSuccess(took, TimeUnit.NANOSECONDS);
    noticeTransition();
  }

  private void failed(long took, Throwable e) {
    lastTroubleNanos = System.nanoTime();
    nanos.add(took);
    record(callTimers, took);
    breaker.onError(took, TimeUnit.NANOSECONDS, e);
    failures.increment();
    noticeTransition();
  }

  /** A failure outside any call (the flusher survived an unexpected error): counted with the failed calls. */
  void countFailure() {
    failures.increment();
  }

  /** The clock a call's duration is measured on (see {@code callClock}), nanoseconds. */
  long callClock() {
    return callClock.getAsLong();
  }

  CircuitBreaker breaker() {
    return breaker;
  }

  /** Running mean of a call's duration, nanoseconds, jumping up to any slower call; 0 before the first. */
  long roundTripNanos() {
    return roundTripNanos;
  }

  long calls() {
    return calls.sum();
  }

  long failures() {
    return failures.sum();
  }

  long nanos() {
    return nanos.sum();
  }

  /**
   * The Resilience4j settings of {@code c}, sized for flush rates rather than request rates (see
   * {@link StoreBreakerConfig}). A call is slow above half the flush timeout, or above 80% of the
   * store's own call timeout when that is shorter: a call slower than the store's timeout never
   * completes, it fails, so a slow store must count as slow below it.
   */
  static CircuitBreakerConfig breakerConfig(StoreBreakerConfig c, Duration flushTimeout, Duration storeCallTimeout) {
    Duration slow = c.slowCallDuration().orElseGet(() -> {
      Duration half = flushTimeout.dividedBy(2);
      if (storeCallTimeout != null && storeCallTimeout.multipliedBy(4).dividedBy(5).compareTo(half) < 0) {
        return storeCallTimeout.multipliedBy(4).dividedBy(5);
      }
      return half;
    });
    return CircuitBreakerConfig.custom()
        .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
        // (compare-and-set, not a lock: a call's outcome is often recorded on the thread that asked,
        // a Netty event loop for the reactive API, which must never park; the synchronized window's
        // lock, met taken by the store's thread recording another call, parked one)
        .slidingWindowSynchronizationStrategy(CircuitBreakerConfig.SlidingWindowSynchronizationStrategy.LOCK_FREE)
        .slidingWindowSize(c.slidingWindowSize())
        .minimumNumberOfCalls(c.minimumNumberOfCalls())
        .failureRateThreshold(c.failureRateThreshold())
        .slowCallRateThreshold(c.slowCallRateThreshold())
        .slowCallDurationThreshold(slow)
        .waitDurationInOpenState(c.waitInOpenState())
        .permittedNumberOfCallsInHalfOpenState(c.permittedCallsInHalfOpenState())
        .recordExceptions(Throwable.class)
        .build();
  }

  /** The breaker as the public API shows it ({@link SyncedLimiter#storeBreaker()}). */
  StoreBreaker view() {
    return view;
  }

  private final StoreBreaker view = new StoreBreaker() {
    @Override
    public State state() {
      return stateOf(breaker.getState());
    }

    @Override
    public int failedCalls() {
      return breaker.getMetrics().getNumberOfFailedCalls();
    }

    @Override
    public int successfulCalls() {
      return breaker.getMetrics().getNumberOfSuccessfulCalls();
    }

    @Override
    public void forceOpen() {
      breaker.transitionToForcedOpenState();
      noticeTransition();
    }

    @Override
    public void reset() {
      breaker.reset();
      noticeTransition();
    }

    @Override
    public void onStateChange(Listener listener) {
      if (listener == null) {
        throw new IllegalArgumentException("listener: must not be null");
      }
      breaker.getEventPublisher().onStateTransition(e -> {
        CircuitBreaker.Metrics m = breaker.getMetrics();
        listener.changed(stateOf(e.getStateTransition().getFromState()), stateOf(e.getStateTransition().getToState()),
            m.getFailureRate(), m.getSlowCallRate());
      });
    }

    @Override
    public String toString() {
      return "StoreBreaker{" + breaker.getName() + ": " + state() + "}";
    }
  };

  /** Resilience4j's state as Sluice's (a breaker of ours is never disabled nor metrics-only). */
  private static StoreBreaker.State stateOf(CircuitBreaker.State s) {
    switch (s) {
      case OPEN:
        return StoreBreaker.State.OPEN;
      case HALF_OPEN:
        return StoreBreaker.State.HALF_OPEN;
      case FORCED_OPEN:
        return StoreBreaker.State.FORCED_OPEN;
      default:
        return StoreBreaker.State.CLOSED;
    }
  }
}
