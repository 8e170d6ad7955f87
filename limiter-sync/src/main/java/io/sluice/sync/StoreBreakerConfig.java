package io.sluice.sync;

import io.sluice.node.Durations;
import java.time.Duration;
import java.util.Optional;

/**
 * How the circuit breaker in front of a limiter's store calls opens and closes: over the last
 * {@code slidingWindowSize} calls (once {@code minimumNumberOfCalls} were made), it opens when
 * {@code failureRateThreshold}% of them failed or timed out, or {@code slowCallRateThreshold}% took
 * longer than {@code slowCallDuration}; while open the failure policy decides and no call goes out; after
 * {@code waitInOpenState} it lets {@code permittedCallsInHalfOpenState} calls through, and closes if
 * they pass. Immutable; {@link #custom()} for a builder, {@link #ofDefaults()} for the defaults.
 *
 * <p>The defaults are sized for flush rates (a node makes about ten calls a second): a window of 10
 * calls, 5 before it judges, 50% failed or slow, slow beyond half the flush timeout (or four fifths of
 * the store's own call timeout, if shorter), 1 s open, 2 calls to close again.
 */
public final class StoreBreakerConfig {
  private static final StoreBreakerConfig DEFAULTS = custom().build();

  private final int slidingWindowSize;
  private final int minimumNumberOfCalls;
  private final float failureRateThreshold;
  private final float slowCallRateThreshold;
  private final Duration slowCallDuration;
  private final Duration waitInOpenState;
  private final int permittedCallsInHalfOpenState;

  private StoreBreakerConfig(Builder b) {
    this.slidingWindowSize = b.slidingWindowSize;
    this.minimumNumberOfCalls = b.minimumNumberOfCalls;
    this.failureRateThreshold = b.failureRateThreshold;
    this.slowCallRateThreshold = b.slowCallRateThreshold;
    this.slowCallDuration = b.slowCallDuration;
    this.waitInOpenState = b.waitInOpenState;
    this.permittedCallsInHalfOpenState = b.permittedCallsInHalfOpenState;
  }

  /** A builder from the defaults. */
  public static Builder custom() {
    return new Builder();
  }

  /** A builder from {@code config}'s settings. */
  public static Builder from(StoreBreakerConfig config) {
    if (config == null) {
      throw new IllegalArgumentException("config: must not be null");
    }
    return new Builder(config);
  }

  public static StoreBreakerConfig ofDefaults() {
    return DEFAULTS;
  }

  public Builder toBuilder() {
    return new Builder(this);
  }

  /** The calls the rates are measured over (count-based). */
  public int slidingWindowSize() {
    return slidingWindowSize;
  }

  /** The calls made before the rates are judged at all. */
  public int minimumNumberOfCalls() {
    return minimumNumberOfCalls;
  }

  /** Failed or timed-out calls, in % of the window, that open the breaker. */
  public float failureRateThreshold() {
    return failureRateThreshold;
  }

  /** Slow calls, in % of the window, that open the breaker. */
  public float slowCallRateThreshold() {
    return slowCallRateThreshold;
  }

  /** How long a call takes to count as slow; empty: half the flush timeout, or less (see the class doc). */
  public Optional<Duration> slowCallDuration() {
    return Optional.ofNullable(slowCallDuration);
  }

  /** How long the breaker stays open before it lets calls try the store again. */
  public Duration waitInOpenState() {
    return waitInOpenState;
  }

  /** Calls let through half open: if they pass, the breaker closes. */
  public int permittedCallsInHalfOpenState() {
    return permittedCallsInHalfOpenState;
  }

  @Override
  public String toString() {
    return "StoreBreakerConfig{slidingWindowSize=" + slidingWindowSize + ", minimumNumberOfCalls=" + minimumNumberOfCalls
        + ", failureRateThreshold=" + failureRateThreshold + ", slowCallRateThreshold=" + slowCallRateThreshold
        + ", slowCallDuration=" + (slowCallDuration == null ? "(from the flush timeout)" : Durations.format(slowCallDuration))
        + ", waitInOpenState=" + Durations.format(waitInOpenState) + ", permittedCallsInHalfOpenState=" + permittedCallsInHalfOpenState + "}";
  }

  /** Builds a {@link StoreBreakerConfig}; every setter checks its value and names it when wrong. */
  public static final class Builder {
    private int slidingWindowSize = 10;
    private int minimumNumberOfCalls = 5;
    private float failureRateThreshold = 50;
    private float slowCallRateThreshold = 50;
    private Duration slowCallDuration;
    private Duration waitInOpenState = Duration.ofSeconds(1);
    private int permittedCallsInHalfOpenState = 2;

    private Builder() {
    }

    private Builder(StoreBreakerConfig c) {
      this.slidingWindowSize = c.slidingWindowSize;
      this.minimumNumberOfCalls = c.minimumNumberOfCalls;
      this.failureRateThreshold = c.failureRateThreshold;
      this.slowCallRateThreshold = c.slowCallRateThreshold;
      this.slowCallDuration = c.slowCallDuration;
      this.waitInOpenState = c.waitInOpenState;
      this.permittedCallsInHalfOpenState = c.permittedCallsInHalfOpenState;
    }

    public Builder slidingWindowSize(int calls) {
      this.slidingWindowSize = positive("slidingWindowSize", calls);
      return this;
    }

    public Builder minimumNumberOfCalls(int calls) {
      this.minimumNumberOfCalls = positive("minimumNumberOfCalls", calls);
      return this;
    }

    public Builder failureRateThreshold(float percent) {
      this.failureRateThreshold = percent("failureRateThreshold", percent);
      return this;
    }

    public Builder slowCallRateThreshold(float percent) {
      this.slowCallRateThreshold = percent("slowCallRateThreshold", percent);
      return this;
    }

    public Builder slowCallDuration(Duration duration) {
      if (duration == null || duration.isNegative() || duration.isZero()) {
        throw new IllegalArgumentException("slowCallDuration: must be positive, got " + Durations.format(duration));
      }
      this.slowCallDuration = duration;
      return this;
    }

    public Builder waitInOpenState(Duration duration) {
      if (duration == null || duration.isNegative() || duration.isZero()) {
        throw new IllegalArgumentException("waitInOpenState: must be positive, got " + Durations.format(duration));
      }
      this.waitInOpenState = duration;
      return this;
    }

    public Builder permittedCallsInHalfOpenState(int calls) {
      this.permittedCallsInHalfOpenState = positive("permittedCallsInHalfOpenState", calls);
      return this;
    }

    public StoreBreakerConfig build() {
      if (minimumNumberOfCalls > slidingWindowSize) {
        throw new IllegalArgumentException("minimumNumberOfCalls: must be at most slidingWindowSize ("
            + slidingWindowSize + "), got " + minimumNumberOfCalls);
      }
      return new StoreBreakerConfig(this);
    }

    private static int positive(String field, int value) {
      if (value < 1) {
        throw new IllegalArgumentException(field + ": must be at least 1, got " + value);
      }
      return value;
    }

    private static float percent(String field, float value) {
      if (!(value > 0 && value <= 100)) {
        throw new IllegalArgumentException(field + ": must be above 0 and at most 100, got " + value);
      }
      return value;
    }
  }
}
