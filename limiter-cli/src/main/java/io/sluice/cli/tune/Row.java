package io.sluice.cli.tune;

/**
 * One line of the report: a setting's measurement compared with the exact run. Errors are in % of
 * the limit, per (key, window), over the windows where the limit was reached (either run denied).
 * NaN where a figure does not apply (no store: no store calls; flat-out phase skipped: no rate).
 */
record Row(
    Setting setting,
    String mode,
    boolean reference,
    long decisions,
    long admitted,
    double admittedPctOfExact,
    double overWorstPct,
    double overMeanPct,
    double underWorstPct,
    double underMeanPct,
    int contestedWindows,
    double storeCallsPer1000,
    double p50Micros,
    double p99Micros,
    double decisionsPerSecond,
    double lagP99Millis,
    long storeFailures,
    double[] overByWindowPct,
    double[] underByWindowPct) {

  /** The error the recommendation looks at: the worse of worst over- and worst under-admission. */
  double worstErrorPct() {
    return Math.max(overWorstPct, underWorstPct);
  }

  /** Whether this row is a setting a user can pick (the exact model, the reference, is not one). */
  boolean selectable() {
    return !reference;
  }
}
