package io.sluice.cli.tune;

import java.util.List;
import java.util.Locale;

/**
 * The rule: among the settings measured on the store, recommend the largest (by batch size, then
 * sync interval: the one that calls the store least) whose worst over-admission and worst
 * under-admission, in any window, both stay within {@code --max-error} % of the limit.
 */
final class Recommender {
  private Recommender() {
  }

  record Recommendation(Row row, String rule, String verdict) {
  }

  static String rule(double maxErrorPct) {
    return String.format(Locale.ROOT, "recommend the largest setting (batch size, then sync interval) whose worst"
        + " over-admission and worst under-admission in any window both stay within %s%% of the limit"
        + " (--max-error), compared per key and window with the exact algorithm deciding the same requests at the same moments",
        pct(maxErrorPct));
  }

  static Recommendation recommend(List<Row> rows, double maxErrorPct) {
    Row best = null;
    for (Row r : rows) {
      if (!r.selectable() || r.worstErrorPct() > maxErrorPct) {
        continue;
      }
      if (best == null || r.setting().compareTo(best.setting()) > 0) {
        best = r;
      }
    }
    String verdict;
    if (best == null) {
      verdict = String.format(Locale.ROOT, "no setting measured kept the error within %s%%: sweep smaller batch"
          + " sizes or sync intervals, use exact mode (batch 1, one store call per decision), or reservation mode"
          + " (never over-admits)", pct(maxErrorPct));
    } else if (best.setting().exact()) {
      verdict = String.format(Locale.ROOT, "only exact mode (batch 1) kept the error within %s%%:"
          + " every batched setting measured exceeded it", pct(maxErrorPct));
    } else {
      verdict = String.format(Locale.ROOT, "%s: worst over-admission %s%%, worst under-admission %s%% of the limit,"
          + " %s store calls per 1,000 decisions", best.setting().label(), pct(best.overWorstPct()),
          pct(best.underWorstPct()), Reports.number(best.storeCallsPer1000()));
    }
    return new Recommendation(best, rule(maxErrorPct), verdict);
  }

  static String pct(double v) {
    return Reports.number(v);
  }
}
