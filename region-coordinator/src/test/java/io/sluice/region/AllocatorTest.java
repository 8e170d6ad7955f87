package io.sluice.region;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The split's arithmetic over seeded random inputs (a failure names its seed), against a reference
 * water-filling computed by bisection on the level in doubles.
 */
class AllocatorTest {
  private static final int TRIALS = 2_000;

  @Test
  void splitHandsOutTheWholeBudgetAndNeverMore() {
    for (int seed = 0; seed < TRIALS; seed++) {
      SplittableRandom rnd = new SplittableRandom(seed);
      int n = 1 + rnd.nextInt(6);
      long budget = rnd.nextLong(0, 1_000_000);
      long[] floors = new long[n];
      double[] demand = new double[n];
      for (int i = 0; i < n; i++) {
        floors[i] = rnd.nextInt(4) == 0 ? 0 : rnd.nextLong(0, budget / n + 2);
        demand[i] = rnd.nextInt(5) == 0 ? 0 : rnd.nextDouble() * 2 * budget / n;
      }
      long[] x = Allocator.split(budget, floors, demand);
      String at = "seed " + seed + ": budget " + budget + " floors " + Arrays.toString(floors) + " demand "
          + Arrays.toString(demand) + " -> " + Arrays.toString(x);
      assertThat(Arrays.stream(x).sum()).as(at).isEqualTo(budget);
      long floorSum = Arrays.stream(floors).sum();
      for (int i = 0; i < n; i++) {
        assertThat(x[i]).as(at).isGreaterThanOrEqualTo(0);
        if (floorSum <= budget) {
          assertThat(x[i]).as(at).isGreaterThanOrEqualTo(floors[i]);
        }
      }
    }
  }

  @Test
  void splitIsMaxMinFairOnDemandAboveTheFloors() {
    for (int seed = 0; seed < TRIALS; seed++) {
      SplittableRandom rnd = new SplittableRandom(seed);
      int n = 1 + rnd.nextInt(6);
      long budget = rnd.nextLong(1, 1_000_000);
      long[] floors = new long[n];
      double[] demand = new double[n];
      for (int i = 0; i < n; i++) {
        floors[i] = rnd.nextLong(0, budget / (2L * n) + 1);
        demand[i] = rnd.nextDouble() * 2 * budget / n;
      }
      long[] x = Allocator.split(budget, floors, demand);
      double[] reference = referenceWaterFill(budget, floors, demand);
      String at = "seed " + seed + ": " + Arrays.toString(x) + " vs " + Arrays.toString(reference);
      double wants = 0;
      for (int i = 0; i < n; i++) {
        wants += Math.max(0, demand[i] - floors[i]);
      }
      if (wants >= budget - Arrays.stream(floors).sum()) {
        // short of budget: the water-filling itself, within the permits integer rounding moves
        for (int i = 0; i < n; i++) {
          assertThat((double) x[i]).as(at).isCloseTo(reference[i], org.assertj.core.data.Offset.offset(n + 1.0));
        }
      } else {
        // enough for every demand: each region gets at least what it asked for
        for (int i = 0; i < n; i++) {
          assertThat((double) x[i]).as(at).isGreaterThanOrEqualTo(Math.max(floors[i], Math.floor(demand[i])) - 1);
        }
      }
    }
  }

