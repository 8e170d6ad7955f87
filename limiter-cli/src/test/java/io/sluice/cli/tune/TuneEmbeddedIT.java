package io.sluice.cli.tune;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.cli.Sluice;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice tune} end to end on the embedded Hazelcast store, short runs: the files it writes, the
 * exact mode measured there too, and Ctrl-C (a real signal to a real process) still writing what was
 * measured. No timing is asserted.
 */
class TuneEmbeddedIT {
  @TempDir
  Path dir;

  @Test
  void sweepsAndWritesAReportThatAgreesWithItself() throws Exception {
    Path out = dir.resolve("report");
    StringWriter stdout = new StringWriter();
    StringWriter stderr = new StringWriter();
    int code = Sluice.execute(new PrintWriter(stdout), new PrintWriter(stderr), "tune", "--profile", "mixed", "--keys",
        "20", "--duration", "2s", "--batch-sizes", "1,10,100", "--sync-intervals", "50ms,100ms", "--flat-out", "200ms", "--nodes", "3",
        "--limit", "500", "--seed", "7", "--out", out.toString());
    assertThat(code).as(stderr.toString()).isZero();
    ReportFiles files = ReportFiles.read(out);
    files.checkConsistent();
    // the model, the exact mode (batch 1, once), then batch 10 and 100 at two intervals each
    List<String> settings = new ArrayList<>();
    for (var r : files.csv) {
      settings.add(r.get("batch_size") + "/" + r.get("sync_interval_ms"));
    }
    assertThat(settings).containsExactly("1/0", "1/50", "10/50", "10/100", "100/50", "100/100");
    JsonNode json = files.json;
    assertThat(json.get("parameters").get("nodes").asInt()).isEqualTo(3);
    assertThat(json.get("parameters").get("windows").asInt()).isEqualTo(2);
    assertThat(json.get("store").asText()).startsWith("embedded Hazelcast");
    assertThat(json.get("interrupted").asBoolean()).isFalse();
    assertThat(json.get("notes").toString()).doesNotContain("was not run");
    JsonNode exact = json.get("rows").get(1);
    assertThat(exact.get("mode").asText()).isEqualTo("exact (batch 1)");
    // one entry processor per decision, plus a heartbeat per node and second
    assertThat(exact.get("store_calls_per_1000").asDouble()).isBetween(1_000.0, 1_100.0);
    // the exact mode admits what the exact algorithm admits; a permit or two may land on the other side
    // of a window edge between the moment the harness reads the clock and the one the node reads
    assertThat(exact.get("over_worst_pct").asDouble()).isLessThanOrEqualTo(1.0);
    long requests = json.get("parameters").get("requests_in_trace").asLong();
    for (JsonNode row : json.get("rows")) {
      // every setting replayed the whole trace, and the demand (2x) was above the limit
      assertThat(row.get("decisions").asLong()).isEqualTo(requests);
      assertThat(row.get("contested_windows").asInt()).isPositive();
      assertThat(row.get("over_by_window_pct").size()).isEqualTo(2);
      assertThat(row.get("false_denials_pct").asDouble()).isBetween(0.0, 100.0);
      assertThat(row.get("false_denials_below_half_limit").asLong())
          .isLessThanOrEqualTo(row.get("false_denials").asLong());
      if (row.get("reference").asBoolean()) {
        assertThat(row.get("false_denials").asLong()).isZero();
        assertThat(row.get("admitted_pct_of_exact").asDouble()).isEqualTo(100.0);
      }
      if (!row.get("reference").asBoolean()) {
        assertThat(row.get("latency_p99_us").asDouble()).isPositive();
        assertThat(row.get("decisions_per_s").asDouble()).isPositive();
      }
    }
    // the table and the rule on stdout; progress on stderr
    assertThat(stdout.toString()).contains("exact model (reference)").contains("exact (batch 1)")
        .contains("batch 100, sync 50ms").contains("Rule: recommend the largest setting").contains("false denials %")
        .contains("Wrote ");
    // the exact mode runs last (its decisions wait on the store: a cold JVM would make it fall behind)
    assertThat(stderr.toString()).contains("[4/5] batch 100, sync 100ms").contains("[5/5] exact (batch 1)");
  }

  @Test
  void theSameSeedReplaysTheSameTraffic() throws Exception {
    long[] requests = new long[2];
    for (int i = 0; i < 2; i++) {
      Path out = dir.resolve("seed-" + i);
      int code = Sluice.execute(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()), "tune",
          "--profile", "zipf", "--keys", "50", "--limit", "200", "--duration", "1s", "--batch-sizes", "100",
          "--flat-out", "0s", "--out", out.toString());
      assertThat(code).isZero();
      JsonNode json = ReportFiles.read(out).json;
      requests[i] = json.get("parameters").get("requests_in_trace").asLong();
      // the model decides on a simulated clock: the same counts every time
      assertThat(json.get("rows").get(0).get("admitted").asLong()).isPositive();
    }
    assertThat(requests[0]).isEqualTo(requests[1]);
  }

  @Test
  void aSignalStopsTheRunAndTheReportIsStillWritten() throws Exception {
    Path out = dir.resolve("interrupted");
    ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), Sluice.class.getName(), "tune", "--duration", "5s",
        "--batch-sizes", "10,100,1000", "--flat-out", "0s", "--out", out.toString());
    pb.redirectErrorStream(true);
    Process p = pb.start();
    StringBuilder output = new StringBuilder();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        output.append(line).append('\n');
        if (line.startsWith("[2/3]") && line.contains("replaying")) {
          // Ctrl-C: SIGINT to that process (Process.destroy would close its output under us); SIGTERM,
          // which runs the same shutdown hook, where SIGINT is ignored here and so in the child (a
          // background job of a non-interactive shell: the JVM then leaves SIGINT ignored)
          String signal = sigintIgnored() ? "-TERM" : "-INT";
          new ProcessBuilder("kill", signal, Long.toString(p.pid())).inheritIO().start().waitFor();
        }
      }
    }
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(output.toString()).isTrue();
    assertThat(p.exitValue()).as(output.toString()).isNotZero();
    assertThat(output.toString()).contains("interrupted: writing what was measured so far").contains("Interrupted: 1 of 3");
    ReportFiles files = ReportFiles.read(out);
    assertThat(files.json.get("interrupted").asBoolean()).isTrue();
    // the model and the one setting measured before the signal
    assertThat(files.csv).hasSize(2);
    files.checkConsistent();
    assertThat(Files.readString(out.resolve(Reports.HTML))).contains("Interrupted:");
  }

  /** Whether this process ignores SIGINT (Linux: the SigIgn mask of /proc/self/status; false where unknown). */
  private static boolean sigintIgnored() throws IOException {
    Path status = Path.of("/proc/self/status");
    if (!Files.exists(status)) {
      return false;
    }
    for (String line : Files.readAllLines(status)) {
      if (line.startsWith("SigIgn:")) {
        return (Long.parseUnsignedLong(line.substring(7).trim(), 16) & (1L << 1)) != 0; // SIGINT is signal 2
      }
    }
    return false;
  }
}
