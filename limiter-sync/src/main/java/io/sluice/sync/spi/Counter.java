package io.sluice.sync.spi;

import io.sluice.node.Algorithm;
import io.sluice.node.Limit;

/**
 * How a store keeps the shared state of one limit: window counts (fixed window and sliding window
 * counter) or a GCRA backlog (token and leaky buckets). Store arithmetic runs in Lua, whose numbers
 * are doubles, so time is in microseconds and every value must stay below 2^53: {@link #of(Limit)}
 * checks that and names the field that does not fit.
 */
public final class Counter {
  /** Largest integer a Lua number holds exactly. */
  static final long LUA_MAX_EXACT = 1L << 53;

  /** The shape of the shared state: window counts, or a GCRA backlog. */
  public enum Kind {
    /** Counts per window (fixed window, sliding window counter). */
    WINDOW,
    /** A GCRA backlog (token and leaky buckets). */
    GCRA
  }

  private final Limit limit;
  private final Kind kind;
  private final long windowNanos;
  private final long scale;
  private final long interval;
  /** Regional quota: the number of regions sharing the limit; 0 for an ordinary limit. */
  private final int regions;

  private Counter(Limit limit, Kind kind, long windowNanos, long scale, long interval, int regions) {
    this.limit = limit;
    this.kind = kind;
    this.windowNanos = windowNanos;
    this.scale = scale;
    this.interval = interval;
    this.regions = regions;
  }

  /**
   * The counter of one region's part of a global quota: the limit's capacity is the global quota G,
   * shared by {@code regions} regions; the store also keeps the region's denied demand and the share
   * a region coordinator gives it (see {@code SyncedLimiter.Builder#regionalQuota(int)}). For a token
   * bucket the share is of the refill rate (G = the tokens of one refill period, which is the quota's
   * window), and each region's bucket holds an even part of the burst ({@link #staticBurst()}).
   *
   * @throws IllegalArgumentException unless the limit is a fixed window, a sliding window counter (shares
   *     are budgets of one window) or a token bucket, and regions is between 1 and the quota (for a
   *     bucket also the burst); for a bucket also a refill period that is not a whole number of
   *     microseconds, or a burst or refill whose product with it passes the store's 53-bit arithmetic
   */
  public static Counter regional(Limit limit, int regions) {
    Algorithm a = limit.algorithm();
    if (a != Algorithm.FIXED_WINDOW && a != Algorithm.SLIDING_WINDOW_COUNTER && a != Algorithm.TOKEN_BUCKET) {
      throw new IllegalArgumentException("limit: a regional quota is split per window or by refill rate; "
          + limit.name() + " is " + a + " (use FIXED_WINDOW, SLIDING_WINDOW_COUNTER or TOKEN_BUCKET)");
    }
    long quota = a == Algorithm.TOKEN_BUCKET ? limit.refillTokens() : limit.capacity();
    if (regions < 1 || regions > quota) {
      throw new IllegalArgumentException("regions: must be between 1 and the quota " + quota
          + " of limit " + limit.name() + ", got " + regions);
    }
    if (a != Algorithm.TOKEN_BUCKET) {
      return new Counter(limit, Kind.WINDOW, limit.periodNanos(), 1, 1, regions);
    }
    if (regions > limit.capacity()) {
      throw new IllegalArgumentException("regions: must be at most the burst " + limit.capacity() + " of limit "
          + limit.name() + " (each region holds a part of it), got " + regions);
    }
    long windowMicros = periodMicros(limit);
    if (Math.max(limit.capacity(), limit.refillTokens()) > LUA_MAX_EXACT / 2 / windowMicros) {
      throw new IllegalArgumentException("capacity: a burst of " + limit.capacity() + " and a refill of "
          + limit.refillTokens() + " per " + windowMicros + " us do not fit the store's 53-bit arithmetic in"
          + " regional limit " + limit.name());
    }
    return new Counter(limit, Kind.GCRA, limit.periodNanos(), 1, 1, regions);
  }

