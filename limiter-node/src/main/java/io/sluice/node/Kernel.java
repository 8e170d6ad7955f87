package io.sluice.node;

/**
 * One algorithm's arithmetic over its {@link KeyState}. Every method is lock-free (except the
 * sliding window log's) and allocation-free; time is the ticker's epoch nanoseconds.
 *
 * <p>{@link #tryAcquire} answers in one long so that the allowed path allocates nothing:
 * <ul>
 *   <li>{@code >= 0}: admitted; the payload is the permits remaining (the delay in nanoseconds for
 *       the shaper);</li>
 *   <li>{@link #RETIRED}: the state was evicted while we held it; look the key up again;</li>
 *   <li>otherwise denied, and {@code -result - 1} is the retry-after in nanoseconds.</li>
 * </ul>
 */
abstract class Kernel {
  static final long RETIRED = Long.MIN_VALUE;

  static Kernel of(Limit limit, long origin) {
    switch (limit.algorithm()) {
      case TOKEN_BUCKET:
      case LEAKY_BUCKET:
        return new GcraKernel(limit, origin, false);
      case LEAKY_BUCKET_SHAPER:
        return new GcraKernel(limit, origin, true);
      case FIXED_WINDOW:
        return new FixedWindowKernel(limit);
      case SLIDING_WINDOW_LOG:
        return new SlidingLogKernel(limit);
      case SLIDING_WINDOW_COUNTER:
        return new SlidingCounterKernel(limit);
      default:
        throw new AssertionError(limit.algorithm());
    }
  }

  static long denied(long retryAfterNanos) {
    return -Math.max(retryAfterNanos, 0) - 1;
  }

  static long retryAfterOf(long result) {
    return -result - 1;
  }

  /** A state equivalent to a key never seen: the full budget. */
  abstract KeyState newState(long now);

  abstract long tryAcquire(KeyState state, long now, long cost);

  /** Permits that could be taken now (informative: may change the next instant). */
  abstract long remaining(KeyState state, long now);

  /** Nanoseconds until the whole quota is available again. */
  abstract long resetNanos(KeyState state, long now);

  /** Gives back permits taken by {@link #tryAcquire} when another limit denied the request. */
  abstract void refund(KeyState state, long now, long cost);

  /**
   * Marks the state retired if it is at rest (equivalent to {@link #newState}), so that evicting it
   * loses nothing; a concurrent {@link #tryAcquire} then sees {@link #RETIRED} and retries.
   */
  abstract boolean retireIfAtRest(KeyState state, long now);

  /** Whether admissions by {@link #tryAcquire} report a delay (the shaper) instead of permits left. */
  boolean reportsDelay() {
    return false;
  }
}
