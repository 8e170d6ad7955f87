package io.sluice.node;

import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.DoubleConsumer;

/**
 * A keyed, in-process limiter for one {@link Limit}: each key has its own lock-free state in a
 * bounded table. Thread-safe.
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.of(Limit.tokenBucket("api").capacity(100)
 *     .refill(10, Duration.ofSeconds(1)).build());
 * if (!limiter.tryAcquire(apiKey)) { ... answer 429 ... }
 * Decision d = limiter.acquire(apiKey, 1);   // with remaining, reset and retry-after
 * }</pre>
 *
 * <p>{@link #tryAcquire(String, long)} allocates nothing for a key already in the table;
 * {@link #acquire(String, long)} returns a {@link Decision} (one small allocation).
 */
public final class RateLimiter implements KeyedLimiter {
  /** Default bound of the key table. */
  public static final int DEFAULT_MAX_KEYS = 1_000_000;

  private final Limit limit;
  private final Ticker ticker;
  private final Kernel kernel;
  private final KeyTable table;
  private final LimitListener listener;
  private final LongAdder[] outcomes = new LongAdder[Outcome.values().length];
  private volatile DoubleConsumer utilizationRecorder;

  private RateLimiter(Builder b) {
    this.limit = b.limit;
    this.ticker = b.ticker;
    this.listener = b.listener;
    long now = ticker.read();
    this.kernel = Kernel.of(limit, now);
    this.table = new KeyTable(kernel, b.maxKeys, now);
    for (int i = 0; i < outcomes.length; i++) {
      outcomes[i] = new LongAdder();
    }
  }

  public static RateLimiter of(Limit limit) {
    return builder(limit).build();
  }

  public static Builder builder(Limit limit) {
    return new Builder(limit);
  }

  @Override
  public Limit limit() {
    return limit;
  }

  /** Takes one permit for the key if the limit allows it. */
  public boolean tryAcquire(String key) {
    return tryAcquire(key, 1);
  }

  /**
   * Takes {@code cost} permits for the key if the limit allows it. Soft and shadow limits always
   * answer true (and count the breach).
   *
   * @throws IllegalArgumentException if the key is null or empty, or the cost is below 1 or above
   *     the limit's capacity
   */
  @Override
  public boolean tryAcquire(String key, long cost) {
    checkRequest(key, cost);
    long now = ticker.read();
    long result = take(key, now, cost);
    if (result >= 0) {
      outcomes[Outcome.ALLOWED.ordinal()].increment();
      DoubleConsumer recorder = utilizationRecorder;
      if (recorder != null) {
        recordUtilization(recorder, key, now, result);
      }
      return true;
    }
    if (limit.mode() == Mode.HARD) {
      outcomes[Outcome.DENIED.ordinal()].increment();
      return false;
    }
    breach(key, now, result);
    return true;
  }

  /** {@link #acquire(String, long)} for one permit. */
  public Decision acquire(String key) {
    return acquire(key, 1);
  }

  /** Takes {@code cost} permits for the key if the limit allows it, and tells the whole decision. */
  @Override
  public Decision acquire(String key, long cost) {
    return acquire(key, cost, true);
  }

  @Override
  public Decision acquireUntold(String key, long cost) {
    return acquire(key, cost, false);
  }

  /** The decision, counted; a breach told to the listener when {@code tell}. */
  private Decision acquire(String key, long cost, boolean tell) {
    checkRequest(key, cost);
    long now = ticker.read();
    long result = take(key, now, cost);
    Decision d = decisionOf(key, now, result);
    count(d.outcome(), key, d, tell);
    return d;
  }

  @Override
  public void tellBreach(String key, Decision breach) {
    notifyBreach(key, breach);
  }

