package io.sluice.cli.tune;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The writers on crafted rows: every file parses, and they agree with the recommender. */
class ReportsTest {
  @TempDir
  Path dir;

  static TuneConfig config(Path out, double maxError) {
    return new TuneConfig(Profile.ZIPF, 4, 1_000, Duration.ofSeconds(1), Duration.ofSeconds(10), true, 2,
        1_000, 42, List.of(1L, 10L, 100L, 1000L), List.of(Duration.ofMillis(100), Duration.ofMillis(250)), null, out,
        maxError, Duration.ofSeconds(1));
  }

  static TuneResult result(Path out, List<Row> rows, double maxError) {
    TuneConfig c = config(out, maxError);
    return new TuneResult(c, "sluice tune --profile zipf \"<&>\"", "2026-12-01T00:00:00Z", "test store", 12_345, rows,
        Recommender.recommend(rows, maxError, c.maxFalseDenialsPct()), List.of("a note with <markup> & \"quotes\""),
        false, rows.size() - 1);
  }

  @Test
  void filesParseAndAgree() throws Exception {
    List<Row> rows = List.of(RecommenderTest.reference(),
        RecommenderTest.row(1, 100, 0, 0.3, 1_004),
        RecommenderTest.row(10, 100, 0.2, 0.1, 150),
        RecommenderTest.row(10, 250, 0.4, 0.1, 90),
        RecommenderTest.row(100, 100, 0.8, 0.6, 40),
        RecommenderTest.row(1000, 250, 4.2, 0.3, 0.7));
    TuneResult t = result(dir, rows, 1.0);
    Reports.write(t);
    ReportFiles files = ReportFiles.read(dir);
    files.checkConsistent();
    assertThat(files.json.get("recommendation").get("batch_size").asLong()).isEqualTo(100);
    assertThat(files.json.get("notes").get(0).asText()).isEqualTo("a note with <markup> & \"quotes\"");
    assertThat(files.json.get("command").asText()).isEqualTo("sluice tune --profile zipf \"<&>\"");
    assertThat(files.json.get("rows").get(0).get("store_calls_per_1000").isNull()).isTrue();
    assertThat(files.html).contains("&lt;markup&gt; &amp;");
    // two sync intervals: the labels carry them
    assertThat(java.nio.file.Files.readString(dir.resolve(Reports.SVG))).contains(">b10/250ms<").contains(">exact<")
        .contains("recommended");
    String table = Reports.table(rows, t.recommendation().row());
    assertThat(table).contains("* batch 100, sync 100ms").contains("exact model (reference)")
        .contains("false denials %").contains("false denials < L/2").contains("swapped %")
        .contains("admitted vs exact %");
    // how to apply it, in the JSON and the page
    assertThat(files.json.get("recommendation").get("apply").get("builder").asText())
        .isEqualTo("SyncedLimiter.builder(limit, store).batchSize(100).syncInterval(Duration.ofMillis(100)).build()");
    assertThat(files.json.get("recommendation").get("apply").get("serve").asText())
        .isEqualTo("sluice serve --limit api=1000/1s --batch-size 100 --sync-interval 100ms");
    assertThat(files.html).contains("How to apply it")
        .contains("<code>SyncedLimiter.builder(limit, store).batchSize(100).syncInterval(Duration.ofMillis(100)).build()</code>")
        .contains("<code>sluice serve --limit api=1000/1s --batch-size 100 --sync-interval 100ms</code>")
        .contains("false denials %").contains("admitted vs exact %").contains("where the limit was reached only");
  }

  @Test
  void falseDenialsAreWrittenAndGateTheRecommendation() throws Exception {
    List<Row> rows = List.of(RecommenderTest.reference(),
        RecommenderTest.row(10, 100, 0.2, 0.1, 0.02, 0, 150),
        RecommenderTest.row(100, 100, 0.1, 0.1, 0.3, 0, 40),
        RecommenderTest.row(1000, 100, 0, 0.2, 0.04, 4, 10));
    Reports.write(result(dir, rows, 1.0));
    ReportFiles files = ReportFiles.read(dir);
    files.checkConsistent();
    assertThat(files.json.get("recommendation").get("batch_size").asLong()).isEqualTo(10);
    assertThat(files.csv.get(2).get("false_denials_pct")).isEqualTo("0.3");
    assertThat(files.csv.get(3).get("false_denials_below_half_limit")).isEqualTo("4");
    assertThat(files.csv.get(0).get("admitted_pct_of_exact")).isEqualTo("100");
    assertThat(files.json.get("rows").get(3).get("passes").asBoolean()).isFalse();
    assertThat(files.json.get("recommendation").get("rejected").size()).isEqualTo(2);
    assertThat(files.html).contains("Settings that did not pass").contains("batch 1000, sync 100ms: 4 false denials");
  }

  @Test
  void noRecommendationIsWrittenAsNull() throws Exception {
    List<Row> rows = List.of(RecommenderTest.reference(), RecommenderTest.row(100, 100, 2.5, 0.6, 40));
    Reports.write(result(dir, rows, 1.0));
    ReportFiles files = ReportFiles.read(dir);
    files.checkConsistent();
    assertThat(files.json.get("recommendation").get("verdict").asText()).startsWith("no setting measured");
    assertThat(files.json.get("recommendation").get("apply").get("builder").isNull()).isTrue();
    assertThat(files.html).contains("<h3>Instead</h3>").contains("<code>SyncedLimiter.builder(limit, store).reservation().build()</code>");
  }

  @Test
  void aStrayWindowFarAboveTheRestIsDrawnOnTheEdgeWithItsValue() throws Exception {
    List<Row> rows = List.of(RecommenderTest.reference(), RecommenderTest.row(10, 100, 0.3, 34.4, 380),
        RecommenderTest.row(100, 100, 0.3, 0.2, 500));
    String svg = Chart.svg(rows, rows.get(2), 1.0, "t");
    assertThat(svg).contains(">b10: under 34.4%, off the chart<").contains(">10.0%<").doesNotContain(">40.0%<");
    Reports.write(result(dir, rows, 1.0));
    ReportFiles.read(dir).checkConsistent();
  }

  @Test
  void numbers() {
    assertThat(Reports.number(0.123)).isEqualTo("0.12");
    assertThat(Reports.number(123.45)).isEqualTo("123.5");
    assertThat(Reports.number(1234567)).isEqualTo("1,234,567");
    assertThat(Reports.number(Double.NaN)).isEqualTo("n/a");
    assertThat(Reports.plain(0.25)).isEqualTo("0.25");
    assertThat(Reports.plain(1000)).isEqualTo("1000");
    assertThat(Reports.plain(Double.NaN)).isEmpty();
  }
}
