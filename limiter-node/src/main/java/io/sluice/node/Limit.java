package io.sluice.node;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One named limit: an algorithm, its parameters and its {@link Mode}. Immutable; built through
 * {@link Builder}, which rejects bad values with a message that names the field.
 *
 * <pre>{@code
 * Limit perKey = Limit.tokenBucket("api").capacity(100).refill(10, Duration.ofSeconds(1)).build();
 * Limit perIp  = Limit.slidingWindowCounter("ip").limit(1_000).window(Duration.ofMinutes(1)).build();
 * }</pre>
 */
public final class Limit {
  /** Largest limit of the counting algorithms: counts are kept in 32 bits. */
  public static final long MAX_WINDOW_LIMIT = Integer.MAX_VALUE;
  /** Largest limit of the sliding window log, which keeps one timestamp per permit and key. */
  public static final long MAX_LOG_LIMIT = 100_000;
  /**
   * Shortest window: window indexes are kept in 32 bits, so that a key idle for about a year of
   * windows is still told apart from a recent one.
   */
  public static final Duration MIN_WINDOW = Duration.ofMillis(10);
  /**
   * Bucket parameters must keep {@code capacity * emission interval} (in the scaled time unit)
   * under this bound, so that every product on the hot path fits in a long.
   */
  static final long MAX_BURST_SPAN = 1L << 61;

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");

  private final String name;
  private final Algorithm algorithm;
  private final Mode mode;
  private final long capacity;
  private final long refillTokens;
  private final long periodNanos;

  // Bucket algorithms run GCRA on a time scale where one nanosecond is `scale` units and one
  // permit is `interval` units: exact rational arithmetic for any refill rate (see GcraKernel).
  final long scale;
  final long interval;

  private Limit(Builder b) {
    this.name = b.name;
    this.algorithm = b.algorithm;
    this.mode = b.mode;
    this.capacity = b.capacity;
    this.refillTokens = b.refillTokens;
    this.periodNanos = b.periodNanos;
    if (isBucket(algorithm)) {
      long g = gcd(refillTokens, periodNanos);
      this.scale = refillTokens / g;
      this.interval = periodNanos / g;
    } else {
      this.scale = 1;
      this.interval = 1;
    }
  }

  public static Builder tokenBucket(String name) {
    return new Builder(name, Algorithm.TOKEN_BUCKET);
  }

  public static Builder leakyBucket(String name) {
    return new Builder(name, Algorithm.LEAKY_BUCKET);
  }

  public static Builder leakyBucketShaper(String name) {
    return new Builder(name, Algorithm.LEAKY_BUCKET_SHAPER);
  }

  public static Builder fixedWindow(String name) {
    return new Builder(name, Algorithm.FIXED_WINDOW);
  }

  public static Builder slidingWindowLog(String name) {
    return new Builder(name, Algorithm.SLIDING_WINDOW_LOG);
  }

  public static Builder slidingWindowCounter(String name) {
    return new Builder(name, Algorithm.SLIDING_WINDOW_COUNTER);
  }

  public static Builder builder(String name, Algorithm algorithm) {
    return new Builder(name, algorithm);
  }

  /** A builder holding this limit's settings, to derive a variant (another mode or name). */
  public Builder toBuilder() {
    Builder b = new Builder(name, algorithm).mode(mode).capacity(capacity);
    if (isBucket(algorithm)) {
      b.refill(refillTokens, Duration.ofNanos(periodNanos));
    } else {
      b.window(Duration.ofNanos(periodNanos));
    }
    return b;
  }

  public String name() {
    return name;
  }

  public Algorithm algorithm() {
    return algorithm;
  }

  public Mode mode() {
    return mode;
  }

  /** Burst size of a bucket, or permits per window of a window algorithm. */
  public long capacity() {
    return capacity;
  }

  /** Permits added per {@link #periodNanos()} (buckets); for windows, equal to the capacity. */
  public long refillTokens() {
    return refillTokens;
  }

  /** The refill period of a bucket, or the window length. */
  public long periodNanos() {
    return periodNanos;
  }

  /**
   * The time in which the whole quota is restored: the window, or for a bucket the time to refill
   * from empty. This is the {@code w} of the {@code RateLimit-Policy} header.
   */
  public long quotaWindowNanos() {
    if (!isBucket(algorithm)) {
      return periodNanos;
    }
    // capacity * interval fits (checked at build time); divide by scale to get nanoseconds, rounding up.
    long span = capacity * interval;
    return ceilDiv(span, scale);
  }

  static boolean isBucket(Algorithm a) {
    return a == Algorithm.TOKEN_BUCKET || a == Algorithm.LEAKY_BUCKET || a == Algorithm.LEAKY_BUCKET_SHAPER;
  }

  static long gcd(long a, long b) {
    while (b != 0) {
      long t = a % b;
      a = b;
      b = t;
    }
    return a;
  }

  static long ceilDiv(long a, long b) {
    return -Math.floorDiv(-a, b);
  }

