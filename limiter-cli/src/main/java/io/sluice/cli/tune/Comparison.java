package io.sluice.cli.tune;

import java.util.Arrays;

/**
 * Compares a setting's replay with the exact algorithm deciding the same requests at the same
 * moments, per key and window and request by request.
 *
 * <p><b>Per key and window</b> (k, w), with A the permits the setting admitted and X those the exact
 * algorithm admitted: over-admission is {@code max(0, A - X) / limit}, under-admission
 * {@code max(0, X - A) / limit}. Only windows where the limit was reached count (the exact run or the
 * setting denied at least one request of that key in that window): elsewhere both admit everything
 * and a difference is only a request decided on the other side of a window edge in one of the runs.
 * "Worst" is the largest value over those windows and keys, "mean" their mean.
 *
 * <p><b>Request by request</b>, over every key and window (the exact algorithm decides the very
 * request at the moment the node decided it): in each key-window, d requests the exact algorithm
 * admitted and the setting denied, and a requests the setting admitted and the exact algorithm denied.
 * When a key is at its limit, which of its requests get through depends on timing to the millisecond:
 * a setting that denies one request and admits a later one in its place has swapped them, the count
 * is the same. So {@code min(d, a)} are counted as swaps, and {@code max(0, d - a)} as false denials:
 * requests denied that the exact algorithm admitted and that the setting did not make up for in that
 * key-window. (Their sum is the literal per-request count; even exact mode shows swaps, of requests
 * decided by two nodes in the same instant.) False denials are counted in % of all requests of the
 * trace, and separately in the key-windows whose demand stayed below half the limit (for a sliding
 * window also in the window before, which the sliding counter weighs in), where the exact algorithm is
 * never near the limit, admits everything (so nothing can be swapped) and no setting should deny at
 * all. Admitted vs exact is the permits the setting admitted in % of those the exact algorithm
 * admitted, over the whole trace. Unlike under-admission, these also see a key denied below its limit
 * in a window where the limit was never reached. Requests decided after the last window (a replay
 * that fell behind) are netted per key.
 */
final class Comparison {
  private Comparison() {
  }

  static Row compare(Measurement m, Measurement exact, long limit, boolean sliding) {
    checkSameRequests(m, exact);
    WindowErrors windows = WindowErrors.of(m, exact, limit, sliding);
    RequestErrors requests = RequestErrors.of(m, exact, limit, sliding);
    long decisions = m.decisions();
    if (requests.decided != decisions) {
      throw new IllegalStateException("the replay decided " + requests.decided + " requests one by one and counted "
          + decisions);
    }
    return row(m, windows, requests);
  }

  private static void checkSameRequests(Measurement m, Measurement exact) {
    if (m.keys != exact.keys || m.windows != exact.windows) {
      throw new IllegalArgumentException("measurements of different traces");
    }
    // the replay's own count of what it decided, against the exact run's, as a check of the harness
    if (m.admittedTotal() > m.decisions() || exact.decisions() != m.decisions()) {
      throw new IllegalStateException("the exact run did not decide the same requests: " + exact.decisions()
          + " decisions against " + m.decisions());
    }
    if (m.outcome.length != exact.outcome.length || (m.cell != exact.cell && !Arrays.equals(m.cell, exact.cell))) {
      throw new IllegalStateException("the exact run did not count the same requests in the same windows");
    }
  }

  private static Row row(Measurement m, WindowErrors w, RequestErrors r) {
    long decisions = m.decisions();
    boolean noStore = m.storeCalls < 0;
    return new Row(
        m.setting,
        m.mode,
        m.exactAtSameMoments == null,
        decisions,
        r.admitted,
        r.exactAdmitted,
        r.exactAdmitted == 0 ? Double.NaN : 100.0 * r.admitted / r.exactAdmitted,
        m.exactAtSameMoments == null ? 0 : m.overLimitWorstPct,
        w.overWorst,
        w.contested == 0 ? 0 : w.overSum / w.contested,
        w.underWorst,
        w.contested == 0 ? 0 : w.underSum / w.contested,
        w.contested,
        r.falseDenials,
        decisions == 0 ? 0 : 100.0 * r.falseDenials / decisions,
        r.swapped,
        decisions == 0 ? 0 : 100.0 * r.swapped / decisions,
        r.falseDenialsBelowHalf,
        w.keyWindowsBelowHalf,
        noStore || decisions == 0 ? Double.NaN : m.storeCalls * 1000.0 / decisions,
        m.latency.getTotalCount() == 0 ? Double.NaN : m.latency.getValueAtPercentile(50) / 1e3,
        m.latency.getTotalCount() == 0 ? Double.NaN : m.latency.getValueAtPercentile(99) / 1e3,
        m.decisionsPerSecond,
        m.lag.getTotalCount() == 0 ? Double.NaN : m.lag.getValueAtPercentile(99) / 1e6,
        m.storeFailures,
        w.overByWindow,
        w.underByWindow);
  }

