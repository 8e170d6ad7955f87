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

/**
 * {@code sluice tune --region-redis ...}: three regions, each its own real redis-server, the nodes
 * enforcing their region's share and a region coordinator splitting the limit by skewed demand.
 */
class TuneRegionsIT {
  @TempDir
  Path dir;

  @Test
  void sweepsRegionsEachWithItsOwnRedis() throws Exception {
    try (RedisServer a = RedisServer.start(); RedisServer b = RedisServer.start(); RedisServer c = RedisServer.start()) {
      Path out = dir.resolve("report");
      StringWriter stdout = new StringWriter();
      StringWriter stderr = new StringWriter();
      int code = Sluice.execute(new PrintWriter(stdout), new PrintWriter(stderr), "tune", "--profile", "steady", "--algorithm", "fixed",
          "--region-redis", a.uri(), "--region-redis", b.uri(), "--region-redis", c.uri(), "--region-weights", "70,20,10",
          "--nodes", "3", "--duration", "3s", "--batch-sizes", "1,100", "--limit", "300", "--flat-out", "200ms",
          "--out", out.toString());
      assertThat(code).as(stderr.toString()).isZero();
      ReportFiles files = ReportFiles.read(out);
      files.checkConsistent();
      assertThat(files.json.get("store").asText()).startsWith("3 regions, each its own Redis");
      JsonNode rows = files.json.get("rows");
      assertThat(rows.size()).as("the reference and batch 100: batch 1 has no regional split").isEqualTo(2);
      assertThat(rows.get(1).get("mode").asText()).isEqualTo("batched, 3 regions");
      assertThat(stdout.toString()).contains("regions enforce their shares in the approximate mode only");
      // the coordinator wrote shares into every region (its records sit in the quota's counter keys)
      for (RedisServer r : new RedisServer[] {a, b, c}) {
        try (var client = io.lettuce.core.RedisClient.create(r.uri()).connect()) {
          assertThat(client.sync().keys("*:demand:tune")).as("demand index in " + r.uri()).isNotEmpty();
        }
      }
    }
  }
}
