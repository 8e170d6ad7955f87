package io.sluice.cli.tune;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RecommenderTest {

  static Row row(long batch, long syncMillis, double overWorst, double underWorst, double callsPer1000) {
    return new Row(new Setting(batch, Duration.ofMillis(syncMillis)), batch == 1 ? "exact (batch 1)" : "batched",
        false, 10_000, 5_000, 100, overWorst, overWorst / 2, underWorst, underWorst / 2, 10, callsPer1000, 1, 2, 1e6,
        0.1, 0, new double[] {overWorst}, new double[] {underWorst});
  }

  static Row reference() {
    return new Row(new Setting(1, Duration.ZERO), Simulation.MODEL_MODE, true, 10_000, 5_000, 100, 0, 0, 0, 0, 10,
        Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0, new double[1], new double[1]);
  }

  @Test
  void picksTheLargestBatchWithinTheError() {
    Row b10 = row(10, 100, 0.2, 0.1, 80);
    Row b100 = row(100, 100, 0.9, 0.3, 20);
    Row b1000 = row(1000, 100, 2.5, 0.1, 5);
    var r = Recommender.recommend(List.of(reference(), row(1, 100, 0, 0, 1000), b10, b100, b1000), 1.0);
    assertThat(r.row()).isSameAs(b100);
    assertThat(r.verdict()).contains("batch 100");
  }

  @Test
  void underAdmissionCountsToo() {
    Row b10 = row(10, 100, 0.2, 0.1, 80);
    Row b100 = row(100, 100, 0.3, 1.5, 20);
    assertThat(Recommender.recommend(List.of(reference(), b10, b100), 1.0).row()).isSameAs(b10);
  }

  @Test
  void theLimitItselfQualifies() {
    Row b500 = row(500, 100, 1.0, 1.0, 10);
    assertThat(Recommender.recommend(List.of(reference(), b500), 1.0).row()).isSameAs(b500);
  }

  @Test
  void aLongerSyncIntervalWinsAtTheSameBatchSize() {
    Row fast = row(100, 50, 0.1, 0.1, 30);
    Row slow = row(100, 200, 0.5, 0.5, 12);
    Row tooSlow = row(100, 400, 1.2, 0.1, 8);
    assertThat(Recommender.recommend(List.of(reference(), tooSlow, fast, slow), 1.0).row()).isSameAs(slow);
  }

  @Test
  void theReferenceIsNeverRecommended() {
    var r = Recommender.recommend(List.of(reference(), row(10, 100, 3, 0, 80)), 1.0);
    assertThat(r.row()).isNull();
    assertThat(r.verdict()).startsWith("no setting measured kept the error within 1.00%");
  }

  @Test
  void onlyExactLeftIsSaidSo() {
    Row exact = row(1, 100, 0, 0, 1000);
    var r = Recommender.recommend(List.of(reference(), exact, row(10, 100, 3, 0, 80)), 0.5);
    assertThat(r.row()).isSameAs(exact);
    assertThat(r.verdict()).contains("only exact mode");
    assertThat(r.rule()).contains("0.50%").contains("largest setting");
  }
}
