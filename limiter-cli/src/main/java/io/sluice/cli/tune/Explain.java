package io.sluice.cli.tune;

import java.util.List;

/** The words that explain the table, printed after it and written into the HTML report. */
final class Explain {
  private Explain() {
  }

  static List<String> columns() {
    return List.of(
        "setting: batch size (permits a node gathers per key before it flushes) and sync interval (how often"
            + " it flushes anyway); batch 1 is the exact mode, one store call per decision. The exact model row is the"
            + " trace decided by the exact algorithm at the trace's own times on a simulated clock (no store).",
        "over worst % / over mean %: permits admitted beyond what the exact algorithm admits for the same requests"
            + " at the same moments (this replay's decisions replayed through one exact limiter on a simulated"
            + " clock), per key and window, in % of the limit: the worst window and the mean over the windows where"
            + " the limit was reached.",
        "under worst % / under mean %: permits the exact algorithm admitted and this setting denied, the same way.",
        "store calls /1k: calls to the store (flushes, exact checks, heartbeats) per 1,000 decisions during the"
            + " replay: the load the setting puts on Redis or Hazelcast.",
        "p50 us / p99 us: time of one tryAcquire call on the node, microseconds (exact mode waits for the store).",
        "decisions/s: all nodes together deciding as fast as they can for a moment after the replay (same keys,"
            + " on this machine, so the store and the nodes share its cores).");
  }
}
