package io.sluice.region;

import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.IntStream;

/**
 * The arithmetic of one key's split, free of I/O so that it can be checked on its own: shares sum to
 * at most the budget, floors come first, then max-min fair water-filling of demand (each region gets
 * what it is expected to ask for, or an equal level when the budget is short), then what is left in
 * proportion to demand.
 */
final class Allocator {
  private Allocator() {
  }

  /** What the coordinator knows of one region for one key in the current window. */
  record RegionView(boolean reachable, long admitted, double demandPerNano, long floor, long heldNow,
      long heldLaterMin, long heldLaterMax) {
  }

  /** Target shares per region for the current window and for the lease windows after it (-1: unreachable). */
  record Target(long[] now, long[] later) {
  }

  /**
   * Targets for one key. The current window splits what is left of it: the quota less what reachable
   * regions already counted and less all an unreachable region may still use (its share as things
   * stand), by demand over the rest of the window. Later windows split the quota less the most an
   * unreachable region may use in any of them, by demand over a whole window. A region's nodes may
   * take up to {@code readLagNanos} to read a share written now (their syncs): in the current window
   * a region keeps at least what it is expected to ask for over that time, up to what it holds. A
   * share cut below that is passed by what its nodes admit before they read it, while the other
   * regions are given the difference at once (rounds within a window, on a region whose demand just
   * fell; tests pass 0 for none). The counts reach the regions' Redis up to a sync late: what a
   * region admitted over {@code countLagNanos} before the round is not in {@code admitted} yet, and is
   * split for as demand still to come (split by the rest of the window alone, a region was short of
   * that much at every round, and the busy regions spent it).
   */
  static Target target(long quota, long remainingNanos, long windowNanos, RegionView[] regions, long readLagNanos,
      long countLagNanos) {
    int n = regions.length;
    long budgetNow = quota;
    long budgetLater = quota;
    int reachable = 0;
    for (RegionView r : regions) {
      if (r.reachable()) {
        budgetNow -= r.admitted();
        reachable++;
      } else {
        budgetNow -= r.heldNow();
        budgetLater -= r.heldLaterMax();
      }
    }
    long[] floorsNow = new long[reachable];
    long[] floorsLater = new long[reachable];
    double[] demandNow = new double[reachable];
    double[] demandLater = new double[reachable];
    for (int i = 0, j = 0; i < n; i++) {
      RegionView r = regions[i];
      if (r.reachable()) {
        floorsNow[j] = Math.max(Math.max(0, r.floor() - r.admitted()),
            committed(r, Math.min(readLagNanos, remainingNanos)) - r.admitted());
        floorsLater[j] = r.floor();
        demandNow[j] = r.demandPerNano() * (remainingNanos + countLagNanos);
        demandLater[j] = r.demandPerNano() * windowNanos;
        j++;
      }
    }
    long[] xLater = split(Math.max(0, budgetLater), floorsLater, demandLater);
    long[] xNow = split(Math.max(0, budgetNow), withOwed(Math.max(0, budgetNow), floorsNow, owed(regions, xLater,
        demandNow)), demandNow);
    long[] now = new long[n];
    long[] later = new long[n];
    for (int i = 0, j = 0; i < n; i++) {
      if (regions[i].reachable()) {
        now[i] = regions[i].admitted() + xNow[j];
        later[i] = xLater[j];
        j++;
      } else {
        now[i] = -1;
        later[i] = -1;
      }
    }
    return new Target(now, later);
  }

