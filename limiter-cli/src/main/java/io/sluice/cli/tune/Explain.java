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
        "over limit %: how far the nodes' own admissions passed the limit, in % of it, in the worst key-window:"
            + " the key's count as each admission was made, in the order the nodes decided them (for the sliding"
            + " window the count it weighs: the previous window's admissions by the part of it still in the sliding"
            + " window, plus the current one's). The over-admission gate reads this. On a fixed window it equals over"
            + " worst %; on a sliding one over worst % also holds what the exact run admitted before (a setting that"
            + " admitted less in one window may rightly admit more than the exact run in the next), so it can show a"
            + " permit or two where no limit was passed. results.csv and results.json call it over_limit_worst_pct.",
        "over worst % / over mean %: permits admitted beyond what the exact algorithm admits for the same requests"
            + " at the same moments (this replay's requests decided again by one exact limiter on a simulated clock,"
            + " each at the moment its node read, in the order the nodes decided them), per key and window, in % of the limit: the worst key-window, and the mean over the key-windows"
            + " where the limit was reached (the exact run or the setting denied at least once there).",
        "under worst % / under mean %: permits the exact algorithm admitted and this setting denied, per key and"
            + " window, in % of the limit, over the key-windows where the limit was reached only. A key denied far"
            + " below its limit does not show here: see false denials.",
        "false denials %: requests the exact algorithm admitted and this setting denied, request by request (the"
            + " exact algorithm decides the very request at the moment the node decided it), over every key and"
            + " window of the trace, in % of all its requests; less the swaps (see swapped %): in each key-window,"
            + " the requests only the exact algorithm admitted beyond those only this setting admitted.",
        "false denials < L/2: how many of those false denials fell in a key-window whose demand stayed below half"
            + " the limit (for the sliding window also in the window before, which it weighs in). There the exact"
            + " algorithm never comes near the limit, so this must be 0: any other count is a key denied far below its"
            + " limit.",
        "swapped %: requests the exact algorithm admitted and this setting denied that the setting made up for in"
            + " the same key-window by admitting another request that the exact algorithm denied, in % of all"
            + " requests. At a key's limit, which of its requests get through depends on timing to the millisecond;"
            + " swaps change which, not how many. With false denials %, they make up the literal per-request count."
            + " Even exact mode shows a few: requests of one key decided by two nodes in the same instant.",
        "admitted vs exact %: permits this setting admitted over the whole trace, in % of what the exact algorithm"
            + " admitted deciding the same requests at the same moments (below 100: it denied more than it should"
            + " have; above: it admitted more). results.csv and results.json call it admitted_pct_of_exact.",
        "store calls /1k: calls to the store (flushes, exact checks, heartbeats) per 1,000 decisions during the"
            + " replay: the load the setting puts on Redis or Hazelcast.",
        "p50 us / p99 us: time of one acquire call on the node, microseconds (exact mode waits for the store).",
        "decisions/s: all nodes together deciding as fast as they can for a moment after the replay (same keys,"
            + " on this machine, so the store and the nodes share its cores).");
  }
}