  @Override
  public String toString() {
    if (isBucket(algorithm)) {
      return name + "[" + algorithm + " capacity=" + capacity + " refill=" + refillTokens + "/"
          + Durations.formatNanos(periodNanos) + " " + mode + "]";
    }
    return name + "[" + algorithm + " limit=" + capacity + " window=" + Durations.formatNanos(periodNanos)
        + " " + mode + "]";
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Limit)) {
      return false;
    }
    Limit l = (Limit) o;
    return name.equals(l.name) && algorithm == l.algorithm && mode == l.mode && capacity == l.capacity
        && refillTokens == l.refillTokens && periodNanos == l.periodNanos;
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, algorithm, mode, capacity, refillTokens, periodNanos);
  }

  /**
   * Builds a {@link Limit}. Each setter checks its own value; {@link #build()} checks what depends on
   * several. Every error is an {@link IllegalArgumentException} whose message starts with the field.
   */
  public static final class Builder {
    private final String name;
    private final Algorithm algorithm;
    private Mode mode = Mode.HARD;
    private long capacity = -1;
    private long refillTokens = -1;
    private long periodNanos = -1;

    Builder(String name, Algorithm algorithm) {
      if (name == null || !NAME.matcher(name).matches()) {
        throw new IllegalArgumentException("name: must be 1 to 64 characters of [A-Za-z0-9_.:-], got "
            + (name == null ? "null" : '"' + name + '"'));
      }
      if (algorithm == null) {
        throw new IllegalArgumentException("algorithm: must not be null");
      }
      this.name = name;
      this.algorithm = algorithm;
    }

    /** Burst size of a bucket or permits per window. Must be positive. */
    public Builder capacity(long capacity) {
      if (capacity <= 0) {
        throw new IllegalArgumentException("capacity: must be positive, got " + capacity);
      }
      this.capacity = capacity;
      return this;
    }

    /** Same as {@link #capacity(long)}; reads better for window algorithms. */
    public Builder limit(long limit) {
      if (limit <= 0) {
        throw new IllegalArgumentException("limit: must be positive, got " + limit);
      }
      this.capacity = limit;
      return this;
    }

    /** Refill (or leak) rate of a bucket: {@code tokens} every {@code period}. */
    public Builder refill(long tokens, Duration period) {
      if (!isBucket(algorithm)) {
        throw new IllegalArgumentException("refill: not used by " + algorithm + "; set window instead");
      }
      if (tokens <= 0) {
        throw new IllegalArgumentException("refill.tokens: must be positive, got " + tokens);
      }
      this.refillTokens = tokens;
      this.periodNanos = positivePeriod("refill.period", period);
      return this;
    }

    /** Same as {@link #refill(long, Duration)}; reads better for a leaky bucket. */
    public Builder leakRate(long permits, Duration period) {
      return refill(permits, period);
    }

    /** Window length of a window algorithm. */
    public Builder window(Duration window) {
      if (isBucket(algorithm)) {
        throw new IllegalArgumentException("window: not used by " + algorithm + "; set refill instead");
      }
      long nanos = positivePeriod("window", window);
      if (nanos < MIN_WINDOW.toNanos()) {
        throw new IllegalArgumentException("window: must be at least " + Durations.format(MIN_WINDOW) + ", got " + Durations.format(window));
      }
      this.periodNanos = nanos;
      return this;
    }

    public Builder mode(Mode mode) {
      if (mode == null) {
        throw new IllegalArgumentException("mode: must not be null");
      }
      this.mode = mode;
      return this;
    }

    public Limit build() {
      if (capacity < 0) {
        throw new IllegalArgumentException((isBucket(algorithm) ? "capacity" : "limit")
            + ": required for " + algorithm);
      }
      if (periodNanos < 0) {
        throw new IllegalArgumentException((isBucket(algorithm) ? "refill" : "window")
            + ": required for " + algorithm);
      }
      if (isBucket(algorithm)) {
        long g = gcd(refillTokens, periodNanos);
        long interval = periodNanos / g;
        if (capacity > MAX_BURST_SPAN / interval) {
          throw new IllegalArgumentException("capacity: " + capacity + " overflows with refill "
              + refillTokens + " per " + Durations.formatNanos(periodNanos)
              + "; lower the capacity or use a simpler refill ratio");
        }
      } else {
        long max = algorithm == Algorithm.SLIDING_WINDOW_LOG ? MAX_LOG_LIMIT : MAX_WINDOW_LIMIT;
        if (capacity > max) {
          throw new IllegalArgumentException("limit: at most " + max + " for " + algorithm + ", got " + capacity);
        }
        refillTokens = capacity;
      }
      return new Limit(this);
    }

    private static long positivePeriod(String field, Duration period) {
      if (period == null) {
        throw new IllegalArgumentException(field + ": must not be null");
      }
      if (period.isNegative() || period.isZero()) {
        throw new IllegalArgumentException(field + ": must be positive, got " + Durations.format(period));
      }
      try {
        return period.toNanos();
      } catch (ArithmeticException e) {
        throw new IllegalArgumentException(field + ": too long, got " + Durations.format(period), e);
      }
    }
  }
}
