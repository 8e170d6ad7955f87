package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.sidecar.ServeConfig;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.redis.RedisStoreConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code sluice serve}'s options (picocli) fill the sidecar's config; what is wrong is named by option. */
class ServeCommandTest {
  private static ServeConfig config(String... args) {
    ServeCommand command = new ServeCommand();
    CommandLine cl = new CommandLine(command);
    cl.parseArgs(args);
    return command.config();
  }

  /** The first line of what {@code sluice serve ARGS} prints on stderr, for options it refuses. */
  private static String error(String... args) {
    String[] all = new String[args.length + 1];
    all[0] = "serve";
    System.arraycopy(args, 0, all, 1, args.length);
    SluiceBadInputTest.Run r = SluiceBadInputTest.run(all);
    assertThat(r.code()).as(r.err()).isEqualTo(Sluice.EXIT_USAGE);
    assertThat(r.err()).doesNotContain("\tat ");
    return r.err().split("\\R")[0];
  }

  /**
   * --reservation: every limit that batches in reservation mode (what tune --reservation measures and
   * recommends with this flag); a sliding log, exact only, is refused with it, by option.
   */
  @Test
  void reservationModeForTheLimitsThatBatch() {
    assertThat(config("--limit", "api=100/1m").reservation()).as("approximate by default").isFalse();
    ServeConfig c = config("--limit", "api=100/1m", "--limit", "tb=10/1s,token-bucket", "--reservation");
    assertThat(c.reservation()).isTrue();
    assertThat(c.sync().reservation()).as("the config every limiter is built from").isTrue();
    assertThat(error("--limit", "log=10/1m,sliding-window-log", "--reservation"))
        .isEqualTo("sluice serve: --reservation: limit log is a sliding log, which is shared in exact mode only;"
            + " give it its own sidecar without reservation, or make it a sliding window counter");
  }

  /** --no-cold-key-allowance: every decision no claim pays asks the store (a rolling upgrade's setting). */
  @Test
  void theColdKeyAllowanceIsOnByDefaultAndCanBeTurnedOff() {
    assertThat(config("--limit", "api=100/1m").sync().coldKeyAllowance()).isTrue();
    assertThat(config("--limit", "api=100/1m", "--no-cold-key-allowance").sync().coldKeyAllowance()).isFalse();
    assertThat(config("--limit", "api=100/1m", "--cold-key-allowance=false").sync().coldKeyAllowance()).isFalse();
  }

  /** --no-align-clock: the process keeps the machine's clock (on by default: the wall clock is the ticker). */
  @Test
  void theClockIsAlignedToTheStoresByDefaultAndCanBeLeftAlone() {
    assertThat(config("--limit", "api=100/1m").sync().alignsClockToStore()).isTrue();
    assertThat(config("--limit", "api=100/1m", "--no-align-clock").sync().alignsClockToStore()).isFalse();
  }

