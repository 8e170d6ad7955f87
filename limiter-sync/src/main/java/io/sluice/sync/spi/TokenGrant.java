package io.sluice.sync.spi;

import java.util.Objects;

/**
 * The store's answer to one token claim ({@link TokenStore#claimTokens}). Backlogs are in the
 * limit's scaled units ({@link Counter#scale()} per microsecond, {@link Counter#interval()} per
 * token); times are microseconds, rounded up. Immutable.
 */
public final class TokenGrant {
  private final long granted;
  private final long backlogBefore;
  private final long level;
  private final long retryAfterMicros;
  private final long countedAtMicros;

  /**
   * @param granted tokens granted: 0, or between the claim's need and want
   * @param backlogBefore the bucket's backlog at the time the store counted at, after the give-back and
   *     before the grant: with it the caller computes each granted token's due time ({@link #dueMicros})
   * @param level whole tokens left in the bucket now, after the grant (0 when it is in debt)
   * @param retryAfterMicros when nothing was granted though tokens were wanted, how long until the
   *     claim's need (at least one token) could be granted with the same horizon, if nothing else is
   *     taken meanwhile (at least 1); else 0
   */
  public TokenGrant(long granted, long backlogBefore, long level, long retryAfterMicros) {
    this(granted, backlogBefore, level, retryAfterMicros, -1);
  }

  /**
   * As {@link #TokenGrant(long, long, long, long)}, with the time the store counted the claim at
   * ({@code countedAtMicros}: the newest time it had seen for the key, when later than the caller's;
   * -1 when not told): the grant's due times run from it, not from a caller's older clock.
   */
  public TokenGrant(long granted, long backlogBefore, long level, long retryAfterMicros, long countedAtMicros) {
    if (granted < 0 || backlogBefore < 0 || level < 0 || retryAfterMicros < 0) {
      throw new IllegalArgumentException("granted, backlogBefore, level and retryAfterMicros must not be negative,"
          + " got " + granted + ", " + backlogBefore + ", " + level + ", " + retryAfterMicros);
    }
    if (granted > 0 && retryAfterMicros != 0) {
      throw new IllegalArgumentException("retryAfterMicros: must be 0 when tokens were granted, got "
          + retryAfterMicros);
    }
    this.granted = granted;
    this.backlogBefore = backlogBefore;
    this.level = level;
    this.retryAfterMicros = retryAfterMicros;
    this.countedAtMicros = countedAtMicros;
  }

  /**
   * When the store counted the claim (us): the caller's time, or the newest time the store had seen
   * for the key when that was later (a caller whose clock is behind, or that read it before waiting).
   * A caller dates the grant there: from its own older time the tokens would look due too early. -1
   * when the store did not say.
   */
  public long countedAtMicros() {
    return countedAtMicros;
  }

  /**
   * When token {@code i} (1..granted) of a grant whose {@link #backlogBefore()} is given may be used:
   * {@code nowMicros + max(0, ceil((backlogBefore + i * interval - capacity * interval) / scale))}, the
   * moment the bucket has drained enough for it. {@code nowMicros} is the claim's time: a caller behind
   * the store's newest time uses the offset on its own clock, as {@code gcra.lua} admits such a caller
   * as if it were at that newest time. Exact in longs for every claim the store accepts.
   */
  public static long dueMicros(Counter counter, long nowMicros, long backlogBefore, long i) {
    long interval = counter.interval();
    long over = backlogBefore + i * interval - counter.limit().capacity() * interval;
    return over <= 0 ? nowMicros : nowMicros - Math.floorDiv(-over, counter.scale());
  }

  /** Due time of this grant's token {@code i} (1..granted) for a claim made at {@code nowMicros}. */
  public long dueMicros(Counter counter, long nowMicros, long i) {
    if (i < 1 || i > granted) {
      throw new IllegalArgumentException("i: must be between 1 and the tokens granted " + granted + ", got " + i);
    }
    return dueMicros(counter, nowMicros, backlogBefore, i);
  }

  /** Tokens granted: 0, or between the claim's need and want. */
  public long granted() {
    return granted;
  }

  /** The backlog (scaled units) after the give-back and before the grant, at the time the store counted at. */
  public long backlogBefore() {
    return backlogBefore;
  }

  /** Whole tokens left in the bucket now, after the grant; 0 when it is in debt. */
  public long level() {
    return level;
  }

  /**
   * When nothing was granted though tokens were wanted: microseconds until the claim's need (at least
   * one token) could be granted with the same horizon, if nothing else is taken; else 0.
   */
  public long retryAfterMicros() {
    return retryAfterMicros;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof TokenGrant)) {
      return false;
    }
    TokenGrant g = (TokenGrant) o;
    return granted == g.granted && backlogBefore == g.backlogBefore && level == g.level
        && retryAfterMicros == g.retryAfterMicros;
  }

  @Override
  public int hashCode() {
    return Objects.hash(granted, backlogBefore, level, retryAfterMicros);
  }

  @Override
  public String toString() {
    return "granted=" + granted + " backlogBefore=" + backlogBefore + " level=" + level + " retryAfter="
        + retryAfterMicros + "us";
  }
}
