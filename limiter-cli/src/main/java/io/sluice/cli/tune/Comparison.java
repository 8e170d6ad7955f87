package io.sluice.cli.tune;

/**
 * Compares a setting's replay with the exact algorithm deciding the same requests at the same
 * moments, per key and window.
 *
 * <p>For key k and window w, with A the permits the setting admitted and X those the exact algorithm
 * admitted: over-admission is {@code max(0, A - X) / limit}, under-admission {@code max(0, X - A) / limit}.
 * Only windows where the limit was reached count (the exact run or the setting denied at least one
 * request of that key in that window): elsewhere both admit everything and a difference is only a
 * request decided on the other side of a window edge in one of the runs. "Worst" is the largest value
 * over those windows and keys, "mean" their mean.
 */
final class Comparison {
  private Comparison() {
  }

  static Row compare(Measurement m, Measurement exact, long limit) {
    if (m.keys != exact.keys || m.windows != exact.windows) {
      throw new IllegalArgumentException("measurements of different traces");
    }
    int windows = m.windows;
    double[] overByWindow = new double[windows];
    double[] underByWindow = new double[windows];
    double overWorst = 0;
    double underWorst = 0;
    double overSum = 0;
    double underSum = 0;
    int contested = 0;
    for (int c = 0; c < m.attempts.length; c++) {
      boolean exactDenied = exact.attempts[c] > exact.admitted[c];
      boolean denied = m.attempts[c] > m.admitted[c];
      if (!exactDenied && !denied) {
        continue;
      }
      contested++;
      long d = m.admitted[c] - exact.admitted[c];
      double over = Math.max(0, d) * 100.0 / limit;
      double under = Math.max(0, -d) * 100.0 / limit;
      int w = c % windows;
      overByWindow[w] = Math.max(overByWindow[w], over);
      underByWindow[w] = Math.max(underByWindow[w], under);
      overWorst = Math.max(overWorst, over);
      underWorst = Math.max(underWorst, under);
      overSum += over;
      underSum += under;
    }
    long decisions = m.decisions();
    boolean noStore = m.storeCalls < 0;
    // the replay's own count of what it decided, against the exact run's, as a check of the harness
    if (m.admittedTotal() > m.decisions() || exact.decisions() != m.decisions()) {
      throw new IllegalStateException("the exact run did not decide the same requests: " + exact.decisions()
          + " decisions against " + m.decisions());
    }
    double exactAdmitted = exact.admittedTotal();
    return new Row(
        m.setting,
        m.mode,
        m.exactAtSameMoments == null,
        decisions,
        m.admittedTotal(),
        exactAdmitted == 0 ? Double.NaN : 100.0 * m.admittedTotal() / exactAdmitted,
        overWorst,
        contested == 0 ? 0 : overSum / contested,
        underWorst,
        contested == 0 ? 0 : underSum / contested,
        contested,
        noStore || decisions == 0 ? Double.NaN : m.storeCalls * 1000.0 / decisions,
        m.latency.getTotalCount() == 0 ? Double.NaN : m.latency.getValueAtPercentile(50) / 1e3,
        m.latency.getTotalCount() == 0 ? Double.NaN : m.latency.getValueAtPercentile(99) / 1e3,
        m.decisionsPerSecond,
        m.lag.getTotalCount() == 0 ? Double.NaN : m.lag.getValueAtPercentile(99) / 1e6,
        m.storeFailures,
        overByWindow,
        underByWindow);
  }
}
