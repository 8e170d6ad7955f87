package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.envoy.RlsServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code sluice envoy}'s options fill the RLS server's settings; what is wrong is named by option or by file line. */
class EnvoyCommandTest {
  private static RlsServer.Settings settings(String... args) {
    EnvoyCommand command = new EnvoyCommand();
    new CommandLine(command).parseArgs(args);
    return command.settings();
  }

  /** The first line of what {@code sluice envoy ARGS} prints on stderr, for what it refuses (exit code 2). */
  private static String error(String... args) {
    String[] all = new String[args.length + 1];
    all[0] = "envoy";
    System.arraycopy(args, 0, all, 1, args.length);
    SluiceBadInputTest.Run r = SluiceBadInputTest.run(all);
    assertThat(r.code()).as(r.err()).isEqualTo(Sluice.EXIT_USAGE);
    assertThat(r.err()).doesNotContain("\tat ");
    return r.err().split("\\R")[0];
  }

  @Test
  void optionsMapOntoTheSettings(@TempDir Path dir) {
    RlsServer.Settings s = settings("--config", dir.resolve("a.yaml").toString(), "--config", dir.toString(),
        "--grpc-port", "0", "--redis", "redis://127.0.0.1:7000", "--batch-size", "1");
    assertThat(s.configPaths()).containsExactly(dir.resolve("a.yaml"), dir);
    assertThat(s.redisUri()).isEqualTo("redis://127.0.0.1:7000");
    assertThat(s.batchSize()).isEqualTo(1);
    RlsServer.Settings d = settings("--config", "x.yaml");
    assertThat(d.redisUri()).isNull();
    assertThat(d.host()).isEqualTo("127.0.0.1");
    assertThat(d.batchSize()).isEqualTo(100);
    assertThat(d.rlqsConfig()).isNull();
    RlsServer.Settings q = settings("--rlqs-config", dir.resolve("rlqs.yaml").toString());
    assertThat(q.rlqsConfig()).isEqualTo(dir.resolve("rlqs.yaml"));
    assertThat(q.configPaths()).isEmpty();
  }

  @Test
  void badOptionsAreNamed(@TempDir Path dir) throws Exception {
    assertThat(error()).isEqualTo("sluice envoy: --config: at least one file or directory is needed, or an RLQS"
        + " configuration");
    assertThat(error("--rlqs-config", "r.yaml", "--rlqs-max-streams", "0"))
        .isEqualTo("sluice envoy: --rlqs-max-streams: must be at least 1, got 0");
    Path badRlqs = dir.resolve("bad-rlqs.yaml");
    Files.writeString(badRlqs, "assignment_period: 5 minutes\ndomains: []\n");
    assertThat(error("--rlqs-config", badRlqs.toString(), "--grpc-port", "0"))
        .isEqualTo("sluice envoy: " + badRlqs + ":1: assignment_period: must be a duration such as 500ms, 5s, 1m or 1h,"
            + " got \"5 minutes\"");
    assertThat(error("--config", "x.yaml", "--batch-size", "0"))
        .isEqualTo("sluice envoy: --batch-size: must be at least 1, got 0");
    assertThat(error("--config", "x.yaml", "--grpc-port", "70000"))
        .isEqualTo("sluice envoy: --grpc-port: must be 0 to 65535, got 70000");
    assertThat(error("--config", "x.yaml", "--reload-interval", "5ms"))
        .isEqualTo("sluice envoy: --reload-interval: must be 0 (off) or at least 10ms, got 5ms");
    assertThat(error("--config", "x.yaml", "--sync-interval", "1s"))
        .isEqualTo("sluice envoy: --sync-interval: must be positive and at most 500ms (half a second, the shortest"
            + " unit), got 1s");
    assertThat(error("--config", "x.yaml", "--threads", "0"))
        .isEqualTo("sluice envoy: --threads: must be 1 to 1024, got 0");
    // a configuration file's error names its line and field, before any store is started
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: week, requests_per_unit: 1}\n");
    assertThat(error("--config", bad.toString(), "--grpc-port", "0"))
        .isEqualTo("sluice envoy: " + bad + ":4: descriptors[0].rate_limit.unit: must be second, minute, hour or day,"
            + " got \"week\"");
    assertThat(error("--config", dir.resolve("missing.yaml").toString(), "--grpc-port", "0"))
        .startsWith("sluice envoy: " + dir.resolve("missing.yaml") + ": cannot read the file");
    assertThat(List.of(error("--config", "x.yaml", "--on-store-failure", "maybe")).get(0))
        .startsWith("sluice envoy: ").contains("--on-store-failure");
  }
}
