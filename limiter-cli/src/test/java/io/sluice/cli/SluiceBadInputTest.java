package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad input: one line naming the problem, a non-zero exit, no stack trace, nothing run. */
class SluiceBadInputTest {
  @TempDir
  Path dir;

  record Run(int code, String out, String err) {
  }

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Sluice.execute(new PrintWriter(out), new PrintWriter(err), args);
    return new Run(code, out.toString(), err.toString());
  }

  private void assertUsageError(Run r, String firstLine) {
    assertThat(r.code()).isEqualTo(Sluice.EXIT_USAGE);
    String[] lines = r.err().split("\\R");
    assertThat(lines[0]).isEqualTo(firstLine);
    assertThat(r.err()).doesNotContain("Exception").doesNotContain("\tat ");
    assertThat(r.out()).isEmpty();
  }

  @Test
  void unknownProfile() {
    assertUsageError(run("tune", "--profile", "spiky"), "sluice tune: Invalid value for option '--profile':"
        + " unknown profile 'spiky' (one of: mixed, steady, bursty, zipf, hot-key, step)");
  }

  @Test
  void regionsNeedTwoRedisesAndAWeightEach() {
    assertUsageError(run("tune", "--region-redis", "redis://127.0.0.1:1"),
        "sluice tune: --region-redis: give two or more regions (one Redis each), or use --redis for one");
    assertUsageError(run("tune", "--algorithm", "fixed", "--region-redis", "redis://127.0.0.1:1", "--region-redis",
        "redis://127.0.0.1:2", "--region-weights", "1,2,3"),
        "sluice tune: --region-weights: one weight per --region-redis (2), got 3");
  }

  @Test
  void negativeBatchSize() {
    assertUsageError(run("tune", "--batch-sizes", "10,-5"),
        "sluice tune: --batch-sizes: every batch size must be at least 1, got -5");
  }

  @Test
  void negativeMaxFalseDenials() {
    assertUsageError(run("tune", "--max-false-denials", "-1"),
        "sluice tune: --max-false-denials: must be between 0 and 100 (% of requests), got -1.0");
  }

  @Test
  void zeroNodes() {
    assertUsageError(run("tune", "--nodes", "0"),
        "sluice tune: --nodes: must be between 1 and 256 (up to 1024 with --simulate), got 0");
  }

  @Test
  void simulatedNodesAndRoundTrip() {
    assertUsageError(run("tune", "--simulate", "--nodes", "1025"),
        "sluice tune: --nodes: must be between 1 and 1024, got 1025");
    assertUsageError(run("tune", "--round-trip", "5ms"),
        "sluice tune: --round-trip: only with --simulate (a real store's round trip is what it is)");
    assertUsageError(run("tune", "--simulate", "--round-trip", "2s"),
        "sluice tune: --round-trip: must be between 0s and 1s, got 2s");
    assertUsageError(run("tune", "--simulate", "--key-affinity", "--node-skew", "1"),
        "sluice tune: --key-affinity: not with --node-skew (each sets how requests spread over the nodes)");
    assertUsageError(run("tune", "--algorithm", "fixed", "--key-affinity", "--region-redis", "redis://127.0.0.1:1",
        "--region-redis", "redis://127.0.0.1:2"),
        "sluice tune: --key-affinity: not with --region-redis (each sets how requests spread over the nodes)");
    assertUsageError(run("tune", "--simulate", "--redis", "redis://127.0.0.1:1"),
        "sluice tune: --simulate: not together with --redis (the simulation has its own in-memory store)");
  }

  @Test
  void reservationWithRegions() {
    assertUsageError(run("tune", "--reservation", "--algorithm", "fixed", "--region-redis", "redis://127.0.0.1:1",
        "--region-redis", "redis://127.0.0.1:2"),
        "sluice tune: --reservation: not with --region-redis (regions enforce their shares in the approximate mode)");
  }

  @Test
  void notANumber() {
    Run r = run("tune", "--limit", "lots");
    assertThat(r.code()).isEqualTo(Sluice.EXIT_USAGE);
    assertThat(r.err()).startsWith("sluice tune: Invalid value for option '--limit': 'lots' is not a long");
  }

  @Test
  void syncIntervalLongerThanHalfTheWindow() {
    assertUsageError(run("tune", "--window", "1s", "--sync-intervals", "100ms,600ms"),
        "sluice tune: --sync-intervals: at most half the window (500ms), got 600ms");
  }

  @Test
  void badDuration() {
    assertUsageError(run("tune", "--duration", "ten"), "sluice tune: Invalid value for option '--duration':"
        + " 'ten' is not a duration (a whole number with ms, s, m, h or d, e.g. 500ms, 10s, 1d; or ISO-8601 like PT90S)");
  }

  @Test
  void durationShorterThanAWindow() {
    assertUsageError(run("tune", "--window", "2s", "--duration", "1s"),
        "sluice tune: --duration: must be at least one window (2s), got 1s");
  }

  @Test
  void keysForAOneKeyProfile() {
    assertUsageError(run("tune", "--profile", "steady", "--keys", "10"),
        "sluice tune: --keys: the steady profile has one key; --keys is for mixed, zipf and hot-key");
  }

  @Test
  void maxErrorOutOfRange() {
    assertUsageError(run("tune", "--max-error", "0"),
        "sluice tune: --max-error: must be above 0 and at most 100 (% of the limit), got 0.0");
  }

  @Test
  void unknownOption() {
    Run r = run("tune", "--batchsize", "10");
    assertThat(r.code()).isEqualTo(Sluice.EXIT_USAGE);
    assertThat(r.err()).startsWith("sluice tune: Unknown option").contains("'--batchsize'");
  }

  @Test
  void noSubcommand() {
    assertUsageError(run(), "sluice: a subcommand is required (try: sluice tune)");
  }

  @Test
  void unreachableRedis() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    Path out = dir.resolve("report");
    Run r = run("tune", "--redis", "redis://127.0.0.1:" + port, "--duration", "1s", "--out", out.toString());
    assertThat(r.code()).isEqualTo(Sluice.EXIT_USER_ERROR);
    assertThat(r.err().strip()).isEqualTo("sluice tune: --redis redis://127.0.0.1:" + port
        + ": cannot connect to Redis at 127.0.0.1:" + port + ": Connection refused");
    assertThat(Files.exists(out)).isFalse();
  }

  @Test
  void aPasswordInTheRedisUriIsNotPrinted() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Run r = run("tune", "--redis", "redis://app:s3cret@127.0.0.1:" + port, "--duration", "1s");
    assertThat(r.code()).isEqualTo(Sluice.EXIT_USER_ERROR);
    assertThat(r.err()).doesNotContain("s3cret").contains("--redis redis://app:***@127.0.0.1:" + port);
  }

  @Test
  void helpExplainsEveryOption() {
    Run r = run("tune", "--help");
    assertThat(r.code()).isZero();
    for (String option : new String[] {"--duration", "--nodes", "--limit", "--window", "--profile", "--seed",
        "--batch-sizes", "--sync-intervals", "--redis", "--out", "--max-error", "--algorithm", "--demand", "--keys",
        "--flat-out", "--max-false-denials", "--simulate", "--round-trip"}) {
      assertThat(r.out()).contains(option);
    }
    assertThat(r.out()).contains("mixed").contains("steady").contains("bursty").contains("zipf").contains("hot-key").contains("step");
  }
}