  /**
   * Per key and window, over the windows where the limit was reached: over- and under-admission, worst
   * per window and overall, and their sums for the means; and how many key-windows stayed below half
   * the limit.
   */
  private static final class WindowErrors {
    final double[] overByWindow;
    final double[] underByWindow;
    double overWorst;
    double underWorst;
    double overSum;
    double underSum;
    int contested;
    long keyWindowsBelowHalf;

    private WindowErrors(int windows) {
      overByWindow = new double[windows];
      underByWindow = new double[windows];
    }

    static WindowErrors of(Measurement m, Measurement exact, long limit, boolean sliding) {
      int windows = m.windows;
      WindowErrors e = new WindowErrors(windows);
      for (int c = 0; c < m.attempts.length; c++) {
        if (m.attempts[c] > 0 && belowHalf(m.attempts, c, windows, limit, sliding)) {
          e.keyWindowsBelowHalf++;
        }
        boolean exactDenied = exact.attempts[c] > exact.admitted[c];
        boolean denied = m.attempts[c] > m.admitted[c];
        if (!exactDenied && !denied) {
          continue;
        }
        e.contested++;
        long d = m.admitted[c] - exact.admitted[c];
        double over = Math.max(0, d) * 100.0 / limit;
        double under = Math.max(0, -d) * 100.0 / limit;
        int w = c % windows;
        e.overByWindow[w] = Math.max(e.overByWindow[w], over);
        e.underByWindow[w] = Math.max(e.underByWindow[w], under);
        e.overWorst = Math.max(e.overWorst, over);
        e.underWorst = Math.max(e.underWorst, under);
        e.overSum += over;
        e.underSum += under;
      }
      return e;
    }
  }

  /**
   * Request by request, every key and window (late requests included: both runs decided them): what
   * each run admitted, and of the requests only one of them admitted, the false denials and the swaps.
   */
  private static final class RequestErrors {
    long decided;
    long admitted;
    long exactAdmitted;
    long falseDenials;
    long swapped;
    long falseDenialsBelowHalf;

    static RequestErrors of(Measurement m, Measurement exact, long limit, boolean sliding) {
      // the requests that only one of the runs admitted, per key-window (late ones per key, after the cells)
      int cells = m.attempts.length;
      long[] onlyExact = new long[cells + m.keys];
      long[] onlyMine = new long[cells + m.keys];
      RequestErrors r = new RequestErrors();
      r.tally(m, exact, onlyExact, onlyMine);
      r.net(m, onlyExact, onlyMine, limit, sliding);
      return r;
    }

    private void tally(Measurement m, Measurement exact, long[] onlyExact, long[] onlyMine) {
      int cells = m.attempts.length;
      for (int i = 0; i < m.outcome.length; i++) {
        byte mine = m.outcome[i];
        if (mine == Measurement.NOT_DECIDED) {
          continue;
        }
        byte theirs = exact.outcome[i];
        if (theirs == Measurement.NOT_DECIDED) {
          throw new IllegalStateException("the exact run did not decide request " + i + " of the trace");
        }
        decided++;
        if (mine == Measurement.ADMITTED) {
          admitted++;
        }
        if (theirs == Measurement.ADMITTED) {
          exactAdmitted++;
        }
        if (mine != theirs) {
          int c = m.cell[i] >= 0 ? m.cell[i] : cells + Measurement.lateKey(m.cell[i]);
          if (theirs == Measurement.ADMITTED) {
            onlyExact[c]++;
          } else {
            onlyMine[c]++;
          }
        }
      }
    }

    private void net(Measurement m, long[] onlyExact, long[] onlyMine, long limit, boolean sliding) {
      int cells = m.attempts.length;
      for (int c = 0; c < onlyExact.length; c++) {
        long net = Math.max(0, onlyExact[c] - onlyMine[c]);
        falseDenials += net;
        swapped += Math.min(onlyExact[c], onlyMine[c]);
        if (c < cells && net > 0 && belowHalf(m.attempts, c, m.windows, limit, sliding)) {
          falseDenialsBelowHalf += net;
        }
      }
    }
  }

  /**
   * Whether the demand of cell c (requests of one key in one window) stayed below half the limit; for
   * a sliding window the window before too (the sliding counter weighs it in; before the run there
   * were no requests). Then the exact algorithm's count never reaches the limit: it admits them all.
   */
  static boolean belowHalf(long[] attempts, int c, int windows, long limit, boolean sliding) {
    if (2 * attempts[c] >= limit) {
      return false;
    }
    return !sliding || c % windows == 0 || 2 * attempts[c - 1] < limit;
  }
}