  /**
   * Targets for one key of a sliding window quota. A region's {@code admitted} is what its counter
   * weighs now (its count of the window and the previous window's at its weight); a region that admits
   * its fair share f of a window evenly weighs f at every moment, so a region's target is its max-min
   * fair split of a whole window's demand. A region that weighs more than that (after a shift of
   * demand) gets that split as its share all the same, below what it weighs: it admits nothing until
   * its count has faded under it (with a share it already weighs, a busy region would re-admit what
   * fades of its own count round after round, and shares would never move). It still counts against
   * the budget at what it may weigh before its nodes read the share ({@link #committed}). The others
   * share what is left up to their fair splits. The same split for every later window: a sliding count
   * weighs across the window's edge, so a region's share there may be no smaller than its share now.
   * An unreachable region counts at the most it holds now or in any later window.
   */
  static Target slidingTarget(long quota, long windowNanos, RegionView[] regions, long readLagNanos) {
    int n = regions.length;
    long budgetFair = quota;
    int reachable = 0;
    for (RegionView r : regions) {
      if (r.reachable()) {
        reachable++;
      } else {
        budgetFair -= Math.max(r.heldNow(), r.heldLaterMax());
      }
    }
    long budget = budgetFair;
    long[] floors = new long[reachable];
    long[] weighs = new long[reachable];
    double[] demand = new double[reachable];
    for (int i = 0, j = 0; i < n; i++) {
      RegionView r = regions[i];
      if (r.reachable()) {
        floors[j] = r.floor();
        weighs[j] = Math.max(committed(r, readLagNanos), r.floor());
        budget -= weighs[j];
        demand[j] = r.demandPerNano() * windowNanos;
        j++;
      }
    }
    long[] fair = split(Math.max(0, budgetFair), floors, demand);
    double[] toFair = new double[reachable];
    for (int j = 0; j < reachable; j++) {
      toFair[j] = Math.max(0, fair[j] - weighs[j]);
    }
    // (what is left never passes what the regions below their fair splits want: those above weigh
    // more than their splits, and the splits add up to the budget)
    long[] x = split(Math.max(0, budget), new long[reachable], toFair);
    long[] now = new long[n];
    for (int i = 0, j = 0; i < n; i++) {
      if (regions[i].reachable()) {
        now[i] = weighs[j] >= fair[j] ? fair[j] : weighs[j] + x[j];
        j++;
      } else {
        now[i] = -1;
      }
    }
    return new Target(now, now.clone());
  }

  /**
   * Targets for one key of a token-bucket quota. A share is a rate (permits per window of refill), in
   * force from the moment the region's Redis holds it: its nodes read the record at every decision,
   * and a change rebases the region's bucket to the time of the write (region_share.lua), so nothing
   * of the past weighs on it and no read lag needs covering. Each round splits the whole rate anew:
   * floors, then max-min fair water-filling of a window's demand, then the rest by demand; the same
   * for the lease windows. An unreachable region counts at the most it holds now or in any later window.
   */
  static Target bucketTarget(long quota, long windowNanos, RegionView[] regions) {
    int n = regions.length;
    long budget = quota;
    int reachable = 0;
    for (RegionView r : regions) {
      if (r.reachable()) {
        reachable++;
      } else {
        budget -= Math.max(r.heldNow(), r.heldLaterMax());
      }
    }
    long[] floors = new long[reachable];
    double[] demand = new double[reachable];
    for (int i = 0, j = 0; i < n; i++) {
      if (regions[i].reachable()) {
        floors[j] = regions[i].floor();
        demand[j] = regions[i].demandPerNano() * windowNanos;
        j++;
      }
    }
    long[] x = split(Math.max(0, budget), floors, demand);
    long[] now = new long[n];
    for (int i = 0, j = 0; i < n; i++) {
      now[i] = regions[i].reachable() ? x[j++] : -1;
    }
    return new Target(now, now.clone());
  }

  /**
   * What a reachable region may count before its nodes read a share written now: what it counts, and
   * up to {@code readLagNanos} of its demand within what it holds.
   */
  static long committed(RegionView r, long readLagNanos) {
    long unread = (long) Math.ceil(Math.max(0, r.demandPerNano()) * readLagNanos);
    return r.admitted() + Math.min(Math.max(0, r.heldNow() - r.admitted()), unread);
  }

  /**
   * What each reachable region is still owed of its fair split of a whole window ({@code fair}, the
   * later windows' targets) and will ask for before the current window ends ({@code demandNow}).
   * The rest of the current window goes to that first: split by the demand of the rest of the window
   * alone, a region that spends its share early takes the share a slower region has not spent yet,
   * round after round (a region asking for a tenth of G got 61% of it, its max-min share being all).
   */
  private static long[] owed(RegionView[] regions, long[] fair, double[] demandNow) {
    long[] owed = new long[fair.length];
    for (int i = 0, j = 0; i < regions.length; i++) {
      if (regions[i].reachable()) {
        owed[j] = Math.min(Math.max(0, fair[j] - regions[i].admitted()), (long) Math.ceil(Math.max(0, demandNow[j])));
        j++;
      }
    }
    return owed;
  }