  /**
   * For a {@link Algorithm#LEAKY_BUCKET_SHAPER} limit: takes the permits and parks this thread for
   * the delay the shaper asks for, then returns the decision (denied ones return at once).
   */
  public Decision acquireAndWait(String key, long cost) {
    Decision d = acquire(key, cost);
    if (d.allowed() && d.delayNanos() > 0) {
      long deadline = System.nanoTime() + d.delayNanos();
      for (long left = d.delayNanos(); left > 0; left = deadline - System.nanoTime()) {
        LockSupport.parkNanos(this, left);
        if (Thread.interrupted()) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    return d;
  }

  /** Gives back permits an allowed acquire took (see {@link KeyedLimiter#release}). */
  @Override
  public void release(String key, long cost, Decision acquired) {
    checkRequest(key, cost);
    refund(key, ticker.read(), cost);
  }

  /** Evicts every key at rest now (also done automatically as keys are added). */
  public int cleanUp() {
    return table.sweep(ticker.read());
  }

  /** Keys held in the table. */
  public int size() {
    return table.size();
  }

  /** Decisions so far with the given outcome. */
  public long decisions(Outcome outcome) {
    return outcomes[outcome.ordinal()].sum();
  }

  /** New keys charged to the shared overflow state because the table was full. */
  public long overflowed() {
    return table.overflowed();
  }

  /** Keys evicted because they were at rest. */
  public long evicted() {
    return table.evicted();
  }

  /**
   * Receives, for every allowed decision, the fraction of the quota in use (0 to 1). Set by the
   * metrics binder; null (the default) costs nothing on the hot path.
   */
  public void utilizationRecorder(DoubleConsumer recorder) {
    this.utilizationRecorder = recorder;
  }

  // ---- used by RequestLimiter: take, give back, decide ----

  long now() {
    return ticker.read();
  }

  long take(String key, long now, long cost) {
    for (;;) {
      long result = kernel.tryAcquire(table.get(key, now), now, cost);
      if (result != Kernel.RETIRED) {
        return result;
      }
    }
  }

  void refund(String key, long now, long cost) {
    KeyState state = table.peek(key);
    if (state != null) {
      kernel.refund(state, now, cost);
    }
  }

  Decision decisionOf(String key, long now, long result) {
    // the state the decision was taken on: the key's, or the shared overflow one (not a new insert)
    KeyState state = table.peekOrOverflow(key);
    long reset = kernel.resetNanos(state, now);
    if (result >= 0) {
      boolean delay = kernel.reportsDelay();
      long remaining = delay ? kernel.remaining(state, now) : result;
      return new Decision(Outcome.ALLOWED, limit, remaining, reset, 0, delay ? result : 0, null);
    }
    Outcome outcome;
    switch (limit.mode()) {
      case SOFT:
        outcome = Outcome.SOFT_EXCEEDED;
        break;
      case SHADOW:
        outcome = Outcome.SHADOW_DENIED;
        break;
      default:
        outcome = Outcome.DENIED;
    }
    long retryAfter = outcome == Outcome.DENIED ? Kernel.retryAfterOf(result) : 0;
    return new Decision(outcome, limit, kernel.remaining(state, now), reset, retryAfter, 0, null);
  }

  /** Counts a decision; notifies the listener of a breach; records utilization of an allowed one. */
  void count(Outcome outcome, String key, Decision d) {
    count(outcome, key, d, true);
  }

  /** Counts the decision; a breach is told to the listener when {@code tell}. */
  private void count(Outcome outcome, String key, Decision d, boolean tell) {
    outcomes[outcome.ordinal()].increment();
    if (outcome == Outcome.SOFT_EXCEEDED || outcome == Outcome.SHADOW_DENIED) {
      if (tell) {
        notifyBreach(key, d);
      }
    } else if (outcome == Outcome.ALLOWED) {
      DoubleConsumer recorder = utilizationRecorder;
      if (recorder != null) {
        recorder.accept(d.utilization());
      }
    }
  }

  private void breach(String key, long now, long result) {
    Decision d = decisionOf(key, now, result);
    count(d.outcome(), key, d);
  }

  private void notifyBreach(String key, Decision d) {
    try {
      listener.onBreach(limit, key, d);
    } catch (RuntimeException ignored) {
      // a listener must not fail the request it is told about
    }
  }

  private void recordUtilization(DoubleConsumer recorder, String key, long now, long result) {
    long remaining = kernel.reportsDelay() ? kernel.remaining(table.peekOrOverflow(key), now) : result;
    long quota = limit.capacity();
    recorder.accept(Math.min(1.0, (quota - remaining) / (double) quota));
  }

  void checkRequest(String key, long cost) {
    checkRequest(limit, key, cost);
  }

  /** A key and cost a decision of {@code limit} can take (also for RequestLimiter over other limiters). */
  static void checkRequest(Limit limit, String key, long cost) {
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("key: must not be null or empty");
    }
    if (cost < 1) {
      throw new IllegalArgumentException("cost: must be at least 1, got " + cost);
    }
    if (cost > limit.capacity()) {
      throw new IllegalArgumentException("cost: " + cost + " exceeds the capacity " + limit.capacity()
          + " of limit " + limit.name() + ", so it could never be allowed");
    }
  }

  /** Settings of a {@link RateLimiter}; {@link #build()} creates it. */
  public static final class Builder {
    private final Limit limit;
    private Ticker ticker = Ticker.cached();
    private int maxKeys = DEFAULT_MAX_KEYS;
    private LimitListener listener = LimitListener.NONE;

    Builder(Limit limit) {
      if (limit == null) {
        throw new IllegalArgumentException("limit: must not be null");
      }
      this.limit = limit;
    }

    public Builder ticker(Ticker ticker) {
      if (ticker == null) {
        throw new IllegalArgumentException("ticker: must not be null");
      }
      this.ticker = ticker;
      return this;
    }

    /** Most keys held at once; beyond it, new keys share one overflow budget. */
    public Builder maxKeys(int maxKeys) {
      if (maxKeys < 1) {
        throw new IllegalArgumentException("maxKeys: must be positive, got " + maxKeys);
      }
      this.maxKeys = maxKeys;
      return this;
    }

    public Builder listener(LimitListener listener) {
      if (listener == null) {
        throw new IllegalArgumentException("listener: must not be null");
      }
      this.listener = listener;
      return this;
    }

    public RateLimiter build() {
      return new RateLimiter(this);
    }
  }
}
