package io.sluice.cli.tune;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Limit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link OwnCount}: a key's own count against its limit, admission by admission, on hand-made runs. */
class OwnCountTest {
  private static final long SECOND = 1_000_000_000L;

  /** Admitted requests of key 0 at the given moments (one window per second, 3 windows), in that order. */
  private static double overPct(Limit limit, long... moments) {
    int n = moments.length;
    int[] done = new int[n];
    byte[] outcome = new byte[n];
    int[] cell = new int[n];
    for (int i = 0; i < n; i++) {
      done[i] = i;
      outcome[i] = Measurement.ADMITTED;
      cell[i] = (int) (moments[i] / SECOND);
    }
    return OwnCount.overLimitWorstPct(limit, 3, SECOND, moments, done, outcome, cell);
  }

  private static long[] spread(int count, long from, long step) {
    long[] at = new long[count];
    for (int i = 0; i < count; i++) {
      at[i] = from + i * step;
    }
    return at;
  }

  private static long[] concat(long[] a, long[] b) {
    long[] c = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  @Test
  void aFixedWindowCountsThePermitsOfItsWindowOnly() {
    Limit fixed = Limit.fixedWindow("f").limit(10).window(Duration.ofSeconds(1)).build();
    // 10 in window 0, then 10 at the very start of window 1: within the limit in each
    assertThat(overPct(fixed, concat(spread(10, 0, 1_000_000), spread(10, SECOND, 1_000_000)))).isZero();
    // 12 in window 1: two past the limit, 20% of it
    assertThat(overPct(fixed, spread(12, SECOND, 1_000_000))).isEqualTo(20.0);
  }

  @Test
  void aSlidingWindowWeighsThePreviousWindowByWhatIsLeftOfIt() {
    Limit sliding = Limit.slidingWindowCounter("s").limit(10).window(Duration.ofSeconds(1)).build();
    // 10 in window 0, then 5 a quarter into window 1: 10 x 0.75 + 5 = 12.5, 2.5 past the limit
    long[] at = concat(spread(10, 0, 1_000_000), spread(5, SECOND + SECOND / 4, 1));
    assertThat(overPct(sliding, at)).isCloseTo(25.0, org.assertj.core.data.Offset.offset(1e-6));
    // the same 5 at 60% into window 1: 10 x 0.4 + 5 = 9, within
    assertThat(overPct(sliding, concat(spread(10, 0, 1_000_000), spread(5, SECOND + SECOND * 6 / 10, 1)))).isZero();
    // a fixed window would not see the first: 5 in window 1
    Limit fixed = Limit.fixedWindow("f").limit(10).window(Duration.ofSeconds(1)).build();
    assertThat(overPct(fixed, at)).isZero();
  }

  @Test
  void deniedRequestsAndRequestsOutsideTheRunAreLeftOut() {
    Limit fixed = Limit.fixedWindow("f").limit(1).window(Duration.ofSeconds(1)).build();
    long[] when = {0, 1, 2};
    int[] done = {0, 1, 2};
    byte[] outcome = {Measurement.ADMITTED, Measurement.DENIED, Measurement.ADMITTED};
    int[] cell = {0, 0, Measurement.late(0)};
    assertThat(OwnCount.overLimitWorstPct(fixed, 3, SECOND, when, done, outcome, cell)).isZero();
  }

  @Test
  void onlyWindowLimits() {
    Limit bucket = Limit.tokenBucket("b").capacity(10).refill(10, Duration.ofSeconds(1)).build();
    assertThatThrownBy(() -> OwnCount.overLimitWorstPct(bucket, 1, SECOND, new long[0], new int[0], new byte[0],
        new int[0])).isInstanceOf(IllegalArgumentException.class);
  }
}