  /**
   * The floors of the current window's split: the configured floors first (scaled down together by
   * {@link #split} when they alone pass the budget), then what is owed above them, scaled down
   * together to what the floors leave.
   */
  private static long[] withOwed(long budget, long[] floors, long[] owed) {
    long floorSum = 0;
    long above = 0;
    long[] extra = new long[floors.length];
    for (int i = 0; i < floors.length; i++) {
      floorSum += floors[i];
      extra[i] = Math.max(0, owed[i] - floors[i]);
      above += extra[i];
    }
    long left = budget - floorSum;
    if (left <= 0 || above == 0) {
      return floors;
    }
    long[] firm = new long[floors.length];
    for (int i = 0; i < floors.length; i++) {
      firm[i] = floors[i] + (above <= left ? extra[i] : (long) Math.floor((double) left * extra[i] / above));
    }
    return firm;
  }

  /**
   * Splits {@code budget} permits: floors first (scaled down together if they alone exceed it), then
   * max-min fair water-filling of the demand above the floors, then the rest in proportion to demand
   * (evenly when there is none), so that the whole budget is handed out and the sum never exceeds it.
   */
  static long[] split(long budget, long[] floors, double[] demandIn) {
    // no negative demand (an unknown rate): it would take from the others' share of the remainder
    double[] demand = new double[demandIn.length];
    for (int i = 0; i < demand.length; i++) {
      demand[i] = Math.max(0, demandIn[i]);
    }
    int n = floors.length;
    long[] x = new long[n];
    if (n == 0 || budget <= 0) {
      return x;
    }
    long floorSum = 0;
    for (long f : floors) {
      floorSum += f;
    }
    if (floorSum >= budget) {
      for (int i = 0; i < n; i++) {
        x[i] = (long) Math.floor((double) budget * floors[i] / floorSum);
      }
      return x;
    }
    System.arraycopy(floors, 0, x, 0, n);
    long rest = budget - floorSum;
    double[] want = new double[n];
    for (int i = 0; i < n; i++) {
      want[i] = Math.max(0, demand[i] - x[i]);
    }
    // water-filling: the smallest wants are met in full, the others share the level equally
    Integer[] byWant = IntStream.range(0, n).boxed().sorted(Comparator.comparingDouble(i -> want[i])).toArray(Integer[]::new);
    int left = n;
    for (int i : byWant) {
      long give = (long) Math.min(Math.floor(want[i]), rest / left);
      x[i] += give;
      rest -= give;
      left--;
    }
    if (rest > 0) {
      double total = Arrays.stream(demand).sum();
      long given = 0;
      long[] extra = new long[n];
      for (int i = 0; i < n; i++) {
        extra[i] = total > 0 ? (long) Math.floor(rest * (demand[i] / total)) : rest / n;
        given += extra[i];
      }
      rest -= given;
      Integer[] byDemand = IntStream.range(0, n).boxed()
          .sorted(Comparator.comparingDouble((Integer i) -> demand[i]).reversed()).toArray(Integer[]::new);
      for (int k = 0; rest > 0; k = (k + 1) % n) { // the few permits rounding left over
        extra[byDemand[k]]++;
        rest--;
      }
      for (int i = 0; i < n; i++) {
        x[i] += extra[i];
      }
    }
    return x;
  }

  /**
   * The second phase of a round: how much each region may grow from what the first phase wrote
   * ({@code base}) toward its target, within {@code budget}; scaled down together when short.
   */
  static long[] increases(long budget, long[] base, long[] target) {
    long[] inc = new long[base.length];
    long sum = 0;
    for (int i = 0; i < base.length; i++) {
      inc[i] = Math.max(0, target[i] - base[i]);
      sum += inc[i];
    }
    if (sum > Math.max(0, budget)) {
      for (int i = 0; i < inc.length; i++) {
        inc[i] = budget <= 0 ? 0 : (long) Math.floor((double) budget * inc[i] / sum);
      }
    }
    return inc;
  }
}
