package io.sluice.sync;

/**
 * The store's answer to a take of a bucket's tokens ({@link ExactStore#takeTokens}): the tokens taken
 * (0 when the bucket did not hold the need), what the bucket holds after it, and when denied how long
 * until it holds the need. Times are microseconds, rounded up. Immutable.
 */
public final class TokenGrant {
  private final long granted;
  private final long remaining;
  private final long retryAfterMicros;
  private final long resetMicros;

  public TokenGrant(long granted, long remaining, long retryAfterMicros, long resetMicros) {
    if (granted < 0 || remaining < 0 || retryAfterMicros < 0 || resetMicros < 0) {
      throw new IllegalArgumentException("granted, remaining, retryAfterMicros and resetMicros must not be negative,"
          + " got " + granted + ", " + remaining + ", " + retryAfterMicros + ", " + resetMicros);
    }
    this.granted = granted;
    this.remaining = remaining;
    this.retryAfterMicros = retryAfterMicros;
    this.resetMicros = resetMicros;
  }

  /** Tokens taken for the node: at least the need, or 0. */
  public long granted() {
    return granted;
  }

  /** Tokens the bucket holds after the take. */
  public long remaining() {
    return remaining;
  }

  /** When nothing was taken: microseconds until the bucket holds the need; else 0. */
  public long retryAfterMicros() {
    return retryAfterMicros;
  }

  /** Microseconds until the bucket is full again. */
  public long resetMicros() {
    return resetMicros;
  }

  @Override
  public String toString() {
    return "granted=" + granted + " remaining=" + remaining + " retryAfter=" + retryAfterMicros + "us reset="
        + resetMicros + "us";
  }
}
