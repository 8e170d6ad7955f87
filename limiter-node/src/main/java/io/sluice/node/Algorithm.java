package io.sluice.node;

/** The five algorithms of the seeds (the leaky bucket twice: as a meter and as a shaper). */
public enum Algorithm {
  /** Burst up to {@code capacity}, refilled continuously at {@code refillTokens / refillPeriod}. */
  TOKEN_BUCKET,
  /**
   * Leaky bucket as a meter (GCRA): the bucket holds {@code capacity} and leaks at the given rate;
   * a request that would overflow it is rejected.
   */
  LEAKY_BUCKET,
  /**
   * Leaky bucket as a shaper: requests are never rejected while the queue has room, but each one is
   * told how long to wait so that the output is a constant rate; rejected only when the queue of
   * {@code capacity} permits is full.
   */
  LEAKY_BUCKET_SHAPER,
  /** At most {@code limit} permits per window aligned to the epoch; admits up to 2x at an edge. */
  FIXED_WINDOW,
  /** Exact: at most {@code limit} permits in any window ending now; one timestamp per permit. */
  SLIDING_WINDOW_LOG,
  /**
   * The production default: the previous window's count weighted by how much of it still overlaps,
   * plus the current window's count; two counters per key.
   */
  SLIDING_WINDOW_COUNTER
}