  /** floors + min(want, level), with the level found by bisection so that the sum is the budget. */
  private static double[] referenceWaterFill(long budget, long[] floors, double[] demand) {
    int n = floors.length;
    double rest = budget - Arrays.stream(floors).sum();
    double lo = 0;
    double hi = budget;
    for (int k = 0; k < 200; k++) {
      double mid = (lo + hi) / 2;
      double sum = 0;
      for (int i = 0; i < n; i++) {
        sum += Math.min(Math.max(0, demand[i] - floors[i]), mid);
      }
      if (sum > rest) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
    double[] x = new double[n];
    for (int i = 0; i < n; i++) {
      x[i] = floors[i] + Math.min(Math.max(0, demand[i] - floors[i]), lo);
    }
    return x;
  }

  @Test
  void targetsNeverPromiseMoreThanTheQuotaGivenWhatIsCountedAndHeld() {
    for (int seed = 0; seed < TRIALS; seed++) {
      SplittableRandom rnd = new SplittableRandom(seed);
      int n = 1 + rnd.nextInt(5);
      long quota = rnd.nextLong(n, 100_000);
      long staticShare = quota / n;
      Allocator.RegionView[] views = new Allocator.RegionView[n];
      long committed = 0;
      for (int i = 0; i < n; i++) {
        boolean reachable = rnd.nextInt(4) != 0;
        long held = rnd.nextBoolean() ? staticShare : rnd.nextLong(0, staticShare + 1);
        long admitted = reachable ? rnd.nextLong(0, held + 1) : 0;
        views[i] = new Allocator.RegionView(reachable, admitted, rnd.nextDouble() * 1e-6, rnd.nextLong(0, staticShare / 4 + 1),
            held, held, held);
        committed += reachable ? 0 : held;
      }
      long window = 10_000_000_000L;
      // (half the trials with a read lag: floors of what a region asks before reading a cut share)
      long lag = rnd.nextBoolean() ? 0 : rnd.nextLong(1, window);
      Allocator.Target t = Allocator.target(quota, rnd.nextLong(1, window), window, views, lag,
          rnd.nextBoolean() ? 0 : rnd.nextLong(1, window / 4));
      long sumNow = committed;
      long sumLater = committed;
      for (int i = 0; i < n; i++) {
        if (views[i].reachable()) {
          assertThat(t.now()[i]).as("seed " + seed).isGreaterThanOrEqualTo(views[i].admitted());
          sumNow += t.now()[i];
          sumLater += t.later()[i];
        } else {
          assertThat(t.now()[i]).isEqualTo(-1);
        }
      }
      assertThat(sumNow).as("seed " + seed).isLessThanOrEqualTo(quota);
      assertThat(sumLater).as("seed " + seed).isLessThanOrEqualTo(quota);
    }
  }

  /**
   * A sliding quota's targets: every region counts at the larger of its share and what it may weigh
   * before its nodes read the share ({@link Allocator#committed}), an unreachable region at the most
   * it holds, and those sum to at most G, now and in the later windows (the same split); a region
   * below its fair split never gets less than it weighs; and a region whose demand is met by its fair
   * split never gets more than that unless every other region's fair split is met.
   */
  /**
   * A token-bucket quota's targets are rates: whatever a region admitted, the reachable regions share
   * what the unreachable ones may hold at most, max-min fairly by demand above their floors, the same now
   * and later, and never more than the quota in all (an admitted count above a share, a burst spent,
   * does not raise it, as it does a window's).
   */
  @Test
  void bucketTargetsSplitTheRateLeftByTheUnreachableRegions() {
    for (int seed = 0; seed < TRIALS; seed++) {
      SplittableRandom rnd = new SplittableRandom(seed);
      int n = 1 + rnd.nextInt(5);
      long quota = rnd.nextLong(n, 100_000);
      long staticShare = quota / n;
      long window = 10_000_000_000L;
      Allocator.RegionView[] views = new Allocator.RegionView[n];
      long unreachable = 0;
      for (int i = 0; i < n; i++) {
        boolean reachable = rnd.nextInt(4) != 0;
        long held = rnd.nextBoolean() ? staticShare : rnd.nextLong(0, staticShare + 1);
        long heldLater = rnd.nextBoolean() ? held : rnd.nextLong(0, staticShare + 1);
        views[i] = new Allocator.RegionView(reachable, rnd.nextLong(0, 3 * quota), rnd.nextDouble() * 1e-6,
            rnd.nextLong(0, staticShare / 4 + 1), held, Math.min(held, heldLater), Math.max(held, heldLater));
        unreachable += reachable ? 0 : Math.max(held, heldLater);
      }
      Allocator.Target t = Allocator.bucketTarget(quota, window, views);
      long budget = Math.max(0, quota - unreachable);
      long floors = 0;
      double[] demand = new double[n];
      long sum = 0;
      for (int i = 0; i < n; i++) {
        assertThat(t.later()[i]).as("seed " + seed).isEqualTo(t.now()[i]);
        if (views[i].reachable()) {
          assertThat(t.now()[i]).as("seed " + seed).isNotNegative();
          sum += t.now()[i];
          floors += views[i].floor();
          demand[i] = views[i].demandPerNano() * window;
        } else {
          assertThat(t.now()[i]).as("seed " + seed).isEqualTo(-1);
        }
      }
      assertThat(sum).as("seed " + seed).isLessThanOrEqualTo(budget);
      if (floors <= budget) {
        for (int i = 0; i < n; i++) {
          if (views[i].reachable()) {
            assertThat(t.now()[i]).as("seed " + seed).isGreaterThanOrEqualTo(views[i].floor());
          }
        }
        if (Arrays.stream(views).anyMatch(Allocator.RegionView::reachable)) {
          assertThat(sum).as("seed " + seed).isEqualTo(budget); // the whole rate is handed out
        }
      }
    }
  }

  @Test
  void slidingTargetsCountEveryRegionAtWhatItMayWeighAndStayWithinTheQuota() {
    for (int seed = 0; seed < TRIALS; seed++) {
      SplittableRandom rnd = new SplittableRandom(seed);
      int n = 1 + rnd.nextInt(5);
      long quota = rnd.nextLong(n, 100_000);
      long staticShare = quota / n;
      long window = 10_000_000_000L;
      long lag = rnd.nextBoolean() ? 0 : rnd.nextLong(1, window / 4);
      Allocator.RegionView[] views = new Allocator.RegionView[n];
      long unreachable = 0;
      for (int i = 0; i < n; i++) {
        boolean reachable = rnd.nextInt(4) != 0;
        long held = rnd.nextBoolean() ? staticShare : rnd.nextLong(0, staticShare + 1);
        // (a sliding count may stand above the share after a cut: up to twice it here)
        long weighs = reachable ? rnd.nextLong(0, 2 * held + 2) : 0;
        views[i] = new Allocator.RegionView(reachable, weighs, rnd.nextDouble() * 1e-6,
            rnd.nextLong(0, staticShare / 4 + 1), held, held, held);
        unreachable += reachable ? 0 : held;
      }
      Allocator.Target t = Allocator.slidingTarget(quota, window, views, lag);
      long counted = unreachable;
      for (int i = 0; i < n; i++) {
        assertThat(t.later()[i]).as("seed " + seed).isEqualTo(t.now()[i]);
        if (views[i].reachable()) {
          assertThat(t.now()[i]).as("seed " + seed).isNotNegative();
          counted += Math.max(t.now()[i], Math.max(Allocator.committed(views[i], lag), views[i].floor()));
        } else {
          assertThat(t.now()[i]).isEqualTo(-1);
        }
      }
      long weighed = unreachable;
      for (Allocator.RegionView v : views) {
        weighed += v.reachable() ? Math.max(Allocator.committed(v, lag), v.floor()) : 0;
      }
      // (what the regions weigh already may pass G, after a cut or a fault: nothing is added then)
      assertThat(counted).as("seed " + seed).isLessThanOrEqualTo(Math.max(quota, weighed));
    }
  }

  /**
   * After a shift of demand a sliding quota's busy region weighs more than its new fair split: its share
   * is cut to that split, below what it weighs, so that it does not re-admit what fades of its own
   * count (with a share it already weighs, shares never moved: 3,138 of 6,000 and rising where its fair
   * split was 2,400); the others are given what is left, up to their fair splits, and more as its count
   * fades. Once every region weighs its fair split, the targets are the fair splits.
   */
  @Test
  void aSlidingQuotasRegionAboveItsFairSplitIsCutToIt() {
    long window = 10_000_000_000L;
    Allocator.RegionView[] shifted = {
        new Allocator.RegionView(true, 4_000, 120e-9, 0, 4_000, 4_000, 4_000),
        new Allocator.RegionView(true, 1_400, 240e-9, 0, 1_400, 1_400, 1_400),
        new Allocator.RegionView(true, 500, 840e-9, 0, 600, 600, 600)};
    Allocator.Target t = Allocator.slidingTarget(6_000, window, shifted, 0);
    // fair: 1,200 / 2,400 / 2,400; a weighs 4,000 and the others 1,900, so 100 are left for b (who
    // wants 1,000 to its fair split) and c (1,900): 50 each
    assertThat(t.now()).containsExactly(1_200, 1_450, 550);
    Allocator.RegionView[] settled = {
        new Allocator.RegionView(true, 1_200, 120e-9, 0, 1_200, 1_200, 1_200),
        new Allocator.RegionView(true, 2_390, 240e-9, 0, 2_400, 2_400, 2_400),
        new Allocator.RegionView(true, 2_395, 840e-9, 0, 2_400, 2_400, 2_400)};
    assertThat(Allocator.slidingTarget(6_000, window, settled, 0).now()).containsExactly(1_200, 2_400, 2_400);
  }

  /**
   * A share cut within a window keeps what its region asks for before its nodes read the cut (the
   * read lag), up to what it holds. Late in a window of G = 3,000, 200 left to split, every region
   * asking for 6,000 a second: region a holds 1,500 and counted 1,400, the others 750 and 700. Split
   * by demand alone a's share is cut to 1,466 while its nodes, which read shares a sync or two later,
   * go on admitting up to 1,500 and the others are given the difference at once; with a lag of 250 ms
   * it keeps its 1,500 (its 100 left are less than it asks for over the lag) and the sum stays within G.
   */
  @Test
  void aShareCutWithinAWindowKeepsWhatItsNodesAdmitBeforeReadingIt() {
    long second = 1_000_000_000L;
    Allocator.RegionView[] views = {
        new Allocator.RegionView(true, 1_400, 6_000e-9, 0, 1_500, 1_500, 1_500),
        new Allocator.RegionView(true, 700, 6_000e-9, 0, 750, 750, 750),
        new Allocator.RegionView(true, 700, 6_000e-9, 0, 750, 750, 750)};
    Allocator.Target without = Allocator.target(3_000, second / 2, second, views, 0, 0);
    Allocator.Target with = Allocator.target(3_000, second / 2, second, views, second / 4, 0);
    assertThat(without.now()[0]).isLessThan(1_500);
    assertThat(with.now()).containsExactly(1_500, 750, 750);
  }

  /**
   * Half way through a window (G = 6,000 per 10 s, demands 840, 240 and 120 per second), the region
   * that spent its share early does not take what the slower regions are still owed of their max-min
   * fair shares (2,400, 2,400, 1,200): split by the rest of the window's demand alone, region b was
   * left 1,800 of its 2,400, and in the rig region c (the tenth) admitted 61% of what it asked.
   */
  @Test
  void midWindowTheFastRegionDoesNotTakeWhatTheSlowOnesAreOwed() {
    long window = 10_000_000_000L;
    long remaining = window / 2;
    Allocator.RegionView[] views = {
        new Allocator.RegionView(true, 2_400, 840e-9, 0, 2_400, 2_400, 2_400),
        new Allocator.RegionView(true, 1_200, 240e-9, 0, 2_400, 2_400, 2_400),
        new Allocator.RegionView(true, 600, 120e-9, 0, 1_200, 1_200, 1_200)};
    Allocator.Target t = Allocator.target(6_000, remaining, window, views, 0, 0);
    assertThat(t.later()).containsExactly(2_400, 2_400, 1_200);
    assertThat(t.now()).containsExactly(2_400, 2_400, 1_200);
  }

  /**
   * The counts reach a region's Redis up to a sync interval late: a quarter into a 1 s window, region c
   * (600 a second, far below the level) has admitted 150 and the round reads 120, 50 ms behind. Split
   * by the rest of the window alone (450), it was left 570 for a window it asks 600 of, and the busy
   * regions were given the 30 and spent them; with the count's lag split for as demand to come, 600.
   */
  @Test
  void whatTheCountsDoNotShowYetIsSplitForAsDemandToCome() {
    long window = 1_000_000_000L;
    long remaining = window * 3 / 4;
    Allocator.RegionView[] views = {
        new Allocator.RegionView(true, 360, 1_800e-9, 0, 1_200, 1_200, 1_200),
        new Allocator.RegionView(true, 720, 3_600e-9, 0, 1_200, 1_200, 1_200),
        new Allocator.RegionView(true, 120, 600e-9, 0, 600, 600, 600)};
    assertThat(Allocator.target(3_000, remaining, window, views, 0, 0).now()[2]).isEqualTo(570);
    Allocator.Target t = Allocator.target(3_000, remaining, window, views, 0, 50_000_000L);
    assertThat(t.now()[2]).isEqualTo(600);
    assertThat(t.now()[0] + t.now()[1] + t.now()[2]).isLessThanOrEqualTo(3_000);
  }

  /**
   * A fixed window quota's split plans for a margin over a region's demand where its readings swing:
   * in real time a steady 600 a second read 520-730 from round to round (two or three of each node's
   * flushes a round), and a region below the level split by a low reading admitted 81-90% of what it
   * asked. Steady readings plan for none, and a shift of demand is not taken for noise.
   */
  @Test
  void theSplitPlansForTheNoiseOfARegionsReadings() {
    long round = 250_000_000L;
    double rate = 600e-9;
    double spread = 0;
    long[] readings = {130, 182, 150, 131, 168, 129, 176, 150}; // 520-730 a second over 250 ms
    for (long seen : readings) {
      spread = ShareArithmetic.spread(spread, rate, seen, round, round);
    }
    assertThat(spread).isBetween(0.08, 0.16);
    assertThat(ShareArithmetic.plannedRate(rate, spread) / rate).isBetween(1.15, 1.3);
    double steady = 0;
    for (int i = 0; i < 8; i++) {
      steady = ShareArithmetic.spread(steady, rate, 150, round, round);
    }
    assertThat(ShareArithmetic.plannedRate(rate, steady)).as("steady readings: no margin").isEqualTo(rate);
    assertThat(ShareArithmetic.spread(steady, rate, 450, round, round)).as("a shift to three times the demand")
        .isEqualTo(steady);
    assertThat(ShareArithmetic.spread(steady, rate, 130, round / 10, round)).as("a reading of a tenth of a round")
        .isEqualTo(steady);
    assertThat(ShareArithmetic.plannedRate(rate, 1)).as("at most 30% more").isCloseTo(rate * 1.3,
        org.assertj.core.data.Offset.offset(1e-15));
  }

  /**
   * What the regions are owed of their fair shares never eats into another region's configured
   * floor: with 1,000 left of the window, floors of 600 and 100 for the two regions that have not
   * admitted yet, and each owed more than that, both keep their floors (the first got 500 when the
   * owed amounts were added to the floors and scaled down with them).
   */
  @Test
  void whatIsOwedNeverTakesFromAFloor() {
    long window = 10_000_000_000L;
    Allocator.RegionView[] views = {
        new Allocator.RegionView(true, 5_000, 840e-9, 600, 5_000, 2_000, 2_000),
        new Allocator.RegionView(true, 0, 240e-9, 600, 600, 2_000, 2_000),
        new Allocator.RegionView(true, 0, 240e-9, 100, 100, 2_000, 2_000)};
    Allocator.Target t = Allocator.target(6_000, window / 2, window, views, 0, 0);
    assertThat(t.now()[2]).isGreaterThanOrEqualTo(100);
    assertThat(t.now()[1]).as("nor the floor of 600").isGreaterThanOrEqualTo(600);
    assertThat(t.now()[0] + t.now()[1] + t.now()[2]).isLessThanOrEqualTo(6_000);
  }

  @Test
  void increasesStayWithinTheBudgetLeft() {
    for (int seed = 0; seed < TRIALS; seed++) {
      SplittableRandom rnd = new SplittableRandom(seed);
      int n = 1 + rnd.nextInt(5);
      long[] base = new long[n];
      long[] target = new long[n];
      for (int i = 0; i < n; i++) {
        base[i] = rnd.nextLong(0, 1_000);
        target[i] = rnd.nextLong(0, 2_000);
      }
      long budget = rnd.nextLong(-100, 3_000);
      long[] inc = Allocator.increases(budget, base, target);
      long sum = 0;
      for (int i = 0; i < n; i++) {
        assertThat(inc[i]).isBetween(0L, Math.max(0, target[i] - base[i]));
        sum += inc[i];
      }
      assertThat(sum).as("seed " + seed).isLessThanOrEqualTo(Math.max(0, budget));
    }
  }

  /** An unknown rate (-1) must count as no demand: it once made a share negative and aborted the round. */
  @Test
  void negativeDemandCountsAsNone() {
    long[] x = Allocator.split(1_000, new long[] {0, 0, 0}, new double[] {-1e9, 300, 100});
    assertThat(Arrays.stream(x).min().getAsLong()).isGreaterThanOrEqualTo(0);
    assertThat(Arrays.stream(x).sum()).isEqualTo(1_000);
    assertThat(x[0]).isZero();
  }

  @Test
  void skewedDemandGetsTheWaterFillingSplit() {
    // demands 8,400 / 2,400 / 1,200 per window for G = 6,000: the two small ones in full, the rest to the large
    long[] x = Allocator.split(6_000, new long[3], new double[] {1_200, 2_400, 8_400});
    assertThat(x).containsExactly(1_200, 2_400, 2_400);
    // room for everyone: what is left goes with demand
    x = Allocator.split(6_000, new long[3], new double[] {1_000, 1_000, 2_000});
    assertThat(x).containsExactly(1_500, 1_500, 3_000);
    // floors come first, even for a region without demand
    x = Allocator.split(6_000, new long[] {200, 200, 200}, new double[] {0, 0, 9_000});
    assertThat(x).containsExactly(200, 200, 5_600);
  }

  /**
   * The demand estimate does not swing with where in the window a round falls: a round 10 ms into a
   * window (a handful of attempts) moves the rate by a hundredth of what a whole round does.
   */
  @Test
  void aShortObservationMovesTheRateByItsShareOfARound() {
    long round = 1_000_000_000L;
    double rate = 100e-9; // 100 a second
    double afterShort = ShareArithmetic.smoothed(rate, 0, 10_000_000L, 0.8, round); // 10 ms, nothing seen
    assertThat(afterShort).isCloseTo(rate * (1 - 0.8 * 0.01), org.assertj.core.data.Offset.offset(1e-15));
    double afterRound = ShareArithmetic.smoothed(rate, 300, round, 0.8, round); // 300 in a second
    assertThat(afterRound).isCloseTo(0.8 * 300e-9 + 0.2 * rate, org.assertj.core.data.Offset.offset(1e-15));
    assertThat(ShareArithmetic.smoothed(-1, 50, round / 2, 0.8, round)).as("the first observation").isEqualTo(100e-9);
    assertThat(ShareArithmetic.floor(200, 0, 10_000_000_000L)).as("a quiet region's floor").isEqualTo(20);
    assertThat(ShareArithmetic.floor(5, 0, 10_000_000_000L)).isEqualTo(1);
    assertThat(ShareArithmetic.floor(0, 0, 10_000_000_000L)).isZero();
    assertThat(ShareArithmetic.floor(200, 1e-9, 10_000_000_000L)).as("a region with demand").isEqualTo(200);
  }

  /**
   * Rounds are scheduled on the clock's grid (multiples of the round interval since the epoch, just
   * after each), not a fixed delay after the last one ended: a round that took 20 ms does not push
   * the next one 20 ms later, and one late by more than an interval skips to the next grid point.
   */
  @Test
  void roundsAreScheduledOnTheClocksGridNotAfterTheLastOne() {
    long second = 1_000_000_000L;
    long offset = RegionCoordinator.ROUND_OFFSET_NANOS;
    long window = 1_764_633_600L * second; // a window start, aligned to the epoch
    // a round that ran at the grid point plus its offset and took 20 ms: the next one at the next grid point
    assertThat(RegionCoordinator.nanosToNextRound(window + offset + 20_000_000L, second, offset))
        .isEqualTo(second - 20_000_000L);
    // exactly on a grid point: a whole interval to the next
    assertThat(RegionCoordinator.nanosToNextRound(window + offset, second, offset)).isEqualTo(second);
    // a round woken a moment early by a clock refreshed every millisecond runs at this grid point, not twice
    assertThat(RegionCoordinator.nanosToNextRound(window + offset - 1_000_000L, second, offset)).isEqualTo(1_000_000L);
    // a round 1.5 intervals late skips the grid point it missed
    assertThat(RegionCoordinator.nanosToNextRound(window + offset + 1_500_000_000L, second, offset))
        .isEqualTo(500_000_000L);
    // a round interval that divides the window puts rounds at the window's starts
    long every = 250_000_000L;
    long t = window + offset + 3;
    assertThat(Math.floorMod(t + RegionCoordinator.nanosToNextRound(t, every, offset) - offset, second) % every)
        .isZero();
  }

  /**
   * A round just after a window's start counts what the region asked for since the last round, the end
   * of the previous window included: with rounds on the clock's grid at window starts, only the new
   * window's first milliseconds were seen, and the estimate froze (real time: 72-80% of G used).
   */
  @Test
  void aRoundJustAfterAWindowStartSeesTheEndOfThePreviousWindow() {
    long second = 1_000_000_000L;
    long w = 1_764_633_600L;
    long start = w * second;
    // the last round: 5 ms into window w - 1, 30 attempts there; now 5 ms into w: 6,000 in w - 1, 30 in w
    long[] seen = ShareArithmetic.seenSince(w - 1, 30, 0, start - second + 5_000_000L, w, 30, 6_000, second,
        start + 5_000_000L);
    assertThat(seen).containsExactly(5_970 + 30, second);
    // the same window as the last round: what was added since
    assertThat(ShareArithmetic.seenSince(w, 30, 6_000, start + 5_000_000L, w, 3_000, 6_000, second,
        start + 505_000_000L)).containsExactly(2_970, 500_000_000L);
    // ... and what reached the window before since: its last flush, which came after that round
    assertThat(ShareArithmetic.seenSince(w, 30, 5_940, start + 5_000_000L, w, 3_000, 6_000, second,
        start + 505_000_000L)).containsExactly(2_970 + 60, 500_000_000L);
    // a window skipped (no round in it): from the window's start only
    assertThat(ShareArithmetic.seenSince(w - 3, 30, 0, start - 3 * second, w, 60, 6_000, second, start + 10_000_000L))
        .containsExactly(60, 10_000_000L);
    // nothing to measure at the window's very start
    assertThat(ShareArithmetic.seenSince(w - 3, 30, 0, start - 3 * second, w, 0, 0, second, start)).isNull();
  }

  /**
   * Rounds every 250 ms read the counts of nodes that flush every 100 ms: the last flushes a round
   * sees are 10 ms old at one round and 60 ms at the next, and back. A steady 600 a second then reads
   * 480 and 720 round by round (the real-time rig read 520-730); over two rounds, 600. A shift of
   * demand is followed at once, not averaged with the reading before it.
   */
  @Test
  void aRoundReadsDemandOverItsLastTwoRoundsUnlessItShifted() {
    long window = 10_000_000_000L;
    long round = 250_000_000L;
    long w = 176_463_360L;
    long start = w * window;
    long[] m = ShareArithmetic.fresh(1);
    long[] lags = {10_000_000L, 60_000_000L};
    for (int k = 1; k <= 24; k++) {
      long now = start + 10_000_000L + k * round;
      double demand = k <= 12 ? 600e-9 : 1_800e-9; // a shift to three times the demand at round 13
      long covered = now - lags[k % 2] - start;
      long attempts = Math.round(600e-9 * Math.min(covered, 12 * round) + demand * Math.max(0, covered - 12 * round));
      ShareArithmetic.observeDemand(m, 0, attempts, 0, w, window, now, 0.8, round);
      double rate = Double.longBitsToDouble(m[7]) * 1e9;
      if (k >= 9 && k <= 12) {
        // (read round by round, 480 and 720: the rate would swing between about 530 and 670)
        assertThat(rate).as("round %d", k).isCloseTo(600, org.assertj.core.data.Offset.offset(10.0));
      }
      if (k == 14) {
        assertThat(rate).as("two rounds after the shift").isGreaterThan(1_500);
      }
    }
    assertThat(Double.longBitsToDouble(m[7]) * 1e9).isCloseTo(1_800, org.assertj.core.data.Offset.offset(30.0));
    assertThat(Double.longBitsToDouble(m[9])).as("the spread: neither the flushes' phase nor the shift").isLessThan(0.03);
  }

  /**
   * A reading that spans a gap (rounds that did not reach the region, or a take-over) is not paired with
   * the round after it: that round's reading would be mostly the gap's. Steady 600 a second, then 10 s
   * unread at 450, then 600 again: the round after the gap moves the rate toward 600 (paired, it went
   * to 459, away from it), and the gap's reading does not count as a round's noise (the round after it,
   * 25% off the rate the gap left, does: a margin of about an eighth for the few rounds that follow).
   */
  @Test
  void aReadingAcrossAGapIsNotPairedWithTheRoundAfterIt() {
    long window = 60_000_000_000L;
    long round = 250_000_000L;
    long w = 29_410_560L;
    long start = w * window;
    long[] m = ShareArithmetic.fresh(1);
    long at = start;
    double attempts = 0;
    for (int k = 1; k <= 8; k++) {
      at += round;
      attempts += 600e-9 * round;
      ShareArithmetic.observeDemand(m, 0, Math.round(attempts), 0, w, window, at, 0.8, round);
    }
    at += 10_000_000_000L;
    attempts += 450e-9 * 10_000_000_000L;
    ShareArithmetic.observeDemand(m, 0, Math.round(attempts), 0, w, window, at, 0.8, round);
    double afterGap = Double.longBitsToDouble(m[7]) * 1e9;
    assertThat(Double.longBitsToDouble(m[9])).as("the spread after the gap's reading").isLessThan(0.01);
    at += round;
    attempts += 600e-9 * round;
    ShareArithmetic.observeDemand(m, 0, Math.round(attempts), 0, w, window, at, 0.8, round);
    assertThat(Double.longBitsToDouble(m[7]) * 1e9).as("after the gap (%.0f)", afterGap).isGreaterThan(560);
  }



}
