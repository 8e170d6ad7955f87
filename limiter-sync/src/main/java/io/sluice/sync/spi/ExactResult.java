package io.sluice.sync.spi;

import java.util.Objects;

/**
 * The store's answer to one exact acquire ({@link ExactStore#acquire}): the raw answer of the
 * algorithm, whatever the limit's {@link io.sluice.node.Mode} (hard, soft or shadow is decided above
 * the store). Times are microseconds, rounded up. Immutable.
 */
public final class ExactResult {
  private final boolean allowed;
  private final long remaining;
  private final long retryAfterMicros;
  private final long resetMicros;
  private final long delayMicros;
  private final long window;

  /**
   * @param allowed whether the permits were taken
   * @param remaining permits that could be taken now (after this request, if it was allowed)
   * @param retryAfterMicros when denied, how long until the request could pass if nothing else is
   *     taken meanwhile; 0 when allowed
   * @param resetMicros how long until the whole quota is available again
   * @param delayMicros for the leaky bucket shaper, how long the admitted request must wait; else 0
   */
  public ExactResult(boolean allowed, long remaining, long retryAfterMicros, long resetMicros, long delayMicros) {
    this(allowed, remaining, retryAfterMicros, resetMicros, delayMicros, -1);
  }

  /**
   * As above, with the window (its index since the epoch) a window limit's admission counted in:
   * the caller's, or the next one where a node whose clock is ahead has opened it; -1 for none.
   */
  public ExactResult(boolean allowed, long remaining, long retryAfterMicros, long resetMicros, long delayMicros,
      long window) {
    if (remaining < 0 || retryAfterMicros < 0 || resetMicros < 0 || delayMicros < 0) {
      throw new IllegalArgumentException("remaining, retryAfterMicros, resetMicros and delayMicros must not be"
          + " negative, got " + remaining + ", " + retryAfterMicros + ", " + resetMicros + ", " + delayMicros);
    }
    if (allowed && retryAfterMicros != 0) {
      throw new IllegalArgumentException("retryAfterMicros: must be 0 when allowed, got " + retryAfterMicros);
    }
    this.allowed = allowed;
    this.remaining = remaining;
    this.retryAfterMicros = retryAfterMicros;
    this.resetMicros = resetMicros;
    this.delayMicros = delayMicros;
    this.window = window;
  }

  /** The window a window limit's admission counted in (index since the epoch); -1 for none. */
  public long window() {
    return window;
  }

  public boolean allowed() {
    return allowed;
  }

  /** Permits that could be taken now (after this request, if it was allowed). */
  public long remaining() {
    return remaining;
  }

  /** When denied, microseconds until the request could pass if nothing else is taken; 0 when allowed. */
  public long retryAfterMicros() {
    return retryAfterMicros;
  }

  /** Microseconds until the whole quota is available again; 0 when it already is. */
  public long resetMicros() {
    return resetMicros;
  }

  /** Leaky bucket shaper: microseconds the admitted request must wait before it proceeds; else 0. */
  public long delayMicros() {
    return delayMicros;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof ExactResult)) {
      return false;
    }
    ExactResult r = (ExactResult) o;
    return allowed == r.allowed && remaining == r.remaining && retryAfterMicros == r.retryAfterMicros
        && resetMicros == r.resetMicros && delayMicros == r.delayMicros && window == r.window;
  }

  @Override
  public int hashCode() {
    return Objects.hash(allowed, remaining, retryAfterMicros, resetMicros, delayMicros, window);
  }

  @Override
  public String toString() {
    return (allowed ? "allowed" : "denied") + " remaining=" + remaining + " retryAfter=" + retryAfterMicros
        + "us reset=" + resetMicros + "us delay=" + delayMicros + "us";
  }
}