  @Test
  void optionsMapOntoTheConfig() {
    ServeConfig c = config("--limit", "api=100/1m", "--limit=login=5/15m,fixed-window",
        "--port", "0", "--host=::1", "--redis", "redis://127.0.0.1:7000", "--batch-size", "1",
        "--sync-interval", "50ms", "--on-store-failure", "fail-open", "--max-body", "1024", "--node-id", "side-1",
        "--key-prefix", "app", "--max-key-length", "64", "--max-threads", "32", "--redis-timeout", "2s",
        "--body-timeout", "PT3S", "--redis-eviction-check", "warn", "--max-keys", "5000", "--min-nodes", "3",
        "--otlp-endpoint", "http://127.0.0.1:4318/v1/metrics", "--otlp-step", "10s", "--bucket-batch-size", "25");
    assertThat(c.limits()).extracting(Limit::name).containsExactly("api", "login");
    assertThat(c.port()).isZero();
    assertThat(c.host()).isEqualTo("::1");
    assertThat(c.redisUri()).isEqualTo("redis://127.0.0.1:7000");
    assertThat(c.batchSize()).isEqualTo(1);
    assertThat(c.bucketBatchSize()).isEqualTo(25);
    assertThat(config("--limit", "api=100/1m").bucketBatchSize()).as("buckets exact by default").isEqualTo(1);
    assertThat(c.syncInterval()).isEqualTo(Duration.ofMillis(50));
    assertThat(c.onStoreFailure()).isEqualTo(StoreFailurePolicy.FAIL_OPEN);
    assertThat(c.maxBodyBytes()).isEqualTo(1024);
    assertThat(c.nodeId()).isEqualTo("side-1");
    assertThat(c.keyPrefix()).isEqualTo("app");
    assertThat(c.maxKeyLength()).isEqualTo(64);
    assertThat(c.maxThreads()).isEqualTo(32);
    assertThat(c.redisTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.bodyTimeout()).as("one duration grammar: ISO-8601 too").isEqualTo(Duration.ofSeconds(3));
    assertThat(c.maxKeys()).isEqualTo(5000);
    assertThat(c.minNodes()).isEqualTo(3);
    assertThat(config("--limit", "api=100/1m").minNodes()).isEqualTo(1);
    assertThat(c.redisEvictionCheck()).isEqualTo(RedisStoreConfig.EvictionCheck.WARN);
    assertThat(c.otlpEndpoint()).contains("http://127.0.0.1:4318/v1/metrics");
    assertThat(c.otlpStep()).isEqualTo(Duration.ofSeconds(10));
    // the defaults are the config's own
    ServeConfig d = config("--limit", "api=1/1m");
    ServeConfig b = ServeConfig.builder().limit(Limit.slidingWindowCounter("api").limit(1)
        .window(Duration.ofMinutes(1)).build()).build();
    assertThat(d.bodyTimeout()).isEqualTo(b.bodyTimeout());
    assertThat(d.batchSize()).isEqualTo(b.batchSize());
    assertThat(d.syncInterval()).isEqualTo(b.syncInterval());
    assertThat(d.redisTimeout()).isEqualTo(b.redisTimeout());
    assertThat(d.port()).isEqualTo(b.port());
    assertThat(d.host()).isEqualTo(b.host());
    assertThat(d.maxKeys()).isEqualTo(b.maxKeys());
    assertThat(d.onStoreFailure()).isEqualTo(b.onStoreFailure());
    assertThat(d.redisEvictionCheck()).isEqualTo(b.redisEvictionCheck());
    assertThat(d.nodeId()).isNull();
    assertThat(d.otlpEndpoint()).as("no OTLP push unless asked").isEmpty();
    assertThat(d.otlpStep()).isEqualTo(b.otlpStep());
  }

