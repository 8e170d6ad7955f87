package io.sluice.cli.tune;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RecommenderTest {

  static Row row(long batch, long syncMillis, double overWorst, double underWorst, double callsPer1000) {
    return row(batch, syncMillis, overWorst, underWorst, 0, 0, callsPer1000);
  }

  /** A measured row of 10,000 decisions; false denials in % of them, and how many below half the limit. */
  static Row row(long batch, long syncMillis, double overWorst, double underWorst, double falseDenialsPct,
      long belowHalf, double callsPer1000) {
    long falseDenials = Math.round(falseDenialsPct * 100);
    return new Row(new Setting(batch, Duration.ofMillis(syncMillis)), batch == 1 ? "exact (batch 1)" : "batched",
        false, 10_000, 5_000 - falseDenials, 5_000, 100.0 * (5_000 - falseDenials) / 5_000, overWorst, overWorst,
        overWorst / 2,
        underWorst, underWorst / 2, 10, falseDenials, falseDenialsPct, 0, 0, belowHalf, 40, callsPer1000, 1, 2, 1e6, 0.1, 0,
        new double[] {overWorst}, new double[] {underWorst});
  }

  /** {@link #row} with the over-admission against the exact run and over the limit by its own count apart. */
  static Row row(long batch, long syncMillis, double overLimit, double overWorst, double underWorst, double callsPer1000) {
    Row r = row(batch, syncMillis, overWorst, underWorst, callsPer1000);
    return new Row(r.setting(), r.mode(), false, r.decisions(), r.admitted(), r.exactAdmitted(), r.admittedPctOfExact(),
        overLimit, r.overWorstPct(), r.overMeanPct(), r.underWorstPct(), r.underMeanPct(), r.contestedWindows(),
        r.falseDenials(), r.falseDenialsPct(), r.swapped(), r.swappedPct(), r.falseDenialsBelowHalf(),
        r.keyWindowsBelowHalf(), r.storeCallsPer1000(), r.p50Micros(), r.p99Micros(), r.decisionsPerSecond(),
        r.lagP99Millis(), r.storeFailures(), r.overByWindowPct(), r.underByWindowPct());
  }

  /** {@link #row} measured in the reservation mode ({@code --reservation}). */
  static Row reservation(long batch, long syncMillis, double overWorst, double underWorst, double falseDenialsPct,
      double callsPer1000) {
    Row r = row(batch, syncMillis, overWorst, underWorst, falseDenialsPct, 0, callsPer1000);
    return new Row(new Setting(batch, Duration.ofMillis(syncMillis), true), "reservation", false, r.decisions(),
        r.admitted(), r.exactAdmitted(), r.admittedPctOfExact(), r.overLimitWorstPct(), r.overWorstPct(),
        r.overMeanPct(), r.underWorstPct(), r.underMeanPct(), r.contestedWindows(), r.falseDenials(),
        r.falseDenialsPct(), r.swapped(), r.swappedPct(), r.falseDenialsBelowHalf(), r.keyWindowsBelowHalf(),
        r.storeCallsPer1000(), r.p50Micros(), r.p99Micros(), r.decisionsPerSecond(), r.lagP99Millis(),
        r.storeFailures(), r.overByWindowPct(), r.underByWindowPct());
  }

  static Row reference() {
    return new Row(new Setting(1, Duration.ZERO), Simulation.MODEL_MODE, true, 10_000, 5_000, 5_000, 100, 0, 0, 0, 0, 0,
        10, 0, 0, 0, 0, 0, 40, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0, new double[1], new double[1]);
  }

  static Recommender.Recommendation recommend(List<Row> rows, double maxError) {
    return Recommender.recommend(rows, maxError, 0.1);
  }

  @Test
  void picksTheLargestBatchWithinTheError() {
    Row b10 = row(10, 100, 0.2, 0.1, 80);
    Row b100 = row(100, 100, 0.9, 0.3, 20);
    Row b1000 = row(1000, 100, 2.5, 0.1, 5);
    var r = recommend(List.of(reference(), row(1, 100, 0, 0, 1000), b10, b100, b1000), 1.0);
    assertThat(r.row()).isSameAs(b100);
    assertThat(r.verdict()).contains("batch 100").contains("false denials 0.000% of requests");
    assertThat(r.rejected()).singleElement().asString().startsWith("batch 1000, sync 100ms: worst over-admission 2.50%");
  }

  @Test
  void theOverAdmissionGateReadsHowFarTheNodesOwnCountPassedTheLimit() {
    // a sliding window: 2.5% "over" the exact run, which admitted more in the window before; its own
    // count never passed the limit by more than 0.3%
    Row b100 = row(100, 100, 0.3, 2.5, 0.2, 20);
    // its own count 1.5% past the limit, though within 0.2% of what the exact run admitted
    Row b1000 = row(1000, 100, 1.5, 0.2, 0.2, 5);
    var r = recommend(List.of(reference(), b100, b1000), 1.0);
    assertThat(r.row()).isSameAs(b100);
    assertThat(r.rejected()).singleElement().asString().startsWith("batch 1000, sync 100ms: worst over-admission 1.50%");
  }

  @Test
  void underAdmissionCountsToo() {
    Row b10 = row(10, 100, 0.2, 0.1, 80);
    Row b100 = row(100, 100, 0.3, 1.5, 20);
    assertThat(recommend(List.of(reference(), b10, b100), 1.0).row()).isSameAs(b10);
  }

  @Test
  void falseDenialsAboveTheMaximumFailTheGate() {
    Row b10 = row(10, 100, 0.2, 0.1, 0.05, 0, 80);
    Row b100 = row(100, 100, 0, 0, 0.2, 0, 20);
    var r = Recommender.recommend(List.of(reference(), b10, b100), 1.0, 0.1);
    assertThat(r.row()).isSameAs(b10);
    assertThat(r.rejected()).singleElement().asString()
        .isEqualTo("batch 100, sync 100ms: false denials 0.200% of requests (20) > 0.100% (--max-false-denials)");
    // a looser --max-false-denials lets it through
    assertThat(Recommender.recommend(List.of(reference(), b10, b100), 1.0, 0.5).row()).isSameAs(b100);
  }

  @Test
  void theFalseDenialMaximumItselfQualifiesAndZeroMeansNone() {
    Row b100 = row(100, 100, 0, 0, 0.1, 0, 20);
    assertThat(Recommender.recommend(List.of(reference(), b100), 1.0, 0.1).row()).isSameAs(b100);
    assertThat(Recommender.recommend(List.of(reference(), b100), 1.0, 0).row()).isNull();
    Row perfect = row(100, 100, 0, 0, 0, 0, 20);
    assertThat(Recommender.recommend(List.of(reference(), perfect), 1.0, 0).row()).isSameAs(perfect);
  }

  @Test
  void oneFalseDenialBelowHalfTheLimitFailsWhateverTheRest() {
    Row b10 = row(10, 100, 0.1, 0.1, 0.01, 0, 80);
    Row b100 = row(100, 100, 0, 0, 0.01, 1, 20);
    var r = Recommender.recommend(List.of(reference(), b10, b100), 1.0, 0.1);
    assertThat(r.row()).isSameAs(b10);
    assertThat(r.rejected()).singleElement().asString()
        .isEqualTo("batch 100, sync 100ms: 1 false denial in key-windows below half the limit (must be 0)");
  }

  @Test
  void everyFailedGateIsNamed() {
    Row bad = row(1000, 100, 3, 2, 0.5, 7, 5);
    assertThat(Recommender.failures(bad, 1.0, 0.1)).containsExactly(
        "worst over-admission 3.00% of the limit > 1.00% (--max-error)",
        "worst under-admission 2.00% of the limit > 1.00% (--max-error)",
        "false denials 0.500% of requests (50) > 0.100% (--max-false-denials)",
        "7 false denials in key-windows below half the limit (must be 0)");
    assertThat(Recommender.passes(bad, 1.0, 0.1)).isFalse();
  }

  @Test
  void theLimitItselfQualifies() {
    Row b500 = row(500, 100, 1.0, 1.0, 10);
    assertThat(recommend(List.of(reference(), b500), 1.0).row()).isSameAs(b500);
  }

  @Test
  void aLongerSyncIntervalWinsAtTheSameBatchSize() {
    Row fast = row(100, 50, 0.1, 0.1, 30);
    Row slow = row(100, 200, 0.5, 0.5, 12);
    Row tooSlow = row(100, 400, 1.2, 0.1, 8);
    assertThat(recommend(List.of(reference(), tooSlow, fast, slow), 1.0).row()).isSameAs(slow);
  }

  @Test
  void whenNothingPassesItSaysSoAndPointsToExactAndReservationMode() {
    var r = recommend(List.of(reference(), row(10, 100, 3, 0, 80), row(100, 100, 0, 0, 0.05, 2, 20)), 1.0);
    assertThat(r.row()).isNull();
    assertThat(r.verdict()).startsWith("no setting measured passed every gate")
        .contains("--batch-sizes 1").contains("SyncedLimiter.builder(limit, store).batchSize(1)")
        .contains("SyncedLimiter.builder(limit, store).reservation()");
    assertThat(r.rejected()).hasSize(2);
  }

  /**
   * With --reservation: a setting of the approximate mode that passes is recommended before any of the
   * reservation mode (it calls the store less); where none passes, the largest reservation setting that
   * does, before the exact mode; how to apply it names the builder's reservation() and the sidecar's
   * --reservation.
   */
  @Test
  void theReservationModeIsRecommendedWhereNoApproximateSettingPasses() {
    Row exact = row(1, 100, 0, 0, 1000);
    Row res100 = reservation(100, 100, 0, 0.5, 0.03, 700);
    Row res1000 = reservation(1000, 100, 0, 0.5, 0.03, 650);
    Row b100 = row(100, 100, 0, 0.5, 0.05, 0, 300);
    assertThat(recommend(List.of(reference(), exact, res100, res1000, b100), 1.0).row()).isSameAs(b100);

    Row b100Fails = row(100, 100, 0, 6, 0.7, 0, 300);
    var r = recommend(List.of(reference(), exact, res100, res1000, b100Fails), 1.0);
    assertThat(r.row()).isSameAs(res1000);
    assertThat(r.verdict()).startsWith("reservation, batch 1000, sync 100ms: worst over-admission 0.00%");
    assertThat(r.rejected()).singleElement().asString().startsWith("batch 100, sync 100ms: worst under-admission 6.00%");
    TuneConfig c = ReportsTest.config(null, 1.0);
    assertThat(Apply.lines(r, c)).containsExactly(
        "In code: SyncedLimiter.builder(limit, store).reservation().batchSize(1000)"
            + ".syncInterval(Duration.ofMillis(100)).build(), with limit = Limit.slidingWindowCounter(\"api\")"
            + ".limit(1000).window(Duration.ofSeconds(1)).build().",
        "The sidecar: sluice serve --limit api=1000/1s --reservation --batch-size 1000 --sync-interval 100ms.");

    // every batched setting fails: exact mode, and no pointer to a reservation mode that was measured
    Row resFails = reservation(100, 100, 0, 2, 0.03, 700);
    var onlyExact = recommend(List.of(reference(), exact, resFails, b100Fails), 1.0);
    assertThat(onlyExact.row()).isSameAs(exact);
    assertThat(onlyExact.verdict()).contains("only exact mode").doesNotContain("--reservation");
  }

  @Test
  void theReferenceIsNeverRecommendedNorRejected() {
    var r = recommend(List.of(reference()), 1.0);
    assertThat(r.row()).isNull();
    assertThat(r.rejected()).isEmpty();
  }

  @Test
  void onlyExactLeftIsSaidSo() {
    Row exact = row(1, 100, 0, 0, 1000);
    var r = recommend(List.of(reference(), exact, row(10, 100, 3, 0, 80)), 0.5);
    assertThat(r.row()).isSameAs(exact);
    assertThat(r.verdict()).contains("only exact mode").contains(".reservation()").contains("--reservation");
    assertThat(r.rule()).contains("0.50%").contains("0.100%").contains("largest setting").contains("below half the limit");
  }

  @Test
  void howToApplyTheRecommendedSetting() {
    TuneConfig c = ReportsTest.config(null, 1.0);
    Row b100 = row(100, 250, 0, 0, 20);
    var r = recommend(List.of(reference(), b100), 1.0);
    assertThat(Apply.lines(r, c)).containsExactly(
        "In code: SyncedLimiter.builder(limit, store).batchSize(100).syncInterval(Duration.ofMillis(250)).build(),"
            + " with limit = Limit.slidingWindowCounter(\"api\").limit(1000).window(Duration.ofSeconds(1)).build().",
        "The sidecar: sluice serve --limit api=1000/1s --batch-size 100 --sync-interval 250ms.");
    // nothing passed: exact mode and reservation mode, with the run's limit
    var none = recommend(List.of(reference(), row(100, 250, 5, 0, 20)), 1.0);
    List<String> lines = Apply.lines(none, c);
    assertThat(lines.get(0)).contains("SyncedLimiter.builder(limit, store).batchSize(1).build()")
        .contains("sluice serve --limit api=1000/1s --batch-size 1;").contains("--batch-sizes 1");
    assertThat(lines.get(1)).contains("SyncedLimiter.builder(limit, store).reservation().build()")
        .contains("Measure it here with --reservation.");
  }
}
