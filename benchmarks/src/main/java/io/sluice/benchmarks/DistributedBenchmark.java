package io.sluice.benchmarks;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.sluice.benchmarks.DistributedNodes.Impl;
import io.sluice.benchmarks.DistributedNodes.Node;
import io.sluice.benchmarks.DistributedNodes.SluiceNode;
import io.sluice.benchmarks.DistributedNodes.Spec;
import io.sluice.node.Ticker;
import io.sluice.sync.spi.StoreKeys;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
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

  enum KeyMode {
    PER_THREAD("own key"), SHARED("shared key");

    final String label;

    KeyMode(String label) {
      this.label = label;
    }
  }

  record Case(int threads, KeyMode keys) {
    String label() {
      return threads + "t " + keys.label;
    }
  }

  /** One measured cell of the throughput table. */
  record Cell(Impl impl, Case c, double seconds, long allowed, long denied, long commands,
      Map<String, Long> commandMix, String stats) {
    long decisions() {
      return allowed + denied;
    }

    double perSecond() {
      return decisions() / seconds;
    }

    double allowedPerSecond() {
      return allowed / seconds;
    }

    double allowedShare() {
      return decisions() == 0 ? 0 : (double) allowed / decisions();
    }

    double commandsPer1000() {
      return decisions() == 0 ? Double.NaN : commands * 1000.0 / decisions();
    }

    double commandsPer1000Allowed() {
      return allowed == 0 ? Double.NaN : commands * 1000.0 / allowed;
    }
  }

  /** One over-admission run. */
  record OverAdmission(Impl impl, boolean burst, long[] admitted, long[] attempts, long late, long commands,
      long storeCalls, Map<String, Long> commandMix, Map<Long, Long> storeCounts, String stats) {
    String label() {
      return impl.label() + (burst ? ", burst at window 1's edge" : "");
    }

    double storeCallsPer1000() {
      return storeCalls < 0 || decisions() == 0 ? Double.NaN : storeCalls * 1000.0 / decisions();
    }

    long decisions() {
      long sum = late;
      for (long a : attempts) {
        sum += a;
      }
      return sum;
    }

    double commandsPer1000() {
      return decisions() == 0 ? Double.NaN : commands * 1000.0 / decisions();
    }
  }

  private final Options o;
  private final List<String> failures = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();
  private final ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
  private RedisCommands<String, String> admin;
  private int runNumber;
  /** The throughput cells on 100,000 keys (see {@link ManyKeyThroughput}). */
  private List<ManyKeyThroughput.Cell> manyKeyCells = List.of();

  private DistributedBenchmark(Options o) {
    this.o = o;
  }

  public static void main(String[] args) {
    int code;
    try {
      code = new DistributedBenchmark(Options.parse(args)).run();
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
    try {
      admin = adminConnection.sync();
      String redisVersion = infoField(admin.info("server"), "redis_version");
      List<Cell> cells = o.throughput && !o.manyKeyThroughputOnly ? throughput(uri) : List.of();
      manyKeyCells = o.throughput ? manyKeyThroughput(uri) : List.of();
      List<OverAdmission> oas = o.overAdmission ? overAdmission(uri) : List.of();
      List<ManyKeys> many = o.manyKeys ? manyKeys(uri) : List.of();
      writeReport(redisVersion, cells, oas, many);
    } finally {
      adminConnection.close();
      adminClient.shutdown(0, 1, TimeUnit.SECONDS);
      if (launcher != null) {
        launcher.close();
      }
    }
    for (Throwable t : errors) {
      failures.add("exception: " + t);
    }
    if (!failures.isEmpty()) {
      System.err.println("DistributedBenchmark: " + failures.size() + " failure(s):");
      for (String f : failures) {
        System.err.println("  - " + f);
      }
      return 1;
    }
    log("done");
    return 0;
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

  // ------------------------------------------------------------------ throughput

  private List<Cell> throughput(String uri) throws InterruptedException {
    List<Cell> cells = new ArrayList<>();
    Spec spec = new Spec(THROUGHPUT_LIMIT, THROUGHPUT_WINDOW, false);
    // JVM warm-up: the first cells of a fresh JVM ran several times slower (Lettuce/Netty paths not yet
    // compiled) although each cell has its own warm-up; one untimed pass over every implementation first
    double warmup = o.quick ? 0.5 : 1.5;
    log("JVM warm-up: every implementation, 2 threads on a shared key, " + warmup + " s each, not reported");
    for (Impl impl : impls(o.only)) {
      Cell ignored = measure(uri, spec, impl, new Case(2, KeyMode.SHARED), 0.25, warmup, "w");
      if (ignored == null) {
        return cells;
      }
    }
    List<Case> cases = new ArrayList<>();
    for (int threads : o.threads) {
      for (KeyMode keys : KeyMode.values()) {
        cases.add(new Case(threads, keys));
      }
    }
    List<Impl> impls = impls(o.only);
    // --interleave: case by case, every implementation in turn, so that the cells a ratio divides are
    // measured seconds apart rather than minutes (on a shared machine the load moves in between)
    int outer = o.interleave ? cases.size() : impls.size();
    int inner = o.interleave ? impls.size() : cases.size();
    for (int i = 0; i < outer; i++) {
      for (int j = 0; j < inner; j++) {
        Impl impl = impls.get(o.interleave ? j : i);
        Case c = cases.get(o.interleave ? i : j);
        Cell cell = measure(uri, spec, impl, c, o.warmupSeconds, o.measureSeconds, "b");
        if (cell != null) {
          cells.add(cell);
          log(String.format(Locale.ROOT, "%-42s %-16s %,14.0f decisions/s  allowed %5.1f%%  %8.1f cmds/1000  %s",
              impl.label(), cell.c().label(), cell.perSecond(), 100 * cell.allowedShare(), cell.commandsPer1000(),
              cell.stats()));
        }
      }
    }
    return cells;
  }

  private Cell measure(String uri, Spec spec, Impl impl, Case c, double warmupSeconds, double measureSeconds,
      String prefixStart) throws InterruptedException {
    String prefix = prefixStart + (++runNumber);
    String where = impl.label() + ", " + c.label();
    Node node;
    try {
      node = impl.factory().create(uri, spec, prefix, 0);
    } catch (Exception e) {
      failures.add(where + ": cannot create the node: " + e);
      e.printStackTrace();
      return null;
    }
    int n = c.threads();
    LongAdder[] allowed = new LongAdder[n];
    LongAdder[] denied = new LongAdder[n];
    Thread[] workers = new Thread[n];
    Throwable[] thrown = new Throwable[n];
    Flag running = new Flag();
    for (int t = 0; t < n; t++) {
      allowed[t] = new LongAdder();
      denied[t] = new LongAdder();
      String key = c.keys() == KeyMode.SHARED ? "shared" : "k" + t;
      LongAdder a = allowed[t];
      LongAdder d = denied[t];
      int index = t;
      workers[t] = new Thread(() -> {
        try {
          while (running.on) {
            if (node.tryAcquire(key)) {
              a.increment();
            } else {
              d.increment();
            }
          }
        } catch (Throwable e) {
          thrown[index] = e;
          running.on = false;
        }
      }, "bench-" + prefix + "-" + t);
      workers[t].setDaemon(true);
    }
    for (Thread w : workers) {
      w.start();
    }
    sleepSeconds(warmupSeconds);
    resetStats();
    long allowed0 = sum(allowed);
    long denied0 = sum(denied);
    long t0 = System.nanoTime();
    sleepSeconds(measureSeconds);
    long t1 = System.nanoTime();
    long allowed1 = sum(allowed);
    long denied1 = sum(denied);
    Map<String, Long> mix = commandStats();
    running.on = false;
    for (Thread w : workers) {
      w.join(10_000);
      if (w.isAlive()) {
        failures.add(where + ": thread " + w.getName() + " still running 10 s after the end (stuck in a call?)");
      }
    }
    String stats = node.stats();
    long swallowed = node.swallowedErrors();
    try {
      node.close();
    } catch (RuntimeException e) {
      failures.add(where + ": close failed: " + e);
    }
    for (Throwable e : thrown) {
      if (e != null) {
        failures.add(where + ": " + e);
        e.printStackTrace();
      }
    }
    if (swallowed > 0) {
      failures.add(where + ": " + swallowed + " store failures inside the implementation (" + stats + ")");
    }
    long allowedCount = allowed1 - allowed0;
    long deniedCount = denied1 - denied0;
    if (allowedCount == 0) {
      failures.add(where + ": no decision allowed in the measured interval (" + deniedCount + " denied)");
    }
    long commands = mix.values().stream().mapToLong(Long::longValue).sum();
    boolean reported = !prefixStart.equals("w");
    if (reported && allowedCount + deniedCount > 0 && allowedCount < 0.9 * (allowedCount + deniedCount)) {
      notes.add(String.format(Locale.ROOT, "%s: only %.1f%% of decisions allowed although the limit (%,d per window "
          + "and key) was far away: the denials come from the implementation, not from the limit", where,
          100.0 * allowedCount / (allowedCount + deniedCount), THROUGHPUT_LIMIT));
    }
    if (!impl.usesRedis() && commands > 0) {
      notes.add(where + ": " + commands + " Redis commands seen while an in-process node ran: " + mix);
    }
    return new Cell(impl, c, (t1 - t0) / 1e9, allowedCount, deniedCount, commands, mix, stats);
  }

  private static final class Flag {
    volatile boolean on = true;
  }

  private static long sum(LongAdder[] adders) {
    long s = 0;
    for (LongAdder a : adders) {
      s += a.sum();
    }
    return s;
  }

  /** One node on 100,000 keys, Sluice beside the in-process peers: {@link ManyKeyThroughput}. */
  private List<ManyKeyThroughput.Cell> manyKeyThroughput(String uri) throws InterruptedException {
    ManyKeyThroughput.Harness harness = new ManyKeyThroughput.Harness() {
      @Override
      public void resetStats() {
        DistributedBenchmark.this.resetStats();
      }

      @Override
      public long commands() {
        return commandStats().values().stream().mapToLong(Long::longValue).sum();
      }

      @Override
      public void failure(String message) {
        failures.add(message);
      }
    };
    return new ManyKeyThroughput(harness, o.warmupSeconds, o.measureSeconds, o.threads)
        .run(uri, new Spec(THROUGHPUT_LIMIT, THROUGHPUT_WINDOW, false), ManyKeyThroughput.impls(o.only));
  }

  // ------------------------------------------------------------------ over-admission

  private List<OverAdmission> overAdmission(String uri) throws InterruptedException {
    List<OverAdmission> out = new ArrayList<>();
    Spec spec = new Spec(OA_LIMIT, OA_WINDOW, true);
    List<Impl> impls = new ArrayList<>(List.of(DistributedNodes.sluice(null), DistributedNodes.sluice(1L),
        DistributedNodes.bucket4j(true)));
    if (o.only != null) {
      impls.removeIf(i -> !o.only.matcher(i.label()).find());
    }
    for (boolean burst : new boolean[] {false, true}) {
     for (Impl impl : impls) {
      OverAdmission r = overAdmissionRun(uri, spec, impl, burst);
      if (r != null) {
        out.add(r);
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "over-admission %-60s", r.label()));
        for (int w = 0; w < r.admitted().length; w++) {
          line.append(String.format(Locale.ROOT, "  w%d %,d (%.2f%%)", w + 1, r.admitted()[w],
              100.0 * r.admitted()[w] / OA_LIMIT));
        }
        line.append(String.format(Locale.ROOT, "  %.1f cmds/1000  %s", r.commandsPer1000(), r.stats()));
        log(line.toString());
      }
     }
    }
    return out;
  }

  /**
   * One run: each node's paced thread at its part of the demand, and with {@code burst} also
   * {@link #OA_BURST_THREADS} threads per node deciding flat out for the first {@link #OA_BURST} of
   * window 1, all released at its first instant.
   */
  private OverAdmission overAdmissionRun(String uri, Spec spec, Impl impl, boolean burst) throws InterruptedException {
    String prefix = "oa" + (++runNumber);
    String where = "over-admission, " + impl.label() + (burst ? ", burst" : "");
    long windowNanos = spec.window().toNanos();
    List<Node> nodes = createNodes(uri, spec, impl, prefix, where);
    if (nodes == null) {
      return null;
    }
    // start at a window edge at least 2 s away: every Sluice node has heartbeated and seen the others
    long startWindow = Math.floorDiv(Ticker.system().read(), windowNanos) + 3;
    long start = startWindow * windowNanos;
    long end = start + OA_WINDOWS * windowNanos;
    long perNodeRate = Math.round(OA_DEMAND * OA_LIMIT * 1e9 / windowNanos / OA_NODES); // per second
    long period = 1_000_000_000L / perNodeRate;
    long[][] admitted = new long[OA_NODES][OA_WINDOWS];
    long[][] attempts = new long[OA_NODES][OA_WINDOWS];
    long[] late = new long[OA_NODES];
    int burstThreads = burst ? OA_BURST_THREADS : 0;
    Throwable[] thrown = new Throwable[OA_NODES * (1 + burstThreads)];
    Thread[] workers = new Thread[OA_NODES * (1 + burstThreads)];
    long[][] burstAdmitted = new long[OA_NODES * burstThreads][OA_WINDOWS];
    long[][] burstAttempts = new long[OA_NODES * burstThreads][OA_WINDOWS];
    for (int b = 0; b < OA_NODES * burstThreads; b++) {
      Node node = nodes.get(b % OA_NODES);
      int index = b;
      long burstEnd = start + OA_BURST.toNanos();
      workers[OA_NODES + b] = new Thread(() -> {
        try {
          waitUntil(start);
          for (long now; (now = Ticker.system().read()) < burstEnd; ) {
            int w = (int) (Math.floorDiv(now, windowNanos) - startWindow);
            boolean ok = node.tryAcquire("hot");
            burstAttempts[index][w]++;
            if (ok) {
              burstAdmitted[index][w]++;
            }
          }
        } catch (Throwable e) {
          thrown[OA_NODES + index] = e;
        }
      }, "oa-burst-" + prefix + "-" + b);
      workers[OA_NODES + b].setDaemon(true);
    }
    for (int n = 0; n < OA_NODES; n++) {
      Node node = nodes.get(n);
      int index = n;
      long offset = n * period / OA_NODES;
      workers[n] = new Thread(() -> {
        try {
          for (long i = 0; ; i++) {
            long at = start + offset + i * period;
            if (at >= end) {
              break;
            }
            waitUntil(at);
            long now = Ticker.system().read();
            long w = Math.floorDiv(now, windowNanos) - startWindow;
            boolean ok = node.tryAcquire("hot");
            if (w >= OA_WINDOWS) {
              late[index]++;
            } else {
              attempts[index][(int) w]++;
              if (ok) {
                admitted[index][(int) w]++;
              }
            }
          }
        } catch (Throwable e) {
          thrown[index] = e;
        }
      }, "oa-" + prefix + "-" + n);
      workers[n].setDaemon(true);
    }
    for (Thread w : workers) {
      w.start();
    }
    waitUntil(start - 50_000_000L);
    resetStats();
    long callsBefore = storeCalls(nodes);
    joinWorkers(workers, OA_WINDOWS * windowNanos, where);
    Map<String, Long> mix = commandStats();
    StringBuilder stats = new StringBuilder();
    long swallowed = 0;
    long callsAfter = storeCalls(nodes);
    long storeCalls = callsBefore < 0 || callsAfter < 0 ? -1 : callsAfter - callsBefore;
    for (Node node : nodes) {
      String s = node.stats();
      if (!s.isEmpty() && stats.length() == 0) {
        stats.append("node-0: ").append(s);
      }
      swallowed += node.swallowedErrors();
    }
    closeNodes(nodes, where);
    Map<Long, Long> storeCounts = new TreeMap<>();
    if (nodes.get(0) instanceof SluiceNode) {
      // what the store counted per window (the flush and exact scripts keep the latest one or two)
      String key = new String(StoreKeys.counterKey(prefix, "bench", "hot"), StandardCharsets.UTF_8);
      for (Map.Entry<String, String> e : admin.hgetall(key).entrySet()) {
        try {
          long w = Long.parseLong(e.getKey()) - startWindow;
          storeCounts.put(w, Long.parseLong(e.getValue()));
        } catch (NumberFormatException ignored) {
          // not a window field
        }
      }
    }
    reportFailures(thrown, swallowed, where);
    long[] admittedPerWindow = new long[OA_WINDOWS];
    long[] attemptsPerWindow = new long[OA_WINDOWS];
    long lateTotal = 0;
    for (int n = 0; n < OA_NODES; n++) {
      for (int w = 0; w < OA_WINDOWS; w++) {
        admittedPerWindow[w] += admitted[n][w];
        attemptsPerWindow[w] += attempts[n][w];
      }
      lateTotal += late[n];
    }
    for (int b = 0; b < OA_NODES * burstThreads; b++) {
      for (int w = 0; w < OA_WINDOWS; w++) {
        admittedPerWindow[w] += burstAdmitted[b][w];
        attemptsPerWindow[w] += burstAttempts[b][w];
      }
    }
    long commands = mix.values().stream().mapToLong(Long::longValue).sum();
    return new OverAdmission(impl, burst, admittedPerWindow, attemptsPerWindow, lateTotal, commands, storeCalls, mix,
        storeCounts, stats.toString());
  }

  // ------------------------------------------------------------------ many keys

  /** Many-key runs: the length of each, in windows of {@link #OA_WINDOW}. */
  static final int MANY_KEYS_WINDOWS = 3;
  /** A request decided this long after its time is counted as late (the node's thread fell behind). */
  static final long LATE_NANOS = 20_000_000L;

  /** One many-key run: an implementation on a profile's traffic, scored against the exact algorithm. */
  record ManyKeys(Impl impl, ManyKeysTraffic.Profile profile, ManyKeysTraffic.Score score, long late, long commands,
      long storeCalls, Map<String, Long> commandMix) {
    double commandsPer1000() {
      return score.requests() == 0 ? Double.NaN : commands * 1000.0 / score.requests();
    }

    double storeCallsPer1000() {
      return storeCalls < 0 || score.requests() == 0 ? Double.NaN : storeCalls * 1000.0 / score.requests();
    }
  }

  private List<ManyKeys> manyKeys(String uri) throws InterruptedException {
    List<ManyKeys> out = new ArrayList<>();
    // (Sluice's token buckets last: scored against the exact bucket, see ManyKeysTraffic#scoreBucket)
    List<Impl> impls = new ArrayList<>(List.of(DistributedNodes.sluice(null), DistributedNodes.sluice(1L),
        DistributedNodes.bucket4j(true), DistributedNodes.bucket4j(false), DistributedNodes.sluiceBucket(100L),
        DistributedNodes.sluiceBucket(1L)));
    if (o.only != null) {
      impls.removeIf(i -> !o.only.matcher(i.label()).find());
    }
    long seed = 20_261_201L;
    for (ManyKeysTraffic.Profile p : ManyKeysTraffic.PROFILES) {
      ManyKeysTraffic traffic = ManyKeysTraffic.of(p, OA_NODES, OA_WINDOW.toNanos(), MANY_KEYS_WINDOWS, seed++);
      for (Impl impl : impls) {
        ManyKeys r = manyKeysRun(uri, impl, traffic);
        if (r != null) {
          out.add(r);
          ManyKeysTraffic.Score s = r.score();
          log(String.format(Locale.ROOT, "many keys %-14s %-50s %,d requests: admitted %.2f%% of exact, false denials"
              + " %.3f%% (below half %d), worst over %d (%d key-windows), %.0f cmds/1000, late %d", p.name(),
              impl.label(), s.requests(), s.admittedVsExactPercent(), s.falseDenialPercent(), s.falseDenialsBelowHalf(),
              s.worstOverPermits(), s.keyWindowsOver(), r.commandsPer1000(), r.late()));
        }
      }
    }
    return out;
  }

  /** One run: each node's thread decides its requests at their times, from a window edge on. */
  private ManyKeys manyKeysRun(String uri, Impl impl, ManyKeysTraffic traffic) throws InterruptedException {
    String prefix = "mk" + (++runNumber);
    String where = "many keys, " + traffic.profile.name() + ", " + impl.label();
    Spec spec = new Spec(traffic.profile.limit(), OA_WINDOW, true);
    List<Node> nodes = createNodes(uri, spec, impl, prefix, where);
    if (nodes == null) {
      return null;
    }
    long windowNanos = OA_WINDOW.toNanos();
    long start = (Math.floorDiv(Ticker.system().read(), windowNanos) + 3) * windowNanos;
    boolean[] allowed = new boolean[traffic.requests.size()];
    int[] decidedIn = new int[traffic.requests.size()];
    long[] decidedAtNanos = new long[traffic.requests.size()];
    long[] late = new long[OA_NODES];
    Throwable[] thrown = new Throwable[OA_NODES];
    Thread[] workers = new Thread[OA_NODES];
    for (int n = 0; n < OA_NODES; n++) {
      Node node = nodes.get(n);
      int index = n;
      int[] mine = traffic.requestsOf(n);
      workers[n] = new Thread(() -> {
        try {
          for (int i : mine) {
            ManyKeysTraffic.Request r = traffic.requests.get(i);
            long at = start + r.atNanos();
            waitUntil(at);
            long decidedAt = Ticker.system().read();
            allowed[i] = node.tryAcquire(ManyKeysTraffic.key(r.key()));
            decidedIn[i] = (int) Math.floorDiv(decidedAt - start, windowNanos);
            decidedAtNanos[i] = decidedAt - start;
            if (decidedAt - at > LATE_NANOS) {
              late[index]++;
            }
          }
        } catch (Throwable e) {
          thrown[index] = e;
        }
      }, "mk-" + prefix + "-" + n);
      workers[n].setDaemon(true);
    }
    for (Thread w : workers) {
      w.start();
    }
    waitUntil(start - 50_000_000L);
    resetStats();
    long callsBefore = storeCalls(nodes);
    joinWorkers(workers, MANY_KEYS_WINDOWS * windowNanos, where);
    Map<String, Long> mix = commandStats();
    long callsAfter = storeCalls(nodes);
    long swallowed = 0;
    for (Node node : nodes) {
      swallowed += node.swallowedErrors();
    }
    closeNodes(nodes, where);
    reportFailures(thrown, swallowed, where);
    long lateTotal = 0;
    for (long l : late) {
      lateTotal += l;
    }
    long commands = mix.values().stream().mapToLong(Long::longValue).sum();
    long storeCalls = callsBefore < 0 || callsAfter < 0 ? -1 : callsAfter - callsBefore;
    ManyKeysTraffic.Score score = impl.family().equals(DistributedNodes.SLUICE_BUCKET)
        ? traffic.scoreBucket(allowed, decidedIn, decidedAtNanos) : traffic.score(allowed, decidedIn);
    return new ManyKeys(impl, traffic.profile, score, lateTotal, commands, storeCalls, mix);
  }

  private static void manyKeysReport(StringBuilder md, List<ManyKeys> many) {
    md.append("\n## Many keys: sparse keys and small limits, 4 nodes\n\n");
    md.append("Fixed windows of ").append(OA_WINDOW.toSeconds()).append(" s, ").append(MANY_KEYS_WINDOWS)
        .append(" windows from a window edge; ").append(OA_NODES).append(" nodes (one thread each, its own Redis"
            + " connection), each request sent to a random node at its time; every implementation gets the very same"
            + " requests (seeded). The exact algorithm decides them in schedule order, each in the window the node decided"
            + " it in: a request is admitted while its key's count in the window stays within the limit. *False denials*: requests the exact algorithm admitted"
            + " and the implementation denied, in % of all requests; *below half*: of those, the ones on a key-window"
            + " whose whole demand stays within half the limit. *Over*: permits admitted beyond the limit, per key and"
            + " window. *Late*: requests a node's thread decided more than 20 ms after their time (a loaded machine)."
            + " Sluice's token-bucket rows are another limit on the same traffic: a bucket of the limit refilled at"
            + " the limit per window (greedy), scored against the exact bucket deciding the same requests at the"
            + " moments the nodes decided them; *over* is then the deepest a key's admissions took the exact bucket"
            + " into debt (tokens spent it never had), in permits, and the key-windows in which that debt grew.\n\n");
    String profile = null;
    for (ManyKeys r : many) {
      if (!r.profile().name().equals(profile)) {
        md.append(profile == null ? "" : "\n").append("### ").append(r.profile().name()).append(": ")
            .append(r.profile().description()).append("\n\n");
        profile = r.profile().name();
        md.append("| implementation | requests | admitted vs exact | false denials | below half | worst over (permits)"
            + " | key-windows over / with requests | Redis commands / 1,000 decisions | store calls / 1,000 | late |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
      }
      ManyKeysTraffic.Score s = r.score();
      md.append(String.format(Locale.ROOT, "| %s | %,d | %.2f%% | %.3f%% | %,d | %,d | %,d / %,d | %,.0f | %s | %,d |\n",
          r.impl().label(), s.requests(), s.admittedVsExactPercent(), s.falseDenialPercent(), s.falseDenialsBelowHalf(),
          s.worstOverPermits(), s.keyWindowsOver(), s.keyWindows(), r.commandsPer1000(),
          Double.isNaN(r.storeCallsPer1000()) ? "-" : String.format(Locale.ROOT, "%,.0f", r.storeCallsPer1000()), r.late()));
    }
    md.append("\nCommand mix:\n\n");
    for (ManyKeys r : many) {
      md.append("- ").append(r.profile().name()).append(", ").append(r.impl().label()).append(": ")
          .append(r.commandMix()).append("\n");
    }
  }

  /** {@link #OA_NODES} nodes of an implementation, or null (the failure recorded) when one cannot be made. */
  private List<Node> createNodes(String uri, Spec spec, Impl impl, String prefix, String where) {
    List<Node> nodes = new ArrayList<>();
    try {
      for (int i = 0; i < OA_NODES; i++) {
        nodes.add(impl.factory().create(uri, spec, prefix, i));
      }
      return nodes;
    } catch (Exception e) {
      failures.add(where + ": cannot create the nodes: " + e);
      e.printStackTrace();
      nodes.forEach(DistributedNodes.Node::close);
      return null;
    }
  }

  /** Waits for a run's threads, {@code runNanos} and 15 s more each, recording those still running. */
  private void joinWorkers(Thread[] workers, long runNanos, String where) throws InterruptedException {
    for (Thread w : workers) {
      w.join(runNanos / 1_000_000 + 15_000);
      if (w.isAlive()) {
        failures.add(where + ": thread " + w.getName() + " still running 15 s after the end");
      }
    }
  }

  private void closeNodes(List<Node> nodes, String where) {
    for (Node node : nodes) {
      try {
        node.close();
      } catch (RuntimeException e) {
        failures.add(where + ": close failed: " + e);
      }
    }
  }

  /** Records what a run's threads threw and the store failures the implementations swallowed. */
  private void reportFailures(Throwable[] thrown, long swallowed, String where) {
    for (Throwable e : thrown) {
      if (e != null) {
        failures.add(where + ": " + e);
        e.printStackTrace();
      }
    }
    if (swallowed > 0) {
      failures.add(where + ": " + swallowed + " store failures inside the implementation");
    }
  }

  /** The nodes' store calls so far, or -1 if one of them does not count them. */
  private static long storeCalls(List<Node> nodes) {
    long sum = 0;
    for (Node node : nodes) {
      if (node.storeCalls() < 0) {
        return -1;
      }
      sum += node.storeCalls();
    }
    return sum;
  }

  private static void waitUntil(long epochNanos) {
    for (long d; (d = epochNanos - Ticker.system().read()) > 0; ) {
      LockSupport.parkNanos(d);
    }
  }

  // ------------------------------------------------------------------ Redis stats

  private void resetStats() {
    admin.configResetstat();
  }

  /** calls= per command since the last reset, without this harness's own INFO and CONFIG calls. */
  private Map<String, Long> commandStats() {
    Map<String, Long> out = new TreeMap<>();
    for (String line : admin.info("commandstats").split("\r?\n")) {
      if (!line.startsWith("cmdstat_")) {
        continue;
      }
      int colon = line.indexOf(':');
      String name = line.substring("cmdstat_".length(), colon);
      if (name.equals("info") || name.equals("config") || name.startsWith("config|")) {
        continue;
      }
      for (String field : line.substring(colon + 1).split(",")) {
        if (field.startsWith("calls=")) {
          out.put(name, Long.parseLong(field.substring("calls=".length())));
        }
      }
    }
    return out;
  }

  private static String infoField(String info, String field) {
    for (String line : info.split("\r?\n")) {
      if (line.startsWith(field + ":")) {
        return line.substring(field.length() + 1).trim();
      }
    }
    return "?";
  }

  // ------------------------------------------------------------------ report

  private void writeReport(String redisVersion, List<Cell> cells, List<OverAdmission> oas, List<ManyKeys> many)
      throws IOException {
    Properties versions = new Properties();
    try (InputStream in = DistributedBenchmark.class.getResourceAsStream("/distributed-versions.properties")) {
      if (in != null) {
        versions.load(in);
      }
    }
    StringBuilder md = new StringBuilder();
    md.append("# Distributed decisions, side by side\n\n");
    md.append("Written by `benchmarks/run-distributed.sh` (`io.sluice.benchmarks.DistributedBenchmark`)")
        .append(o.quick ? ", QUICK smoke run" : "").append(", ")
        .append(ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME)).append(".\n\n");
    md.append("- machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, Java ")
        .append(System.getProperty("java.version")).append(" (").append(System.getProperty("java.vm.name"))
        .append("), redis-server ").append(redisVersion).append(" on loopback, started by the harness")
        .append(o.redis == null ? "" : " (no: given with --redis)").append("\n");
    md.append("- versions: Sluice ").append(versions.getProperty("sluice", "?"))
        .append(", Bucket4j `bucket4j_jdk17-lettuce` ").append(versions.getProperty("bucket4j", "?"))
        .append(", Redisson ").append(versions.getProperty("redisson", "?"))
        .append(", Lettuce ").append(versions.getProperty("lettuce", "?"))
        .append(", Netty ").append(versions.getProperty("netty", "?")).append("\n");
    md.append("- each cell: ").append(o.warmupSeconds).append(" s warm-up + ").append(o.measureSeconds)
        .append(" s measured; one node (one limiter, its own Redis connection), all threads calling "
            + "`tryAcquire` in a loop; a fresh node and fresh Redis keys per cell; before the first cell, one untimed "
            + "JVM warm-up pass over every implementation (2 threads, shared key)\n");
    md.append("- throughput limits: ").append(String.format(Locale.ROOT, "%,d", THROUGHPUT_LIMIT))
        .append(" per ").append(THROUGHPUT_WINDOW.toSeconds()).append(" s window per key, so that runs are "
            + "(nearly) all allowed: Sluice sliding window counter; Bucket4j capacity = limit, greedy refill of the "
            + "limit per window; Redisson `trySetRate(OVERALL, limit, window)`; denials below come from the "
            + "implementations' own mechanics, not from the limit (column *allowed %*)\n");
    md.append("- Bucket4j delaying: `Optimizations.delaying(new DelayParameters(")
        .append(DistributedNodes.BUCKET4J_DELAY_TOKENS).append(", ").append(DistributedNodes.BUCKET4J_DELAY_TIME.toMillis())
        .append(" ms))` (Sluice's default batch and sync interval); compare-and-swap `LettuceBasedProxyManager`, "
            + "one `BucketProxy` per key and node\n");
    md.append("- Redis commands: `INFO commandstats` (sum of `calls=` over every `cmdstat_*`, commands run inside "
        + "Lua scripts included), reset with `CONFIG RESETSTAT` before the measured interval; the harness's own "
        + "`INFO`/`CONFIG` calls are left out\n\n");

    if (!cells.isEmpty()) {
      List<Case> cases = new ArrayList<>();
      Map<String, Map<Case, Cell>> byImpl = new LinkedHashMap<>();
      for (Cell c : cells) {
        if (!cases.contains(c.c())) {
          cases.add(c.c());
        }
        byImpl.computeIfAbsent(c.impl().label(), k -> new LinkedHashMap<>()).put(c.c(), c);
      }
      md.append("## Decisions per second, one node\n\n");
      table(md, cases, byImpl, cell -> String.format(Locale.ROOT, "%,.0f", cell.perSecond()));
      md.append("\n### Allowed decisions (% of all decisions in the cell)\n\n");
      table(md, cases, byImpl, cell -> String.format(Locale.ROOT, "%.1f%%", 100 * cell.allowedShare()));
      md.append("\n### Allowed decisions per second\n\n");
      table(md, cases, byImpl, cell -> String.format(Locale.ROOT, "%,.0f", cell.allowedPerSecond()));

      Map<Case, Cell> delaying = null;
      Map<Case, Cell> ceiling = null;
      for (Map.Entry<String, Map<Case, Cell>> e : byImpl.entrySet()) {
        if (e.getKey().startsWith("Bucket4j") && e.getKey().contains("delaying")) {
          delaying = e.getValue();
        }
        if (e.getKey().startsWith("Sluice in-process")) {
          ceiling = e.getValue();
        }
      }
      if (delaying != null) {
        md.append("\n## Ratios: Sluice / Bucket4j+delaying (target >= 2.0x in every case)\n\n");
        md.append("Decisions per second; in brackets, allowed decisions per second.\n\n");
        ratioTable(md, cases, byImpl, delaying, false);
      }
      if (ceiling != null) {
        md.append("\n## Ratios: Sluice over Redis / the same node in-process (target >= 80%)\n\n");
        md.append("Decisions per second; in brackets, allowed decisions per second.\n\n");
        ratioTable(md, cases, byImpl, ceiling, true);
      }
      ExactBaseline.report(md, cases, byImpl);
      md.append("\n## Redis commands per 1,000 decisions\n\n");
      md.append("Targets: Sluice default batching <= 20; peers per DESIGN.md: Bucket4j+delaying ~40, plain CAS ~4,000, "
          + "Redisson ~10,000.\n\n");
      table(md, cases, byImpl, cell -> cell.impl().usesRedis() || cell.commands() > 0
          ? String.format(Locale.ROOT, "%,.1f", cell.commandsPer1000()) : "-");
      md.append("\n### Redis commands per 1,000 allowed decisions\n\n");
      table(md, cases, byImpl, cell -> cell.impl().usesRedis() || cell.commands() > 0
          ? String.format(Locale.ROOT, "%,.1f", cell.commandsPer1000Allowed()) : "-");
      md.append("\n### Command mix (calls summed over all cells of a row, per 1,000 decisions)\n\n");
      md.append("| implementation | commands |\n|---|---|\n");
      for (Map.Entry<String, Map<Case, Cell>> e : byImpl.entrySet()) {
        Map<String, Long> total = new TreeMap<>();
        long decisions = 0;
        for (Cell c : e.getValue().values()) {
          decisions += c.decisions();
          c.commandMix().forEach((k, v) -> total.merge(k, v, Long::sum));
        }
        StringBuilder s = new StringBuilder();
        long d = decisions;
        total.entrySet().stream().sorted((a, b) -> Long.compare(b.getValue(), a.getValue())).forEach(x -> {
          if (s.length() > 0) {
            s.append(", ");
          }
          s.append(String.format(Locale.ROOT, "`%s` %.2f", x.getKey(), x.getValue() * 1000.0 / Math.max(1, d)));
        });
        md.append("| ").append(e.getKey()).append(" | ").append(s.length() == 0 ? "none" : s).append(" |\n");
      }
      md.append("\n### Implementation counters at the end of each cell\n\n");
      md.append("| implementation | case | counters |\n|---|---|---|\n");
      for (Cell c : cells) {
        if (!c.stats().isEmpty()) {
          md.append("| ").append(c.impl().label()).append(" | ").append(c.c().label()).append(" | ")
              .append(c.stats()).append(" |\n");
        }
      }
      batchOneNote(md, byImpl);
    }

    ManyKeyThroughput.report(md, manyKeyCells, o.warmupSeconds, o.measureSeconds);

    if (!oas.isEmpty()) {
      md.append("\n## Over-admission: ").append(OA_NODES).append(" nodes, one key, demand ")
          .append(String.format(Locale.ROOT, "%.0fx", OA_DEMAND)).append(" the limit\n\n");
      md.append(String.format(Locale.ROOT, "Limit %,d per %d s window (fixed windows aligned to the epoch; Bucket4j: "
              + "a bucket of %,d tokens refilled whole at every window start, `refillIntervallyAligned`, so that an exact "
              + "bucket admits exactly the limit per window). %d limiter instances, each with its own Redis "
              + "connection, one paced thread each: %,d requests/s per node, evenly staggered, for %d windows starting "
              + "at a window edge (window 1 is the first budget). Rows *burst at window 1's edge* add the synchronized "
              + "burst: %d more threads per node, released together at window 1's first instant, deciding flat out "
              + "for %d ms. Admitted per window as %% of the limit; target for Sluice default batching: <= 100.5%% "
              + "in every window, at <= 20 store calls per 1,000 decisions (paced rows; Sluice's own count of its "
              + "store calls, flushes and node-registry heartbeats, during the measured windows).%n%n",
          OA_LIMIT, OA_WINDOW.toSeconds(), OA_LIMIT, OA_NODES,
          Math.round(OA_DEMAND * OA_LIMIT * 1e9 / OA_WINDOW.toNanos() / OA_NODES), OA_WINDOWS, OA_BURST_THREADS,
          OA_BURST.toMillis()));
      md.append("| implementation |");
      for (int w = 1; w <= OA_WINDOWS; w++) {
        md.append(" window ").append(w).append(" |");
      }
      md.append(" worst over-admission | store calls / 1,000 decisions | Redis commands / 1,000 decisions | requests per window | store's count (windows kept) |\n|---|");
      for (int w = 0; w < OA_WINDOWS + 5; w++) {
        md.append("---|");
      }
      md.append("\n");
      for (OverAdmission r : oas) {
        md.append("| ").append(r.label()).append(" |");
        double worst = Double.NEGATIVE_INFINITY;
        for (int w = 0; w < OA_WINDOWS; w++) {
          double pct = 100.0 * r.admitted()[w] / OA_LIMIT;
          worst = Math.max(worst, pct - 100);
          md.append(String.format(Locale.ROOT, " %,d (%.2f%%) |", r.admitted()[w], pct));
        }
        md.append(String.format(Locale.ROOT, " %+.2f%% of the limit | %s | %.1f |", worst,
            Double.isNaN(r.storeCallsPer1000()) ? "-" : String.format(Locale.ROOT, "%.1f", r.storeCallsPer1000()),
            r.commandsPer1000()));
        StringBuilder att = new StringBuilder();
        for (long a : r.attempts()) {
          att.append(att.length() == 0 ? "" : " / ").append(String.format(Locale.ROOT, "%,d", a));
        }
        md.append(' ').append(att).append(r.late() > 0 ? " (+" + r.late() + " late)" : "").append(" |");
        StringBuilder store = new StringBuilder();
        r.storeCounts().forEach((w, v) -> store.append(store.length() == 0 ? "" : ", ")
            .append("w").append(w + 1).append(w >= 0 && w < OA_WINDOWS ? "" : " (after the run)").append(String.format(Locale.ROOT, " %,d", v)));
        md.append(' ').append(store.length() == 0 ? "-" : store).append(" |\n");
      }
      md.append("\nCommand mix and node counters:\n\n");
      for (OverAdmission r : oas) {
        md.append("- ").append(r.label()).append(": ").append(r.commandMix());
        if (!r.stats().isEmpty()) {
          md.append("; ").append(r.stats());
        }
        md.append("\n");
      }
    }

    if (!many.isEmpty()) {
      manyKeysReport(md, many);
    }

    if (!notes.isEmpty() || !failures.isEmpty() || !errors.isEmpty()) {
      md.append("\n## Notes and failures\n\n");
      for (String n : notes) {
        md.append("- note: ").append(n).append("\n");
      }
      for (String f : failures) {
        md.append("- FAILURE: ").append(f).append("\n");
      }
    }

    Path out = Path.of(o.out);
    if (out.getParent() != null) {
      Files.createDirectories(out.getParent());
    }
    Files.writeString(out, md.toString(), StandardCharsets.UTF_8);
    log("wrote " + out);
    writeCsv(cells, oas);
  }

  /** Says whether batch 1 ran as exact mode (one script call per decision) or through batching. */
  private static void batchOneNote(StringBuilder md, Map<String, Map<Case, Cell>> byImpl) {
    for (Map.Entry<String, Map<Case, Cell>> e : byImpl.entrySet()) {
      if (!e.getKey().contains("batch 1)")) {
        continue;
      }
      long evals = 0;
      long decisions = 0;
      for (Cell c : e.getValue().values()) {
        evals += c.commandMix().getOrDefault("evalsha", 0L) + c.commandMix().getOrDefault("eval", 0L);
        decisions += c.decisions();
      }
      double perDecision = decisions == 0 ? 0 : (double) evals / decisions;
      md.append(String.format(Locale.ROOT, "%nSluice batch 1 made %.3f script calls (EVALSHA/EVAL) per decision: %s.%n",
          perDecision, perDecision > 0.9 ? "exact mode, one store script per decision"
              : "NOT one per decision: batch 1 still went through batching"));
    }
  }

  private interface CellFormat {
    String format(Cell c);
  }

  /** A table's header row and alignment row: the first column, then one per case. */
  static void header(StringBuilder md, String first, List<Case> cases) {
    md.append("| ").append(first).append(" |");
    for (Case c : cases) {
      md.append(' ').append(c.label()).append(" |");
    }
    md.append("\n|---|");
    for (int i = 0; i < cases.size(); i++) {
      md.append("---:|");
    }
    md.append("\n");
  }

  private static void table(StringBuilder md, List<Case> cases, Map<String, Map<Case, Cell>> byImpl, CellFormat f) {
    header(md, "implementation", cases);
    for (Map.Entry<String, Map<Case, Cell>> e : byImpl.entrySet()) {
      md.append("| ").append(e.getKey()).append(" |");
      for (Case c : cases) {
        Cell cell = e.getValue().get(c);
        md.append(' ').append(cell == null ? "n/a" : f.format(cell)).append(" |");
      }
      md.append("\n");
    }
  }

  private static void ratioTable(StringBuilder md, List<Case> cases, Map<String, Map<Case, Cell>> byImpl,
      Map<Case, Cell> base, boolean percent) {
    header(md, "Sluice setting", cases);
    for (Map.Entry<String, Map<Case, Cell>> e : byImpl.entrySet()) {
      if (!e.getKey().startsWith("Sluice (")) {
        continue;
      }
      md.append("| ").append(e.getKey()).append(" |");
      for (Case c : cases) {
        Cell cell = e.getValue().get(c);
        Cell b = base.get(c);
        if (cell == null || b == null || b.perSecond() == 0) {
          md.append(" n/a |");
          continue;
        }
        double r = cell.perSecond() / b.perSecond();
        double ra = b.allowedPerSecond() == 0 ? Double.NaN : cell.allowedPerSecond() / b.allowedPerSecond();
        md.append(percent ? String.format(Locale.ROOT, " %.1f%% (%.1f%%) |", 100 * r, 100 * ra)
            : String.format(Locale.ROOT, " %.2fx (%.2fx) |", r, ra));
      }
      md.append("\n");
    }
  }

  private void writeCsv(List<Cell> cells, List<OverAdmission> oas) throws IOException {
    StringBuilder csv = new StringBuilder();
    csv.append("kind,implementation,setting,threads,keys,seconds,decisions,allowed,denied,decisions_per_s,"
        + "allowed_per_s,allowed_pct,redis_commands,commands_per_1000,command_mix,counters\n");
    for (Cell c : cells) {
      csv.append(String.format(Locale.ROOT, "throughput,%s,%s,%d,%s,%.3f,%d,%d,%d,%.0f,%.0f,%.2f,%d,%.2f,%s,%s%n",
          csv(c.impl().family()), csv(c.impl().setting()), c.c().threads(),
          c.c().keys() == KeyMode.SHARED ? "shared" : "per-thread", c.seconds(), c.decisions(), c.allowed(),
          c.denied(), c.perSecond(), c.allowedPerSecond(), 100 * c.allowedShare(), c.commands(),
          c.commandsPer1000(), csv(mixText(c.commandMix())), csv(c.stats())));
    }
    for (OverAdmission r : oas) {
      for (int w = 0; w < r.admitted().length; w++) {
        csv.append(String.format(Locale.ROOT, "%s,%s,%s,%d,window %d of limit %d,%.3f,%d,%d,%d,,,%.2f,%d,%.2f,%s,%s%n",
            r.burst() ? "over-admission-burst" : "over-admission",
            csv(r.impl().family()), csv(r.impl().setting()), OA_NODES, w + 1, OA_LIMIT,
            OA_WINDOW.toNanos() / 1e9, r.attempts()[w], r.admitted()[w], r.attempts()[w] - r.admitted()[w],
            100.0 * r.admitted()[w] / OA_LIMIT, r.commands(), r.commandsPer1000(), csv(mixText(r.commandMix())),
            csv(r.stats())));
      }
    }
    Path out = Path.of(o.csv);
    if (out.getParent() != null) {
      Files.createDirectories(out.getParent());
    }
    Files.writeString(out, csv.toString(), StandardCharsets.UTF_8);
    log("wrote " + out);
  }

  private static String mixText(Map<String, Long> mix) {
    StringBuilder s = new StringBuilder();
    mix.forEach((k, v) -> s.append(s.length() == 0 ? "" : ";").append(k).append('=').append(v));
    return s.toString();
  }

  private static String csv(String s) {
    if (s.contains(",") || s.contains("\"") || s.contains("\n")) {
      return '"' + s.replace("\"", "\"\"") + '"';
    }
    return s;
  }

  // ------------------------------------------------------------------ plumbing

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

  private static void sleepSeconds(double seconds) throws InterruptedException {
    long until = System.nanoTime() + (long) (seconds * 1e9);
    for (long d; (d = until - System.nanoTime()) > 0; ) {
      TimeUnit.NANOSECONDS.sleep(d);
    }
  }

  private static void log(String s) {
    PrintStream out = System.out;
    out.println("[distributed] " + s);
  }

  /** Command-line options. */
  static final class Options {
    String redis;
    String redisServer = "redis-server";
    String out = "benchmarks/results/distributed.md";
    String csv = "benchmarks/results/distributed.csv";
    double warmupSeconds = 2;
    double measureSeconds = 3;
    int[] threads = {1, 2, 8};
    Pattern only;
    boolean quick;
    boolean throughput = true;
    /** Of the throughput runs, only those on 100,000 keys ({@link ManyKeyThroughput}). */
    boolean manyKeyThroughputOnly;
    boolean overAdmission = true;
    boolean manyKeys = true;
    boolean interleave;

    static Options parse(String[] args) {
      Options o = new Options();
      boolean warmupSet = false;
      boolean measureSet = false;
      boolean threadsSet = false;
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        switch (a) {
          case "--redis" -> o.redis = value(args, ++i, a);
          case "--redis-server" -> o.redisServer = value(args, ++i, a);
          case "--out" -> o.out = value(args, ++i, a);
          case "--csv" -> o.csv = value(args, ++i, a);
          case "--warmup" -> {
            o.warmupSeconds = positive(value(args, ++i, a), a);
            warmupSet = true;
          }
          case "--measure" -> {
            o.measureSeconds = positive(value(args, ++i, a), a);
            measureSet = true;
          }
          case "--threads" -> {
            String[] parts = value(args, ++i, a).split("[, ]+");
            o.threads = new int[parts.length];
            for (int k = 0; k < parts.length; k++) {
              o.threads[k] = (int) positive(parts[k], a);
            }
            threadsSet = true;
          }
          case "--only" -> o.only = Pattern.compile(value(args, ++i, a));
          case "--quick" -> o.quick = true;
          case "--skip-throughput" -> o.throughput = false;
          case "--only-100k-keys" -> o.manyKeyThroughputOnly = true;
          case "--skip-over-admission" -> o.overAdmission = false;
          case "--skip-many-keys" -> o.manyKeys = false;
          case "--interleave" -> o.interleave = true;
          case "-h", "--help" -> throw new IllegalArgumentException("usage: DistributedBenchmark [--redis URI] "
              + "[--redis-server PATH] [--out FILE.md] [--csv FILE.csv] [--warmup S] [--measure S] [--threads 1,2,8] "
              + "[--only REGEX] [--quick] [--interleave] [--skip-throughput] [--only-100k-keys] [--skip-over-admission] [--skip-many-keys]");
          default -> throw new IllegalArgumentException("unknown argument " + a + " (try --help)");
        }
      }
      if (o.quick) {
        if (!warmupSet) {
          o.warmupSeconds = 0.5;
        }
        if (!measureSet) {
          o.measureSeconds = 1;
        }
        if (!threadsSet) {
          o.threads = new int[] {1, 2};
        }
      }
      return o;
    }

    private static String value(String[] args, int i, String name) {
      if (i >= args.length) {
        throw new IllegalArgumentException(name + ": needs a value");
      }
      return args[i];
    }

    private static double positive(String s, String name) {
      double v;
      try {
        v = Double.parseDouble(s);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(name + ": not a number: " + s);
      }
      if (!(v > 0)) {
        throw new IllegalArgumentException(name + ": must be positive, got " + s);
      }
      return v;
    }
  }
}