  @Test
  void badOptionsAreNamed() {
    // every message names the option the user typed, never a Java field
    assertThat(error()).isEqualTo("sluice serve: --limit: at least one limit is needed"
        + " (NAME=COUNT/PERIOD[,ALGORITHM][,hard|soft|shadow][,burst=N], e.g. api=1000/1m)");
    assertThat(error("--limit", "api=1/1m", "--port", "http")).startsWith("sluice serve: ").contains("--port");
    assertThat(error("--limit", "api=1/1m", "--port", "70000")).isEqualTo("sluice serve: --port: must be 0 to 65535, got 70000");
    assertThat(error("--limit", "api=1/1m", "--min-nodes", "0"))
        .isEqualTo("sluice serve: --min-nodes: must be between 1 and 4095, got 0");
    assertThat(error("--limit", "api=1/1m", "--bogus", "1")).startsWith("sluice serve: Unknown options: '--bogus'");
    assertThat(error("--limit", "api=1/1m", "8080")).startsWith("sluice serve: Unmatched argument");
    assertThat(error("--limit")).startsWith("sluice serve: Missing required parameter for option '--limit'");
    assertThat(error("--limit", "api=1/1m", "--batch-size", "0")).startsWith("sluice serve: --batch-size: must be at least 1");
    assertThat(error("--limit", "api=1/1m", "--bucket-batch-size", "0"))
        .isEqualTo("sluice serve: --bucket-batch-size: must be at least 1, got 0");
    assertThat(error("--limit", "api=1/1m", "--limit", "api=2/1m")).isEqualTo("sluice serve: --limit: \"api\" is defined twice");
    assertThat(error("--limit", "api=1/1m", "--redis", "http://x")).startsWith("sluice serve: --redis: must be a redis://");
    assertThat(error("--limit", "api=1/1m", "--on-store-failure", "panic")).contains("--on-store-failure")
        .contains("expected one of fail-open, fail-closed, local-share, got panic");
    assertThat(error("--limit", "api=1/1m", "--body-timeout", "0s")).startsWith("sluice serve: --body-timeout: must be 1ms to 10m");
    assertThat(error("--limit", "api=1/1m", "--body-timeout", "soon")).contains("--body-timeout").contains("not a duration");
    assertThat(error("--limit", "api=1/1m", "--redis-eviction-check", "maybe")).contains("--redis-eviction-check")
        .contains("expected one of refuse, warn, off");
    assertThat(error("--limit", "api=1/1m", "--otlp-endpoint", "localhost:4318"))
        .isEqualTo("sluice serve: --otlp-endpoint: must be an http:// or https:// URL with a host, got localhost:4318");
    assertThat(error("--limit", "api=1/1m", "--otlp-endpoint", "http://127.0.0.1:4318/v1/metrics", "--otlp-step", "10ms"))
        .isEqualTo("sluice serve: --otlp-step: must be 1s to 1h, got 10ms");
    assertThat(error("--limit", "api=1/1m", "--otlp-step", "10s"))
        .isEqualTo("sluice serve: --otlp-step: needs an OTLP endpoint");
    assertThat(error("--limit", "q=5/1s,leaky-bucket-shaper")).contains("--limit").contains("unknown word");
    assertThat(SluiceBadInputTest.run("serve", "--help").out()).contains("--limit=SPEC").contains("--redis=URI")
        .contains("--limits-file=PATH");
    assertThat(SluiceBadInputTest.run("help", "serve").out()).contains("--batch-size=N");
  }

  @Test
  void aLimitsFileBringsRulesAndBuckets(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("rules.conf");
    Files.writeString(file, "per-ip=1000/1m\nfree=1/1s,token-bucket,burst=60\nalways per-ip by ip\n"
        + "plan free default free by api-key\n");
    ServeConfig c = config("--limits-file", file.toString());
    assertThat(c.limits()).extracting(Limit::name).containsExactly("per-ip", "free");
    assertThat(c.rules()).isPresent();
    assertThat(c.identities()).containsExactlyInAnyOrder("ip", "api-key");
    assertThat(config("--limit", "api=1/1m").rules()).isEmpty();
    assertThat(config("--limit", "q=5/1s,leaky-bucket", "--limit", "s=1/1s,token-bucket", "--limit", "w=1/1m")
        .limits()).hasSize(3);
    Files.writeString(file, "api=1/1m\nplan p apx by ip\n");
    assertThat(error("--limits-file", file.toString()))
        .startsWith("sluice serve: --limits-file: " + file + ":2: rule: unknown limit \"apx\"");
    assertThat(error("--limits-file", dir.resolve("missing").toString()))
        .startsWith("sluice serve: --limits-file: cannot read");
  }

  @Test
  void redisClusterIsAFlagThatMayBeSpeltOut() {
    String[] base = {"--limit", "api=1/1m", "--redis", "redis://127.0.0.1:7000"};
    assertThat(config(concat(base, "--redis-cluster")).redisCluster()).isTrue();
    assertThat(config(concat(base, "--redis-cluster=true")).redisCluster()).isTrue();
    assertThat(config(concat(base, "--redis-cluster=false")).redisCluster()).isFalse();
    assertThat(config(base).redisCluster()).isFalse();
    assertThat(error(concat(base, "--redis-cluster=yes"))).contains("--redis-cluster");
  }

  private static String[] concat(String[] a, String b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + 1);
    out[a.length] = b;
    return out;
  }
}
