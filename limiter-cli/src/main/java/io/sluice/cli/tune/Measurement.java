package io.sluice.cli.tune;

import org.HdrHistogram.Histogram;

/**
 * What one replay of the trace with one setting measured, before it is compared with the exact run.
 * Counts per (key, window) are kept as flat arrays indexed {@code key * windows + window}; the
 * decision on each request of the trace is kept too, indexed as the trace's requests, so that a
 * replay and the exact run can be compared request by request.
 */
final class Measurement {
  /** {@link #outcome}: the request was not decided (the replay was stopped before it). */
  static final byte NOT_DECIDED = 0;
  static final byte ADMITTED = 1;
  static final byte DENIED = 2;

  final Setting setting;
  /** How the decisions were made: "exact (batch 1)", "batched", "reservation", or the in-process reference. */
  final String mode;
  final int keys;
  final int windows;
  final long[] attempts;
  final long[] admitted;
  /** Decisions made after the last window ended (the replay fell behind): counted in no window. */
  final long late;
  /** Store calls during the replay (flushes, exact calls, heartbeats), or -1 when there is no store. */
  final long storeCalls;
  final long storeFailures;
  /** Latency of each decision, nanoseconds. */
  final Histogram latency;
  /** How late decisions started against the trace's schedule, nanoseconds. */
  final Histogram lag;
  /** Flat-out decisions per second after the replay, or NaN when not measured. */
  final double decisionsPerSecond;
  /**
   * For a replay: the exact algorithm deciding the same requests at the moments the nodes decided
   * them (what this replay is compared with); null for a model.
   */
  final Measurement exactAtSameMoments;
  /** Per request of the trace: {@link #ADMITTED}, {@link #DENIED} or {@link #NOT_DECIDED}. */
  final byte[] outcome;
  /**
   * Per request of the trace: the (key, window) cell it was counted in, or, when it was decided
   * outside the run's windows (late, or not decided), {@link #late(int) late(key)}, a negative number.
   * A replay and its exact run share one array: both count a request in the window of the moment the
   * node decided it.
   */
  final int[] cell;
  /**
   * How far this run's own admissions passed the limit, worst key-window, in % of the limit (see
   * {@link OwnCount}); NaN where not measured.
   */
  final double overLimitWorstPct;

  /** The {@link #cell} of a request of {@code key} decided outside the run's windows. */
  static int late(int key) {
    return -1 - key;
  }

  /** The key of a {@link #late(int)} cell. */
  static int lateKey(int cell) {
    return -1 - cell;
  }

  Measurement(Setting setting, String mode, int keys, int windows, long[] attempts, long[] admitted, long late,
      long storeCalls, long storeFailures, Histogram latency, Histogram lag, double decisionsPerSecond,
      Measurement exactAtSameMoments, byte[] outcome, int[] cell, double overLimitWorstPct) {
    if (outcome.length != cell.length) {
      throw new IllegalArgumentException("one outcome and one cell per request");
    }
    this.setting = setting;
    this.mode = mode;
    this.keys = keys;
    this.windows = windows;
    this.attempts = attempts;
    this.admitted = admitted;
    this.late = late;
    this.storeCalls = storeCalls;
    this.storeFailures = storeFailures;
    this.latency = latency;
    this.lag = lag;
    this.decisionsPerSecond = decisionsPerSecond;
    this.exactAtSameMoments = exactAtSameMoments;
    this.outcome = outcome;
    this.cell = cell;
    this.overLimitWorstPct = overLimitWorstPct;
  }

  long decisions() {
    long sum = late;
    for (long a : attempts) {
      sum += a;
    }
    return sum;
  }

  long admittedTotal() {
    long sum = 0;
    for (long a : admitted) {
      sum += a;
    }
    return sum;
  }
}
