package io.sluice.cli.tune;

/**
 * One line of the report: a setting's measurement compared with the exact run.
 *
 * <p>Over- and under-admission are in % of the limit, per (key, window), over the windows where the
 * limit was reached (either run denied). False denials, swaps and admitted vs exact are over every key
 * and window of the trace, request by request (see {@link Comparison}): a false denial is a request
 * the exact algorithm admitted and the setting denied, less those the setting made up for in the same
 * key-window by admitting a request the exact algorithm denied (those pairs are swaps); both in % of
 * all requests of the trace. Admitted vs exact is what the setting admitted in % of what the exact
 * algorithm admitted. NaN where a figure does not apply (no store: no store calls; flat-out phase
 * skipped: no rate).
 */
record Row(
    Setting setting,
    String mode,
    boolean reference,
    long decisions,
    /** Requests the setting admitted, over the whole trace. */
    long admitted,
    /** Requests the exact algorithm admitted, deciding the same requests at the same moments. */
    long exactAdmitted,
    double admittedPctOfExact,
    /**
     * How far the setting's own admissions passed the limit, worst key-window, in % of the limit
     * ({@link OwnCount}): over-admission that does not hang on what the exact run admitted before
     * (0 for the exact model, NaN where not measured).
     */
    double overLimitWorstPct,
    double overWorstPct,
    double overMeanPct,
    double underWorstPct,
    double underMeanPct,
    int contestedWindows,
    /**
     * Requests the exact algorithm admitted and the setting denied, less the swaps: in each key-window
     * {@code max(0, d - a)} with d such requests and a those the setting admitted and the exact
     * algorithm denied.
     */
    long falseDenials,
    /** {@link #falseDenials} in % of all requests of the trace. */
    double falseDenialsPct,
    /**
     * Requests the exact algorithm admitted and the setting denied that the setting made up for in the
     * same key-window by admitting one the exact algorithm denied ({@code min(d, a)} per key-window):
     * which requests got through differs, how many does not. With {@link #falseDenials}, the literal
     * per-request count.
     */
    long swapped,
    /** {@link #swapped} in % of all requests of the trace. */
    double swappedPct,
    /**
     * False denials in key-windows whose demand stayed below half the limit (for a sliding window, in
     * that window and the one before, which the sliding counter weighs in): there the exact algorithm
     * never comes near the limit, and no setting may deny.
     */
    long falseDenialsBelowHalf,
    /** Key-windows with requests whose demand stayed below half the limit, as above. */
    long keyWindowsBelowHalf,
    double storeCallsPer1000,
    double p50Micros,
    double p99Micros,
    double decisionsPerSecond,
    double lagP99Millis,
    long storeFailures,
    double[] overByWindowPct,
    double[] underByWindowPct) {

  /** The worse of worst over- and worst under-admission (what the chart draws highest). */
  double worstErrorPct() {
    return Math.max(overWorstPct, underWorstPct);
  }

  /** Whether this row is a setting a user can pick (the exact model, the reference, is not one). */
  boolean selectable() {
    return !reference;
  }
}