  /**
   * The counter of a limit.
   *
   * @throws IllegalArgumentException for a sliding window log (one timestamp per permit cannot be
   *     batched), a refill period that is not a whole number of microseconds, or a burst too large
   *     for 53-bit arithmetic
   */
  public static Counter of(Limit limit) {
    Algorithm a = limit.algorithm();
    switch (a) {
      case FIXED_WINDOW:
      case SLIDING_WINDOW_COUNTER:
        return new Counter(limit, Kind.WINDOW, limit.periodNanos(), 1, 1, 0);
      case TOKEN_BUCKET:
      case LEAKY_BUCKET:
      case LEAKY_BUCKET_SHAPER: {
        long periodMicros = periodMicros(limit);
        long g = gcd(limit.refillTokens(), periodMicros);
        long scale = limit.refillTokens() / g;
        long interval = periodMicros / g;
        if (limit.capacity() > LUA_MAX_EXACT / 2 / interval) {
          throw new IllegalArgumentException("capacity: " + limit.capacity() + " with refill "
              + limit.refillTokens() + " per " + periodMicros + " us does not fit the store's 53-bit"
              + " arithmetic in limit " + limit.name());
        }
        return new Counter(limit, Kind.GCRA, 0, scale, interval, 0);
      }
      default:
        throw new IllegalArgumentException("algorithm: " + a + " keeps one timestamp per permit and"
            + " cannot be counted in batches; use SLIDING_WINDOW_COUNTER in limit " + limit.name());
    }
  }

  /**
   * A sliding window log's counter, for limiters that decide it with the exact scripts alone (a log is
   * never batched): its window, and the store group of its keys.
   */
  public static Counter ofLog(Limit limit) {
    if (limit.algorithm() != Algorithm.SLIDING_WINDOW_LOG) {
      throw new IllegalArgumentException("limit: " + limit.name() + " is not a sliding window log");
    }
    return new Counter(limit, Kind.WINDOW, limit.periodNanos(), 1, 1, 0);
  }

  public Limit limit() {
    return limit;
  }

  public Kind kind() {
    return kind;
  }

  /** Whether this counts one region's part of a global quota. */
  public boolean regional() {
    return regions > 0;
  }

  /** Regions sharing a regional quota; 0 for an ordinary limit. */
  public int regions() {
    return regions;
  }

  /**
   * What a region enforces without a coordinator's share: the quota divided evenly, rounded down (a
   * regional token bucket's: its refill per period).
   */
  public long staticShare() {
    long quota = regionalBucket() ? limit.refillTokens() : limit.capacity();
    return regions > 0 ? quota / regions : quota;
  }

  /** Whether this counts one region's part of a token-bucket global quota (its rate split by a coordinator). */
  public boolean regionalBucket() {
    return regions > 0 && kind == Kind.GCRA;
  }

  /** A regional token bucket's part of the burst: the burst divided evenly, rounded down. */
  public long staticBurst() {
    return regions > 0 ? limit.capacity() / regions : limit.capacity();
  }

  /** The window of a window counter (a regional token bucket's: its refill period); 0 for other GCRA counters. */
  public long windowNanos() {
    return windowNanos;
  }

  /** How long a window count must live: the window it counts and the one after it, plus a margin. */
  public long windowTtlMillis() {
    return 2 * (windowNanos / 1_000_000) + 1_000;
  }

  /** GCRA: scaled units per microsecond. */
  public long scale() {
    return scale;
  }

  /** GCRA: scaled units per permit. */
  public long interval() {
    return interval;
  }

  /**
   * GCRA: a backlog of {@code backlog} scaled units drained for {@code elapsedMicros} at {@code scale}
   * units per microsecond, never below 0 (prelude.lua's {@code drained}); compared by division, so that
   * {@code elapsedMicros * scale} cannot overflow however long the time.
   */
  public static long drained(long backlog, long elapsedMicros, long scale) {
    return elapsedMicros > backlog / scale ? 0 : backlog - elapsedMicros * scale;
  }

  /** A bucket's refill period in microseconds, the unit of the store's arithmetic; or a message naming it. */
  private static long periodMicros(Limit limit) {
    if (limit.periodNanos() % 1_000 != 0) {
      throw new IllegalArgumentException("refill.period: must be a whole number of microseconds for a "
          + "distributed store, got " + limit.periodNanos() + " ns in limit " + limit.name());
    }
    return limit.periodNanos() / 1_000;
  }

  static long gcd(long a, long b) {
    while (b != 0) {
      long t = a % b;
      a = b;
      b = t;
    }
    return a;
  }
}
