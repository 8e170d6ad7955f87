package io.sluice.cli.tune;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The rule: among the settings measured on the store, recommend the largest (by batch size, then
 * sync interval: the one that calls the store least) that passes every gate:
 * <ul>
 *   <li>worst over-admission in any key and window within {@code --max-error} % of the limit;</li>
 *   <li>worst under-admission in any window where the limit was reached within {@code --max-error};</li>
 *   <li>false denials (requests the exact algorithm admitted and the setting denied, over every key and
 *       window) within {@code --max-false-denials} % of all requests;</li>
 *   <li>no false denial at all in a key-window whose demand stayed below half the limit.</li>
 * </ul>
 * Settings of the approximate mode rank above those of the reservation mode ({@code --reservation}),
 * which rank above the exact mode: the reservation mode is recommended where no approximate setting
 * passes. When none passes it says so and points to exact mode and reservation mode.
 */
final class Recommender {
  /** --max-false-denials when not given: DESIGN's target, 0.1% of requests. */
  static final double DEFAULT_MAX_FALSE_DENIALS_PCT = 0.1;

  private Recommender() {
  }

  /**
   * The recommended row (null: none passed), the rule, the verdict in one sentence, and one line per
   * setting that failed a gate saying which.
   */
  record Recommendation(Row row, String rule, String verdict, List<String> rejected) {
  }

  static String rule(double maxErrorPct, double maxFalseDenialsPct) {
    return String.format(Locale.ROOT, "recommend the largest setting (the approximate mode before the reservation mode,"
        + " then batch size, then sync interval) that passes every"
        + " gate: worst over-admission in any key and window (how far the nodes' own count passed the limit), and worst"
        + " under-admission in any window where the limit"
        + " was reached, both within %s%% of the limit (--max-error); false denials (requests the exact algorithm"
        + " admitted and the setting denied, over every key and window, less swaps) within %s%% of all requests"
        + " (--max-false-denials); and no false denial in a key-window whose demand stayed below half the limit."
        + " Each setting is compared with the exact algorithm deciding the same requests at the same moments",
        pct(maxErrorPct), Reports.fine(maxFalseDenialsPct));
  }

  /**
   * The over-admission the gate reads: over the limit by the setting's own count where measured (on a
   * fixed window the same as against the exact run; on a sliding one that figure also holds what the
   * exact run admitted before: see OwnCount).
   */
  static double gatedOver(Row r) {
    return Double.isNaN(r.overLimitWorstPct()) ? r.overWorstPct() : r.overLimitWorstPct();
  }

  /** Why a row fails the gates: empty when it passes. */
  static List<String> failures(Row r, double maxErrorPct, double maxFalseDenialsPct) {
    List<String> out = new ArrayList<>();
    double over = gatedOver(r);
    if (!(over <= maxErrorPct)) {
      out.add(String.format(Locale.ROOT, "worst over-admission %s%% of the limit > %s%% (--max-error)",
          pct(over), pct(maxErrorPct)));
    }
    if (!(r.underWorstPct() <= maxErrorPct)) {
      out.add(String.format(Locale.ROOT, "worst under-admission %s%% of the limit > %s%% (--max-error)",
          pct(r.underWorstPct()), pct(maxErrorPct)));
    }
    if (!(r.falseDenialsPct() <= maxFalseDenialsPct)) {
      out.add(String.format(Locale.ROOT, "false denials %s%% of requests (%,d) > %s%% (--max-false-denials)",
          Reports.fine(r.falseDenialsPct()), r.falseDenials(), Reports.fine(maxFalseDenialsPct)));
    }
    if (r.falseDenialsBelowHalf() != 0) {
      out.add(String.format(Locale.ROOT, "%,d false denial%s in key-windows below half the limit (must be 0)",
          r.falseDenialsBelowHalf(), r.falseDenialsBelowHalf() == 1 ? "" : "s"));
    }
    return out;
  }

  static boolean passes(Row r, double maxErrorPct, double maxFalseDenialsPct) {
    return failures(r, maxErrorPct, maxFalseDenialsPct).isEmpty();
  }

  static Recommendation recommend(List<Row> rows, double maxErrorPct, double maxFalseDenialsPct) {
    Row best = null;
    List<String> rejected = new ArrayList<>();
    for (Row r : rows) {
      if (!r.selectable()) {
        continue;
      }
      List<String> why = failures(r, maxErrorPct, maxFalseDenialsPct);
      if (!why.isEmpty()) {
        rejected.add(r.setting().label() + ": " + String.join("; ", why));
        continue;
      }
      if (best == null || r.setting().compareTo(best.setting()) > 0) {
        best = r;
      }
    }
    boolean reservationMeasured = rows.stream().anyMatch(r -> r.setting().reservation());
    String verdict;
    if (best == null) {
      verdict = "no setting measured passed every gate (see why below): " + alternatives(reservationMeasured)
          + "; or sweep smaller batch sizes and sync intervals";
    } else if (best.setting().exact()) {
      verdict = "only exact mode (batch 1) passed every gate; every batched setting measured failed one (see why"
          + " below). Keep exact mode (SyncedLimiter.builder(limit, store).batchSize(1))"
          + (reservationMeasured ? "" : ", or use " + RESERVATION_MODE);
    } else {
      verdict = best.setting().label() + ": " + summary(best);
    }
    return new Recommendation(best, rule(maxErrorPct, maxFalseDenialsPct), verdict, List.copyOf(rejected));
  }

  /**
   * Where to go when no batched setting passes: exact mode or reservation mode, as the README says
   * ({@code reservationMeasured}: its rows are in the table, and failed too).
   */
  static String alternatives(boolean reservationMeasured) {
    return "use exact mode (measure it here with --batch-sizes 1; SyncedLimiter.builder(limit, store).batchSize(1)"
        + " in code, sluice serve --batch-size 1: one store call per decision, admits exactly)"
        + (reservationMeasured ? "" : ", or " + RESERVATION_MODE);
  }

  /** The pointer to reservation mode where tune did not measure it. */
  private static final String RESERVATION_MODE = "reservation mode (SyncedLimiter.builder(limit, store).reservation(),"
      + " sluice serve --reservation: never over-admits, may under-admit by unused leases; measure it here with"
      + " --reservation)";

  static String summary(Row r) {
    return String.format(Locale.ROOT, "worst over-admission %s%%, worst under-admission %s%% of the limit, false"
            + " denials %s%% of requests (%,d below half the limit), admitted %s%% of what the exact algorithm"
            + " admitted, %s store calls per 1,000 decisions", pct(gatedOver(r)), pct(r.underWorstPct()),
        Reports.fine(r.falseDenialsPct()), r.falseDenialsBelowHalf(), Reports.ratio(r.admittedPctOfExact()),
        Reports.number(r.storeCallsPer1000()));
  }

  static String pct(double v) {
    return Reports.number(v);
  }
}
