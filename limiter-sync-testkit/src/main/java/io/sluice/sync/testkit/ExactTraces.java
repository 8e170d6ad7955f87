package io.sluice.sync.testkit;

import io.sluice.node.Limit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The random request traces and limits of {@link ExactStoreContract}'s model checks: limits as in
 * limiter-node's AlgorithmModelTest with periods in whole microseconds, and traces that hit window
 * edges to the microsecond.
 */
final class ExactTraces {
  private ExactTraces() {
  }

  /** One request: the time since the previous one (whole microseconds) and its cost. */
  static final class Step {
    final long gapMicros;
    final long cost;

    Step(long gapMicros, long cost) {
      this.gapMicros = gapMicros;
      this.cost = cost;
    }

    @Override
    public String toString() {
      return "+" + gapMicros + "us x" + cost;
    }
  }

  /** Capacities and rates as in limiter-node's AlgorithmModelTest, with periods in whole microseconds. */
  static Limit bucket(Limit.Builder b, SplittableRandom r) {
    long periodMicros = r.nextInt(3) == 0
        ? new long[] {1_000_000L, 60_000_000L, 7_000L}[r.nextInt(3)]
        : r.nextLong(1, 1_000_001L);
    long capacity = r.nextInt(10) == 0 ? r.nextLong(41, 1_001) : r.nextLong(1, 41);
    return b.capacity(capacity).refill(r.nextLong(1, 26), Duration.ofNanos(periodMicros * 1_000)).build();
  }

  static Limit window(Limit.Builder b, SplittableRandom r) {
    long windowMicros = r.nextInt(3) == 0
        ? new long[] {1_000_000L, 60_000_000L}[r.nextInt(2)]
        : r.nextLong(10_000L, 3_000_001L);
    long limit = r.nextInt(10) == 0 ? r.nextLong(41, 1_001) : r.nextLong(1, 41);
    return b.limit(limit).window(Duration.ofNanos(windowMicros * 1_000)).build();
  }

  /**
   * Gaps from "the same instant" to "minutes later", biased to short ones so that limits bite, with
   * exact fractions and multiples of the period, and steps that land on, just before or just after
   * the next epoch-aligned period boundary (a window edge), so that boundaries are hit to the
   * microsecond. The gap of a boundary step is filled in by {@code ExactStoreContract#check}, which knows the time.
   */
  static List<Step> trace(SplittableRandom r, long periodMicros, int maxSteps) {
    int length = r.nextInt(1, maxSteps + 1);
    List<Step> steps = new ArrayList<>(length);
    for (int i = 0; i < length; i++) {
      long gap;
      switch (r.nextInt(7)) {
        case 0:
        case 6: // bursts at one instant, twice as likely, so that the buckets' limits bite too
          gap = 0;
          break;
        case 1:
          gap = r.nextLong(50_000L);
          break;
        case 2:
          gap = r.nextLong(2_000_000L);
          break;
        case 3:
          gap = r.nextBoolean() ? periodMicros / r.nextInt(1, 5) : periodMicros * r.nextInt(1, 3);
          break;
        case 4:
          gap = -2 + r.nextInt(3); // -2, -1, 0: to the next boundary, 1 us before it, 1 us after it
          break;
        default: // 5
          gap = r.nextLong(200_000_000L);
      }
      long cost = r.nextInt(5) == 0 ? r.nextLong(1, 41) : 1;
      steps.add(new Step(gap, cost));
    }
    return steps;
  }
}
