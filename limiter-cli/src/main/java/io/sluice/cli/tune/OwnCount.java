package io.sluice.cli.tune;

import io.sluice.node.Algorithm;
import io.sluice.node.Limit;

/**
 * How far a replay's own admissions passed the limit: per key and window, the most the key's count
 * stood above the limit as each admission was made, with the requests taken in the order the nodes
 * decided them. A fixed window's count is the permits admitted in it so far; a sliding window's is the
 * count the limiter itself weighs (the previous window's admissions, weighted by the part of it still
 * in the sliding window at the admission's moment, plus the current window's so far).
 *
 * <p>Unlike over-admission against the exact algorithm ({@link Comparison}), this does not depend on
 * what the exact run admitted before: on a sliding window a setting that admitted less than the exact
 * algorithm in one window has a lighter previous window to weigh in the next, and may rightly admit
 * more there than the exact run does (measured: 1–3% of the limit "over" against the exact run in a
 * key-window, on nodes whose own sliding count never passed the limit by half a permit). On a fixed
 * window the two agree.
 */
final class OwnCount {
  private OwnCount() {
  }

  /**
   * The worst excess over the limit, in % of it, over every key and window: 0 when no admission took
   * a count past the limit. {@code when}: each request's moment after the start ({@link
   * Simulation#NOT_DECIDED} if none); {@code done}: the order decisions finished in; {@code cell}: the
   * (key, window) cell each was counted in (negative: outside the run's windows, left out).
   */
  static double overLimitWorstPct(Limit limit, int windows, long windowNanos, long[] when, int[] done, byte[] outcome,
      int[] cell) {
    boolean sliding = limit.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER;
    if (!sliding && limit.algorithm() != Algorithm.FIXED_WINDOW) {
      throw new IllegalArgumentException("a window limit, fixed or sliding counter: " + limit.algorithm());
    }
    int n = 0;
    int cells = 0;
    long[] order = new long[when.length];
    for (int i = 0; i < when.length; i++) {
      if (outcome[i] == Measurement.ADMITTED && cell[i] >= 0) {
        order[n++] = ((long) done[i] << 32) | i; // (done fits in 31 bits: a trace holds at most 20 million)
        cells = Math.max(cells, cell[i] + 1);
      }
    }
    java.util.Arrays.sort(order, 0, n);
    long[] total = new long[cells];
    for (int o = 0; o < n; o++) {
      total[cell[(int) order[o]]]++;
    }
    long capacity = limit.capacity();
    long[] soFar = new long[cells];
    double worst = 0;
    for (int o = 0; o < n; o++) {
      int i = (int) order[o];
      int c = cell[i];
      int w = c % windows;
      double count = ++soFar[c];
      if (sliding && w > 0) {
        double into = Math.max(0, Math.min(1, (double) (when[i] - (long) w * windowNanos) / windowNanos));
        count += total[c - 1] * (1 - into);
      }
      worst = Math.max(worst, count - capacity);
    }
    return worst * 100.0 / capacity;
  }
}
