package io.sluice.benchmarks;

import static io.sluice.benchmarks.DistributedHarness.infoField;
import static io.sluice.benchmarks.DistributedHarness.log;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.sluice.benchmarks.DistributedNodes.Impl;
import io.sluice.benchmarks.ManyKeysRuns.ManyKeys;
import io.sluice.benchmarks.OverAdmissionRuns.OverAdmission;
import io.sluice.benchmarks.ThroughputRuns.Cell;
import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The side-by-side distributed benchmark of DESIGN.md ("Figures the project must reach") against one
 * local redis-server, in one run:
 *
 * <ol>
 *   <li><b>Throughput</b>: decisions/s of one node with 1, 2 and 8 threads, each thread on its own key
 *       and all threads on one shared key, for Sluice's SyncedLimiter (batch 1, default, 1000) over
 *       RedisCounterStore, Bucket4j over Lettuce (plain compare-and-swap and
 *       {@code Optimizations.delaying}), Redisson's RRateLimiter and the same Sluice node in-process;
 *       and the Redis commands per 1,000 decisions, from {@code INFO commandstats} (reset with
 *       {@code CONFIG RESETSTAT} before each measured interval; commands run inside Lua scripts are
 *       counted there too; the INFO and CONFIG calls of this harness are left out).</li>
 *   <li><b>Over-admission</b>: 4 nodes (limiters with their own connections) on one key, demand twice
 *       the limit paced evenly over the nodes for 3 windows; admitted per window against the limit,
 *       for Sluice default batching, Sluice batch 1 (exact) and Bucket4j + delaying.</li>
 * </ol>
 *
 * <p>A plain main, not JMH: each cell runs a fixed warm-up and measured interval; every thread counts
 * into its own LongAdders; the rate is counted decisions over System.nanoTime. Writes a markdown
 * report and CSV files, and exits non-zero if any implementation threw, swallowed store errors, or
 * admitted nothing in a throughput cell.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.sluice.benchmarks.DistributedBenchmark \
 *     [--redis redis://127.0.0.1:6379] [--redis-server redis-server] [--quick]
 *     [--out benchmarks/results/distributed.md] [--csv benchmarks/results/distributed.csv]
 *     [--warmup 2] [--measure 3] [--threads 1,2,8] [--only REGEX] [--interleave]
 *     [--skip-throughput] [--only-100k-keys] [--skip-over-admission] [--skip-many-keys]
 * </pre>
 *
 * <p>This class drives the run (Redis, the parts in order, the verdict) and holds the benchmark's
 * figures; the parts are {@link ThroughputRuns}, {@link OverAdmissionRuns} and {@link ManyKeysRuns},
 * sharing a {@link DistributedHarness}; {@link DistributedReport} writes the files and
 * {@link DistributedOptions} parses the command line.
 */
public final class DistributedBenchmark {
  /** Throughput runs: high enough that the runs are (nearly) all allowed decisions. */
  static final long THROUGHPUT_LIMIT = 1_000_000_000L;
  static final Duration THROUGHPUT_WINDOW = Duration.ofSeconds(1);

  static final long OA_LIMIT = 2_000;
  static final Duration OA_WINDOW = Duration.ofSeconds(1);
  static final int OA_NODES = 4;
  static final int OA_WINDOWS = 3;
  static final double OA_DEMAND = 2.0;
  /** The synchronized burst: threads per node firing flat out from a window's first instant, and for how long. */
  static final int OA_BURST_THREADS = 2;
  static final Duration OA_BURST = Duration.ofMillis(100);

  private final DistributedOptions o;

  private DistributedBenchmark(DistributedOptions o) {
    this.o = o;
  }

  public static void main(String[] args) {
    int code;
    try {
      code = new DistributedBenchmark(DistributedOptions.parse(args)).run();
    } catch (IllegalArgumentException e) {
      System.err.println("DistributedBenchmark: " + e.getMessage());
      code = 2;
    } catch (Throwable t) {
      System.err.println("DistributedBenchmark: FAILED");
      t.printStackTrace();
      code = 1;
    }
    System.out.flush();
    System.err.flush();
    // Redisson and Lettuce keep non-daemon threads a little while after shutdown: do not wait for them
    Runtime.getRuntime().halt(code);
  }

  private int run() throws Exception {
    RedisLauncher launcher = null;
    String uri = o.redis;
    if (uri == null) {
      launcher = RedisLauncher.start(o.redisServer);
      uri = launcher.uri();
      log("started redis-server on " + uri);
    } else {
      requireLoopback(uri);
      log("using " + uri + " (its INFO commandstats are reset with CONFIG RESETSTAT before every run)");
    }
    RedisClient adminClient = RedisClient.create(uri);
    StatefulRedisConnection<String, String> adminConnection = adminClient.connect();
    DistributedHarness h;
    try {
      h = new DistributedHarness(adminConnection.sync());
      runParts(uri, h);
    } finally {
      adminConnection.close();
      adminClient.shutdown(0, 1, TimeUnit.SECONDS);
      if (launcher != null) {
        launcher.close();
      }
    }
    for (Throwable t : h.errors) {
      h.failures.add("exception: " + t);
    }
    if (!h.failures.isEmpty()) {
      System.err.println("DistributedBenchmark: " + h.failures.size() + " failure(s):");
      for (String f : h.failures) {
        System.err.println("  - " + f);
      }
      return 1;
    }
    log("done");
    return 0;
  }

  /** The parts the options ask for, in order, and the report of them. */
  private void runParts(String uri, DistributedHarness h) throws Exception {
    String redisVersion = infoField(h.admin().info("server"), "redis_version");
    ThroughputRuns throughput = new ThroughputRuns(o, h);
    List<Cell> cells = o.throughput && !o.manyKeyThroughputOnly ? throughput.throughput(uri) : List.of();
    List<ManyKeyThroughput.Cell> manyKeyCells = o.throughput ? throughput.manyKeyThroughput(uri) : List.of();
    List<OverAdmission> oas = o.overAdmission ? new OverAdmissionRuns(o, h).overAdmission(uri) : List.of();
    List<ManyKeys> many = o.manyKeys ? new ManyKeysRuns(o, h).manyKeys(uri) : List.of();
    new DistributedReport(o, h).write(redisVersion, cells, manyKeyCells, oas, many);
  }

  static List<Impl> impls(Pattern only) {
    List<Impl> all = new ArrayList<>(List.of(
        DistributedNodes.sluice(1L),
        DistributedNodes.sluice(null),
        DistributedNodes.sluice(1000L),
        DistributedNodes.sluiceBucket(1L),
        DistributedNodes.sluiceBucket(100L),
        DistributedNodes.bucket4j(false),
        DistributedNodes.bucket4j(true),
        DistributedNodes.redisson(),
        DistributedNodes.inProcess()));
    // exact mode beside a hand-written one-script limiter (issue 17 item 2)
    all.addAll(ExactBaseline.impls());
    List<Impl> out = new ArrayList<>();
    for (Impl i : all) {
      if (only == null || only.matcher(i.label()).find()) {
        out.add(i);
      }
    }
    return out;
  }

  private static void requireLoopback(String uri) throws IOException {
    RedisURI parsed;
    try {
      parsed = RedisURI.create(uri);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("--redis: cannot parse " + uri + ": " + e.getMessage());
    }
    String host = parsed.getHost();
    if (host == null || !InetAddress.getByName(host).isLoopbackAddress()) {
      throw new IllegalArgumentException("--redis: only loopback addresses (127.0.0.0/8, localhost, ::1) are allowed, got "
          + host);
    }
  }
}
