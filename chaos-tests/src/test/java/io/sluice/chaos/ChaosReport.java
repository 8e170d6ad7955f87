package io.sluice.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The chaos report: one row per scenario and fallback policy, as a markdown table and a CSV, written
 * to the folder named by {@code -Dchaos.results} (default {@code target/chaos-report};
 * {@code chaos-tests/run.sh} points it at {@code chaos-tests/results}).
 */
final class ChaosReport {
  private static final class Row {
    final int number;
    final String fault;
    final GroupResult r;

    Row(int number, String fault, GroupResult r) {
      this.number = number;
      this.fault = fault;
      this.r = r;
    }
  }

  private final List<Row> rows = new ArrayList<>();
  private final String backend;

  ChaosReport(String backend) {
    this.backend = backend;
  }

  synchronized void add(int number, String fault, GroupResult r) {
    rows.add(new Row(number, fault, r));
  }

  synchronized void write() throws IOException {
    if (rows.isEmpty()) {
      return;
    }
    rows.sort((a, b) -> a.number != b.number ? Integer.compare(a.number, b.number) : a.r.policy.compareTo(b.r.policy));
    Path dir = Path.of(System.getProperty("chaos.results", "target/chaos-report"));
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("chaos.md"), markdown());
    Files.writeString(dir.resolve("chaos.csv"), csv());
  }

  private String markdown() {
    GroupResult first = rows.get(0).r;
    StringBuilder b = new StringBuilder();
    b.append("# Chaos report\n\n");
    b.append("Run ").append(LocalDate.now()).append(" on ").append(backend).append(", ")
        .append(Runtime.getRuntime().availableProcessors()).append(" cores, by `chaos-tests/run.sh` (ChaosIT). ")
        .append("Each scenario runs three groups of ").append(first.nodes)
        .append(" nodes at once, one per fallback policy; each node has its own Redis connection through its own ")
        .append("Toxiproxy proxy and one load thread asking for twice the rate limit (")
        .append(first.rateLimit).append(" per second per key, fixed one-second windows, 2 keys) and for ")
        .append("8 ledger keys of a limit never reached. Default batching (batch 100, sync every 100 ms); ")
        .append("rig timeouts: Redis command 1 s, flush 800 ms (so calls over 400 ms are slow for the breaker).\n\n");
    b.append("Columns: decision p99 in the baseline and during fault + recovery (µs) and their ratio; the slowest ")
        .append("decision during fault + recovery; the worst window (most admitted on one key in one window, all nodes) ")
        .append("against the limit, in the baseline, in the windows touched by the fault until it was removed, and from then until the nodes had recovered; ledger hits ")
        .append("admitted by the nodes and found in Redis after the nodes closed; ledger requests denied during fault + ")
        .append("recovery (its limit is never reached: each denial is the store's or the policy's) and the longest run ")
        .append("of them in a row on one node; ledger hits lost and double-counted; flushes Redis ")
        .append("refused as already applied (indeterminate outcomes that the sequence numbers kept from counting twice); ")
        .append("breaker openings (and on how many nodes; by slow-call rate / failure rate); decisions made by the ")
        .append("fallback policy; time from healing until every breaker is closed and the backlog flushed.\n\n");
    b.append("| # | fault | policy | p99 base → fault (µs) | ratio | slowest (ms) | worst window: base / fault / recovery (limit ")
        .append(first.rateLimit).append(") | over limit: fault / recovery | ledger admitted / in Redis | ledger denied (longest run, ms) | lost | double |")
        .append(" replays refused | breaker opens (nodes; slow/fail) | fallback decisions | recovery (ms) |\n");
    b.append("|---|---|---|---|---:|---:|---|---|---|---|---:|---:|---:|---|---:|---:|\n");
    for (Row row : rows) {
      GroupResult r = row.r;
      b.append("| ").append(row.number).append(" | ").append(row.fault).append(" | ").append(r.policy)
          .append(" | ").append(micros(r.p99BaselineNanos)).append(" → ").append(micros(r.p99FaultNanos))
          .append(" | ").append(String.format(Locale.ROOT, "%.1fx", r.p99Ratio()))
          .append(" | ").append(r.maxFaultDecisionNanos / 1_000_000)
          .append(" | ").append(r.worstBaselineWindow).append(" / ").append(r.worstFaultWindow).append(" / ")
          .append(r.worstRecoveryWindow)
          .append(" | ").append(String.format(Locale.ROOT, "%+.1f%% / %+.1f%%", r.overAdmissionPercent(),
              r.recoveryOverAdmissionPercent()))
          .append(" | ").append(ledger(r))
          .append(" | ").append(r.ledgerDeniedFault).append(" (").append(r.longestLedgerDenialRunNanos / 1_000_000).append(")")
          .append(" | ").append(r.lost).append(" | ").append(r.doubled).append(" | ").append(r.replays)
          .append(" | ").append(r.breakerOpens).append(" (").append(r.nodesOpened).append("/").append(r.nodes)
          .append("; ").append(r.slowCallRateExceeded).append("/").append(r.failureRateExceeded).append(")")
          .append(" | ").append(r.fallbackDecisions)
          .append(" | ").append(r.recoveryNanos < 0 ? "never" : Long.toString(r.recoveryNanos / 1_000_000))
          .append(" |\n");
    }
    boolean byNode = rows.stream().anyMatch(row -> !row.r.faultWindowByNode.isEmpty());
    if (byNode) {
      b.append("\nWindows of 10 s, the window the fault began in, the first rate key: what each node admitted in each ")
          .append("second of it (`100+300f`: 100 by the store's budget, 300 by the failure policy). Where a window ")
          .append("passes its limit, this shows which node admitted the rest, and when.\n\n")
          .append("| # | policy | node | admitted per second |\n|---|---|---:|---|\n");
      for (Row row : rows) {
        for (int i = 0; i < row.r.faultWindowByNode.size(); i++) {
          b.append("| ").append(row.number).append(" | ").append(row.r.policy).append(" | ").append(i).append(" | ")
              .append(row.r.faultWindowByNode.get(i)).append(" |\n");
        }
      }
    }
    return b.toString();
  }

  private static String ledger(GroupResult r) {
    String s = r.ledgerAdmitted + " / " + r.ledgerStored;
    if (r.dataLost) {
      s += " (" + r.ackedBeforeLoss + " acknowledged before the loss; " + r.ledgerRefilled + " sent again by "
          + r.storeLosses + " limiters that found the store had lost them)";
    }
    if (r.floodAsked > 0) {
      s += "; flood " + r.floodAdmitted + " / " + r.floodStored + " of " + r.floodAsked + " asked, key table max "
          + r.maxKeys + ", " + r.overflowed + " overflowed";
    }
    return s;
  }

  private String csv() {
    StringBuilder b = new StringBuilder();
    b.append("scenario,fault,policy,nodes,rate_limit,p99_baseline_us,p99_fault_us,p99_ratio,slowest_decision_ms,")
        .append("slow_decisions,fault_decisions,worst_window_baseline,worst_window_fault,worst_window_recovery,")
        .append("over_admission_fault_pct,over_admission_recovery_pct,")
        .append("ledger_admitted,ledger_in_store,acked_before_loss,ledger_denied,longest_ledger_denial_run_ms,")
        .append("lost,double_counted,flood_asked,flood_admitted,")
        .append("flood_in_store,key_table_max,overflowed,replays_refused,breaker_opens,nodes_opened,")
        .append("slow_call_rate_exceeded,failure_rate_exceeded,fallback_decisions,fault_ms,recovery_ms\n");
    for (Row row : rows) {
      GroupResult r = row.r;
      b.append(row.number).append(',').append('"').append(row.fault.replace("\"", "'")).append('"').append(',')
          .append(r.policy).append(',').append(r.nodes).append(',').append(r.rateLimit).append(',')
          .append(micros(r.p99BaselineNanos)).append(',').append(micros(r.p99FaultNanos)).append(',')
          .append(String.format(Locale.ROOT, "%.2f", r.p99Ratio())).append(',')
          .append(r.maxFaultDecisionNanos / 1_000_000).append(',').append(r.slowFaultDecisions).append(',')
          .append(r.faultDecisions).append(',').append(r.worstBaselineWindow).append(',').append(r.worstFaultWindow)
          .append(',').append(r.worstRecoveryWindow)
          .append(',').append(String.format(Locale.ROOT, "%.2f", r.overAdmissionPercent()))
          .append(',').append(String.format(Locale.ROOT, "%.2f", r.recoveryOverAdmissionPercent())).append(',')
          .append(r.ledgerAdmitted).append(',').append(r.ledgerStored).append(',').append(r.ackedBeforeLoss).append(',')
          .append(r.ledgerDeniedFault).append(',').append(r.longestLedgerDenialRunNanos / 1_000_000).append(',')
          .append(r.lost).append(',').append(r.doubled).append(',').append(r.floodAsked).append(',')
          .append(r.floodAdmitted).append(',').append(r.floodStored).append(',').append(r.maxKeys).append(',')
          .append(r.overflowed).append(',').append(r.replays).append(',').append(r.breakerOpens).append(',')
          .append(r.nodesOpened).append(',').append(r.slowCallRateExceeded).append(',')
          .append(r.failureRateExceeded).append(',').append(r.fallbackDecisions).append(',')
          .append(r.faultNanos / 1_000_000).append(',').append(r.recoveryNanos < 0 ? -1 : r.recoveryNanos / 1_000_000)
          .append('\n');
    }
    return b.toString();
  }

  private static String micros(long nanos) {
    return nanos < 10_000 ? String.format(Locale.ROOT, "%.1f", nanos / 1000.0) : Long.toString(nanos / 1000);
  }
}
