package io.sluice.node;

import java.util.List;

/**
 * The answer to one check: allowed or not, the limit that decided, the permits remaining, the time
 * until the quota is whole again, and when denied, when to retry. For a request checked against
 * several limits, {@link #parts()} holds each limit's own decision and this one is the deciding part
 * (the denial, else a soft or shadow breach, else the part closest to its limit).
 *
 * <p>Times are nanoseconds; {@link #retryAfterSeconds()} and {@link #resetSeconds()} round up, as
 * HTTP headers want.
 */
public final class Decision {
  private final Outcome outcome;
  private final Limit limit;
  private final long remaining;
  private final long resetNanos;
  private final long retryAfterNanos;
  private final long delayNanos;
  /** Null for a single-limit decision, so that the common case allocates one object. */
  private final List<Decision> parts;
  /** The window the decision counted in, where the limiter says (see {@link #window()}). */
  private final long window;

  Decision(Outcome outcome, Limit limit, long remaining, long resetNanos, long retryAfterNanos,
      long delayNanos, List<Decision> parts) {
    this(outcome, limit, remaining, resetNanos, retryAfterNanos, delayNanos, parts, Long.MIN_VALUE);
  }

  private Decision(Outcome outcome, Limit limit, long remaining, long resetNanos, long retryAfterNanos,
      long delayNanos, List<Decision> parts, long window) {
    this.window = window;
    this.outcome = outcome;
    this.limit = limit;
    this.remaining = remaining;
    this.resetNanos = resetNanos;
    this.retryAfterNanos = retryAfterNanos;
    this.delayNanos = delayNanos;
    this.parts = parts == null ? null : List.copyOf(parts);
  }

  /**
   * A single-limit decision, for limiters built on this module (the distributed one decides from its
   * own state and answers with the same type).
   */
  public static Decision of(Outcome outcome, Limit limit, long remaining, long resetNanos, long retryAfterNanos) {
    if (outcome == null || limit == null) {
      throw new IllegalArgumentException((outcome == null ? "outcome" : "limit") + ": must not be null");
    }
    return new Decision(outcome, limit, Math.max(0, remaining), Math.max(0, resetNanos),
        outcome == Outcome.DENIED ? Math.max(0, retryAfterNanos) : 0, 0, null);
  }

  /**
   * {@link #of(Outcome, Limit, long, long, long)} for a window limit's decision counted in window
   * {@code window} (its index since the epoch), so that permits given back later go back to that
   * window only ({@link KeyedLimiter#release}).
   */
  public static Decision of(Outcome outcome, Limit limit, long remaining, long resetNanos, long retryAfterNanos,
      long window) {
    Decision d = of(outcome, limit, remaining, resetNanos, retryAfterNanos);
    return new Decision(d.outcome, d.limit, d.remaining, d.resetNanos, d.retryAfterNanos, 0, null, window);
  }

  Decision withParts(List<Decision> all) {
    return new Decision(outcome, limit, remaining, resetNanos, retryAfterNanos, delayNanos, all, window);
  }

  /**
   * The index (since the epoch) of the window this decision counted in, for limiters that say
   * (limiter-sync's); {@link Long#MIN_VALUE} otherwise.
   */
  public long window() {
    return window;
  }

  /** Whether the request may proceed (true for soft and shadow breaches). */
  public boolean allowed() {
    return outcome.allowed();
  }

  public Outcome outcome() {
    return outcome;
  }

  /** The limit (policy) that decided. */
  public Limit limit() {
    return limit;
  }

  /** Permits left under {@link #limit()} after this decision. */
  public long remaining() {
    return remaining;
  }

  /** Nanoseconds until the limit's whole quota is available again. */
  public long resetNanos() {
    return resetNanos;
  }

  /** When denied, nanoseconds after which the same request could be allowed; 0 when allowed. */
  public long retryAfterNanos() {
    return retryAfterNanos;
  }

  /**
   * For a leaky bucket shaper: how long the caller must hold the request so that the output keeps a
   * constant rate. 0 for every other algorithm.
   */
  public long delayNanos() {
    return delayNanos;
  }

  /** Each limit's decision; a single-limit decision holds only itself. */
  public List<Decision> parts() {
    return parts == null ? List.of(this) : parts;
  }

  public long retryAfterSeconds() {
    return ceilSeconds(retryAfterNanos);
  }

  public long resetSeconds() {
    return ceilSeconds(resetNanos);
  }

  static long ceilSeconds(long nanos) {
    return nanos <= 0 ? 0 : Limit.ceilDiv(nanos, 1_000_000_000L);
  }

  /** Fraction of the quota in use after this decision, 0 to 1: how close the key is to its limit. */
  public double utilization() {
    long quota = limit.capacity();
    return Math.min(1.0, Math.max(0.0, (quota - remaining) / (double) quota));
  }

  @Override
  public String toString() {
    return outcome + " by " + limit.name() + " remaining=" + remaining + " resetNanos=" + resetNanos
        + (retryAfterNanos > 0 ? " retryAfterNanos=" + retryAfterNanos : "")
        + (delayNanos > 0 ? " delayNanos=" + delayNanos : "");
  }
}
