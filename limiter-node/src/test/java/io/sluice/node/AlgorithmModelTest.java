package io.sluice.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.ReferenceModels.Answer;
import io.sluice.node.ReferenceModels.Model;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Every algorithm against its reference model over random request traces: the same decision, the
 * same permits remaining, and (where the model defines it) the same retry-after and delay. Each trace
 * comes from a seed, and a failure names the seed, the limit and the step, so it can be replayed.
 */
class AlgorithmModelTest {
  private static final int TRACES = 400;
  private static final long BASE_SEED = 0x5EEDL;

  /** One request: the time since the previous one and its cost. */
  static final class Step {
    final long gapNanos;
    final long cost;

    Step(long gapNanos, long cost) {
      this.gapNanos = gapNanos;
      this.cost = cost;
    }

    @Override
    public String toString() {
      return "+" + gapNanos + "ns x" + cost;
    }
  }

  @Test
  void tokenBucketMatchesModel() {
    forEachTrace(r -> bucket(Limit.tokenBucket("tb"), r));
  }

  @Test
  void leakyBucketMeterMatchesModel() {
    forEachTrace(r -> bucket(Limit.leakyBucket("leaky"), r));
  }

  @Test
  void leakyBucketShaperMatchesModel() {
    forEachTrace(r -> bucket(Limit.leakyBucketShaper("shaper"), r));
  }

  @Test
  void fixedWindowMatchesModel() {
    forEachTrace(r -> window(Limit.fixedWindow("fixed"), r));
  }

  @Test
  void slidingWindowLogMatchesModel() {
    forEachTrace(r -> window(Limit.slidingWindowLog("log"), r));
  }

  @Test
  void slidingWindowCounterMatchesModel() {
    forEachTrace(r -> window(Limit.slidingWindowCounter("counter"), r));
  }

  private static void forEachTrace(Function<SplittableRandom, Limit> limits) {
    for (int t = 0; t < TRACES; t++) {
      long seed = BASE_SEED + t;
      SplittableRandom random = new SplittableRandom(seed);
      Limit limit = limits.apply(random);
      check(seed, limit, trace(random, limit.periodNanos()));
    }
  }

  private static Limit bucket(Limit.Builder b, SplittableRandom r) {
    long period = r.nextInt(3) == 0
        ? new long[] {1_000_000_000L, 60_000_000_000L, 7_000_000L}[r.nextInt(3)]
        : r.nextLong(1_000, 1_000_000_001L);
    return b.capacity(r.nextLong(1, 41)).refill(r.nextLong(1, 26), Duration.ofNanos(period)).build();
  }

  private static Limit window(Limit.Builder b, SplittableRandom r) {
    long window = r.nextInt(3) == 0
        ? new long[] {1_000_000_000L, 60_000_000_000L}[r.nextInt(2)]
        : r.nextLong(10_000_000L, 3_000_000_001L);
    return b.limit(r.nextLong(1, 41)).window(Duration.ofNanos(window)).build();
  }

  /**
   * Gaps from "the same instant" to "minutes later", biased to short ones so that limits bite, and
   * exact fractions and multiples of the limit's period so that boundaries are hit on the nanosecond.
   */
  private static List<Step> trace(SplittableRandom r, long period) {
    int length = r.nextInt(1, 121);
    List<Step> steps = new ArrayList<>(length);
    for (int i = 0; i < length; i++) {
      long gap;
      switch (r.nextInt(5)) {
        case 0:
          gap = 0;
          break;
        case 1:
          gap = r.nextLong(50_000_000L);
          break;
        case 2:
          gap = r.nextLong(2_000_000_000L);
          break;
        case 3:
          gap = r.nextBoolean() ? period / r.nextInt(1, 5) : period * r.nextInt(1, 3);
          break;
        default:
          gap = r.nextLong(200_000_000_000L);
      }
      long cost = r.nextInt(5) == 0 ? r.nextLong(1, 41) : 1;
      steps.add(new Step(gap, cost));
    }
    return steps;
  }

  private static void check(long seed, Limit limit, List<Step> trace) {
    ManualTicker ticker = new ManualTicker();
    RateLimiter limiter = RateLimiter.builder(limit).ticker(ticker).build();
    Model model = ReferenceModels.of(limit, ticker.read());
    int i = 0;
    for (Step step : trace) {
      ticker.advanceNanos(step.gapNanos);
      long cost = Math.min(step.cost, limit.capacity());
      Decision actual = limiter.acquire("k", cost);
      Answer expected = model.request(ticker.read(), cost);
      String where = "seed " + seed + " " + limit + " step " + i++ + " " + step + ": expected " + expected
          + ", got " + actual;
      assertThat(actual.allowed()).as(where).isEqualTo(expected.allowed);
      assertThat(actual.remaining()).as(where).isEqualTo(expected.remaining);
      if (expected.retryAfter >= 0) {
        assertThat(actual.retryAfterNanos()).as(where).isEqualTo(expected.retryAfter);
      }
      assertThat(actual.delayNanos()).as(where).isEqualTo(expected.delay);
    }
  }
}
