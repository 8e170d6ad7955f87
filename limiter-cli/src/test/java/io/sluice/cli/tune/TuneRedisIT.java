package io.sluice.cli.tune;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.cli.Sluice;
import io.sluice.sync.RedisServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice tune --redis} against a real redis-server: the real exact mode is measured too. */
class TuneRedisIT {
  @TempDir
  Path dir;

  @Test
  void sweepsAgainstRedisWithTheExactMode() throws Exception {
    try (RedisServer redis = RedisServer.start()) {
      Path out = dir.resolve("report");
      StringWriter stdout = new StringWriter();
      StringWriter stderr = new StringWriter();
      int code = Sluice.execute(new PrintWriter(stdout), new PrintWriter(stderr), "tune", "--profile", "steady", "--redis", redis.uri(),
          "--duration", "2s", "--batch-sizes", "1,100", "--limit", "300", "--algorithm", "fixed", "--flat-out",
          "200ms", "--out", out.toString());
      assertThat(code).as(stderr.toString()).isZero();
      ReportFiles files = ReportFiles.read(out);
      files.checkConsistent();
      JsonNode rows = files.json.get("rows");
      assertThat(rows.size()).isEqualTo(3);
      assertThat(files.json.get("store").asText()).startsWith("Redis at " + redis.uri());
      JsonNode exact = rows.get(1);
      assertThat(exact.get("mode").asText()).isEqualTo("exact (batch 1)");
      // one script call per decision, plus a heartbeat per node and second
      assertThat(exact.get("store_calls_per_1000").asDouble()).isBetween(1_000.0, 1_100.0);
      // the exact mode admits what the exact algorithm admits; a permit or two may land on the other side
      // of a window edge between the moment the harness reads the clock and the one the node reads
      assertThat(exact.get("over_worst_pct").asDouble()).isLessThanOrEqualTo(1.0);
      JsonNode batched = rows.get(2);
      assertThat(batched.get("store_calls_per_1000").asDouble()).isLessThan(1_000.0);
      assertThat(stdout.toString()).contains("exact (batch 1)");
    }
  }
}
