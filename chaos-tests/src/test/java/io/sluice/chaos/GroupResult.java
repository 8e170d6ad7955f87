package io.sluice.chaos;

import io.sluice.sync.StoreFailurePolicy;
import java.util.ArrayList;
import java.util.List;

/** What one scenario measured for the nodes of one fallback policy. */
final class GroupResult {
  final String scenario;
  final StoreFailurePolicy policy;
  final int nodes;
  final long rateLimit;
  /**
   * Windows longer than a second: per node, the first rate key's admissions in each second of the window
   * the fault began in ({@code 400} by the store's budget, {@code 100+300f} with 300 by the failure
   * policy), one line per node; empty otherwise.
   */
  final List<String> faultWindowByNode = new ArrayList<>();

  long ledgerAdmitted;
  long ledgerStored;
  long lost;
  long doubled;
  /** Scenarios 7 and 10: ledger hits the store had acknowledged when it lost its data. */
  long ackedBeforeLoss;
  boolean dataLost;
  /** Times the nodes' limiters found the store had lost its data, and ledger hits they sent again. */
  long storeLosses;
  long ledgerRefilled;
  long floodAsked;
  long floodAdmitted;
  long floodStored;
  int maxKeys;
  long overflowed;

  long worstBaselineWindow;
  /** Most admitted on one key in one window: windows touched by the fault until it was removed. */
  long worstFaultWindow;
  /** The same from the window in which the fault was removed until the nodes had recovered. */
  long worstRecoveryWindow;

  /** Ledger requests denied during fault + recovery, and the longest run of them on one node (ns). */
  long ledgerDeniedFault;
  long longestLedgerDenialRunNanos;
  long faultDecisions;
  long slowFaultDecisions;
  long maxFaultDecisionNanos;
  long p99BaselineNanos;
  long p99FaultNanos;

  long breakerOpens;
  int nodesOpened;
  long slowCallRateExceeded;
  long failureRateExceeded;
  long fallbackDecisions;
  long replays;
  final List<String> transitions = new ArrayList<>();
  boolean closedAtEnd = true;
  long recoveryNanos;
  long faultNanos;

  GroupResult(String scenario, StoreFailurePolicy policy, int nodes, long rateLimit) {
    this.scenario = scenario;
    this.policy = policy;
    this.nodes = nodes;
    this.rateLimit = rateLimit;
  }


  /** Over-admission of the worst window touched by the fault, percent of the limit (negative: under). */
  double overAdmissionPercent() {
    return 100.0 * (worstFaultWindow - rateLimit) / rateLimit;
  }

  double recoveryOverAdmissionPercent() {
    return 100.0 * (worstRecoveryWindow - rateLimit) / rateLimit;
  }

  double baselineOverAdmissionPercent() {
    return 100.0 * (worstBaselineWindow - rateLimit) / rateLimit;
  }

  double p99Ratio() {
    return p99BaselineNanos == 0 ? Double.NaN : (double) p99FaultNanos / p99BaselineNanos;
  }

  @Override
  public String toString() {
    return scenario + "/" + policy + ": admitted " + ledgerAdmitted + " stored " + ledgerStored + " lost " + lost
        + " doubled " + doubled + " acked-before-loss " + ackedBeforeLoss + " refilled " + ledgerRefilled + " (losses seen "
        + storeLosses + ") flood " + floodAdmitted + "/" + floodStored
        + " worst window " + worstFaultWindow + "/" + rateLimit + " (baseline " + worstBaselineWindow + ", recovery "
        + worstRecoveryWindow + ")"
        + " ledger denied " + ledgerDeniedFault + " (longest run " + longestLedgerDenialRunNanos / 1_000_000 + " ms)"
        + " p99 " + p99BaselineNanos + "->" + p99FaultNanos + " ns, max " + maxFaultDecisionNanos / 1_000_000 + " ms"
        + " slow " + slowFaultDecisions + "/" + faultDecisions + " opens " + breakerOpens + " on " + nodesOpened
        + " nodes (slow-rate " + slowCallRateExceeded + ", failure-rate " + failureRateExceeded + ")"
        + " fallback " + fallbackDecisions + " replays " + replays + " recovery "
        + (recoveryNanos < 0 ? "never" : recoveryNanos / 1_000_000 + " ms") + " keys max " + maxKeys
        + " overflowed " + overflowed;
  }
}
