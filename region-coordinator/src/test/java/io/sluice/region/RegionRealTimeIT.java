package io.sluice.region;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Ticker;
import io.sluice.sync.RedisServer;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The region coordinator in real time, as issue "regions in real time" measured it: three regions, each
 * its own redis-server, two nodes per region (SyncedLimiters on the system clock with their own flusher
 * threads and connections), two coordinator replicas as processes of their own ({@link
 * CoordinatorProcess}, rounds on the clock's grid), G = 3,000 per 1 s window on 3 keys, demand 2G per key
 * split between the regions 60/30/10, 10/60/30, 30/10/60, 0/50/50 for 5 s each; first with no
 * coordinator (the static G / 3 split), then with it; then the leader killed with SIGKILL; then region
 * b's Redis killed for 5 s and restarted empty. Per window and key: what the regions admitted together,
 * over G; and max-min fairness, what each region admitted over what it asked where its max-min fair
 * split of G meets all it asks ({@link #fairness}).
 *
 * <p>A report, not a check: timing on a shared machine moves its figures, so it runs only when asked
 * ({@code -Dsluice.realtime=true}, {@code region-coordinator/run-report.sh}) and writes
 * {@code regions-realtime.md}; it asserts only that it ran. Run it on a quiet machine.
 */
@EnabledIfSystemProperty(named = "sluice.realtime", matches = "true")
class RegionRealTimeIT {
  /** G per window ({@code -Dsluice.realtime.g}, default 3,000). */
  private static final long G = Long.getLong("sluice.realtime.g", 3_000);
  private static final long WINDOW_NANOS = 1_000_000_000L;
  private static final String[] KEYS = {"tenant-1", "tenant-2", "tenant-3"};
  private static final int REGIONS = 3;
  private static final int NODES = 2;
  private static final double[][] ROTATION = {{0.6, 0.3, 0.1}, {0.1, 0.6, 0.3}, {0.3, 0.1, 0.6}, {0.0, 0.5, 0.5}};
  private static final int PHASE_WINDOWS = 5;
  /** The coordinator's round interval, ms ({@code -Dsluice.realtime.round}, default 250, the coordinator's). */
  private static final long ROUND_MS = Long.getLong("sluice.realtime.round", 250);
  /** A sliding window counter quota instead of a fixed window ({@code -Dsluice.realtime.sliding=true}). */
  private static final boolean SLIDING = Boolean.getBoolean("sluice.realtime.sliding");
  /**
   * A token-bucket quota with this burst instead of a window quota ({@code -Dsluice.realtime.bucket=BURST};
   * 0: none): G becomes its refill per window, its nodes decide in exact mode (a script per decision, so
   * run it with a smaller G, {@code -Dsluice.realtime.g=600}), and over-admission is measured over every
   * interval against the burst plus the refill ({@link #worstOverBucket}).
   */
  private static final long BUCKET = Long.getLong("sluice.realtime.bucket", 0);
  /**
   * A token-bucket quota's nodes claim tokens in batches of this size ({@code -Dsluice.realtime.bucketBatch=N};
   * 1, the default: exact mode).
   */
  private static final long BUCKET_BATCH = Long.getLong("sluice.realtime.bucketBatch", 1);
  /** Slots of 10 ms in which a token-bucket quota's admissions are counted (the interval bound's grain). */
  private static final long SLOT_NANOS = 10_000_000L;

  /** Per window (absolute index), per key, per region: permits admitted. */
  private final Map<Long, AtomicLongArray> admitted = new ConcurrentHashMap<>();
  /** Per 10 ms slot (absolute index), per key: permits admitted in all regions (token-bucket quotas). */
  private final Map<Long, AtomicLongArray> slots = new ConcurrentHashMap<>();
  /**
   * Per window: the longest a driver went between two turns of its loop, ns (a driver held up that long
   * offers the demand of the gap at once, which a token bucket admits only up to its burst).
   */
  private final Map<Long, Long> stalls = new ConcurrentHashMap<>();
  /** Per window: the demand split the drivers last saw in it. */
  private final Map<Long, double[]> splits = new ConcurrentHashMap<>();
  private volatile double[] split = ROTATION[0];
  private volatile boolean driving = true;

  @Test
  void regionsInRealTime() throws Exception {
    GlobalQuota.Builder spec = GlobalQuota.builder("api").quota(G).window(Duration.ofNanos(WINDOW_NANOS))
        .keyPattern("tenant-*");
    GlobalQuota quota = (SLIDING ? spec.slidingWindow() : BUCKET > 0 ? spec.tokenBucket(BUCKET) : spec).build();
    List<RedisServer> servers = new ArrayList<>();
    List<SyncedLimiter> nodes = new ArrayList<>();
    List<RedisCounterStore> stores = new ArrayList<>();
    List<Process> coordinators = new ArrayList<>();
    StringBuilder md = new StringBuilder("# Regions in real time\n\n");
    try {
      for (int r = 0; r < REGIONS; r++) {
        servers.add(RedisServer.start());
        for (int n = 0; n < NODES; n++) {
          RedisCounterStore store = RedisCounterStore.connect(RedisStoreConfig.builder(servers.get(r).uri()).build());
          stores.add(store);
          SyncedLimiter.Builder b = SyncedLimiter.builder(quota.limit(), store)
              .nodeId("region-" + (char) ('a' + r) + "-" + n).ticker(Ticker.system()).regionalQuota(REGIONS);
          if (BUCKET > 0) {
            b.onStoreFailure(StoreFailurePolicy.FAIL_CLOSED); // (a regional bucket's policies admit nothing uncounted)
            if (BUCKET_BATCH > 1) {
              b.batchSize(BUCKET_BATCH);
            }
          }
          nodes.add(b.build());
        }
      }
      List<Thread> drivers = new ArrayList<>();
      for (int r = 0; r < REGIONS; r++) {
        int region = r;
        Thread t = new Thread(() -> drive(region, nodes.subList(region * NODES, region * NODES + NODES)),
            "demand-" + r);
        t.setDaemon(true);
        drivers.add(t);
      }
      long first = nextWindow();
      sleepUntil(first * WINDOW_NANOS);
      drivers.forEach(Thread::start);

      // 1. no coordinator: every region enforces the static G / 3
      long staticFrom = first + 1;
      rotate(staticFrom);
      long staticTo = staticFrom + ROTATION.length * PHASE_WINDOWS;

      // 2. two replicas, as processes of their own; the first to start leads
      String cluster = "realtime-" + UUID.randomUUID();
      List<String> uris = new ArrayList<>();
      for (int r = 0; r < REGIONS; r++) {
        uris.add("region-" + (char) ('a' + r) + "=" + servers.get(r).uri());
      }
      Path logs = Path.of("target"); // (the replicas' own output: rounds, errors, leadership changes)
      Files.createDirectories(logs);
      List<Path> outs = new ArrayList<>();
      for (int c = 0; c < 2; c++) {
        Path out = logs.resolve("regions-realtime-coordinator-" + c + ".log");
        coordinators.add(startCoordinator(cluster, uris, out));
        outs.add(out);
        awaitLine(out, "started", 60_000);
      }
      awaitLine(outs.get(0), "leading", 20_000);
      split = ROTATION[0];
      long warm = window() + 3; // (three windows to take the regions' demand in)
      sleepUntil(warm * WINDOW_NANOS);
      long coordinatedFrom = warm;
      rotate(coordinatedFrom);
      long coordinatedTo = coordinatedFrom + ROTATION.length * PHASE_WINDOWS;

      // 3. the leader killed with SIGKILL 300 ms into a window
      split = ROTATION[0];
      long killWindow = window() + 1;
      sleepUntil(killWindow * WINDOW_NANOS + 300_000_000L);
      long killedAt = System.nanoTime();
      coordinators.get(0).destroyForcibly();
      awaitLine(outs.get(1), "leading", 30_000);
      double takeoverSeconds = (System.nanoTime() - killedAt) / 1e9;
      long killTo = killWindow + 8;
      sleepUntil(killTo * WINDOW_NANOS);

      // 4. region b's Redis killed for 5 s, then restarted empty on its port
      split = new double[] {0.3, 0.4, 0.3};
      long downWindow = window() + 1;
      sleepUntil(downWindow * WINDOW_NANOS + 200_000_000L);
      int port = servers.get(1).port();
      servers.get(1).close();
      Thread.sleep(5_000);
      servers.set(1, RedisServer.start(port));
      long downTo = downWindow + 12;
      sleepUntil(downTo * WINDOW_NANOS);
      driving = false;
      for (Thread t : drivers) {
        t.join(5_000);
      }

      md.append(String.format(Locale.ROOT, "G = %,d per 1 s window on each of %d keys%s, demand 2G per key; %d regions"
          + " (a redis-server each), %d nodes per region; %d coordinator replicas as processes of their own (rounds every"
          + " %,d ms on the clock's grid, lease 5 s). Run %s.%n%n", G, KEYS.length, BUCKET > 0 ? String.format(Locale.ROOT,
          " (a token bucket: G is its refill per second, its burst %,d; the nodes %s; \"over\" is the most"
          + " all regions admitted in any interval beyond the burst plus the refill over it, counted in 10 ms slots)",
          BUCKET, BUCKET_BATCH > 1 ? "claim tokens in batches of " + BUCKET_BATCH : "in exact mode") : "", REGIONS,
          NODES, 2, ROUND_MS, java.time.Instant.now().toString().substring(0, 16) + " UTC"));
      md.append("| run | windows | mean utilisation | worst window | worst over G | windows to reconverge (≥ 95%)"
          + " | regions owed all they ask: admitted / asked, mean (worst) |\n");
      md.append("|---|---:|---:|---:|---:|---|---:|\n");
      row(md, "static G / 3 (no coordinator)", staticFrom, staticTo, true);
      row(md, "coordinator", coordinatedFrom, coordinatedTo, true);
      row(md, String.format(Locale.ROOT, "leader killed with SIGKILL (the other led %.2f s later)", takeoverSeconds),
          killWindow, killTo, false);
      row(md, "region b's Redis down 5 s, restarted empty", downWindow, downTo, false);
      md.append("\nPer window (sum over regions / G, per key; then the first key's permits per region, the split of"
          + " the demand in force, and the longest any region's driver went between two turns):\n\n```\n");
      for (long w = staticFrom; w < downTo; w++) {
        md.append(String.format(Locale.ROOT, "w%-3d", w - staticFrom));
        for (int k = 0; k < KEYS.length; k++) {
          md.append(String.format(Locale.ROOT, "  %6.1f%%", 100.0 * total(w, k) / G));
        }
        // (the first key's permits per region, and the demand split in force: which region fell short)
        AtomicLongArray counts = admitted.get(w);
        double[] in = splits.get(w);
        if (counts != null && in != null) {
          md.append(String.format(Locale.ROOT, "   %s: %5d %5d %5d   demand %2.0f/%2.0f/%2.0f   driver stall %3d ms",
              KEYS[0], counts.get(0), counts.get(1), counts.get(2), 100 * in[0], 100 * in[1], 100 * in[2],
              stalls.getOrDefault(w, 0L) / 1_000_000));
        }
        md.append('\n');
      }
      md.append("```\n");
      Path dir = Path.of(System.getProperty("sluice.report.dir", "target"));
      Files.createDirectories(dir);
      String name = "regions-realtime" + (SLIDING ? "-sliding" : "") + (BUCKET > 0 ? "-bucket" : "")
          + (BUCKET > 0 && BUCKET_BATCH > 1 ? "-batched" : "")
          + (ROUND_MS == 250 ? "" : "-" + ROUND_MS + "ms");
      Files.writeString(dir.resolve(name + ".md"), md.toString());
      System.out.println(md);
      assertThat(total(coordinatedFrom, 0)).as("the coordinated run admitted something").isPositive();
    } finally {
      driving = false;
      for (Process p : coordinators) {
        p.destroyForcibly();
      }
      for (SyncedLimiter n : nodes) {
        n.close();
      }
      for (RedisCounterStore s : stores) {
        s.close();
      }
      for (RedisServer s : servers) {
        s.close();
      }
    }
  }

  /** The demand rotation from window {@code from}: each split for {@link #PHASE_WINDOWS} windows. */
  private void rotate(long from) throws InterruptedException {
    for (int i = 0; i < ROTATION.length; i++) {
      sleepUntil((from + (long) i * PHASE_WINDOWS) * WINDOW_NANOS);
      split = ROTATION[i];
    }
    sleepUntil((from + (long) ROTATION.length * PHASE_WINDOWS) * WINDOW_NANOS);
  }

  /** Region r's demand: 2G per second per key times its part of the split, spread over its nodes. */
  private void drive(int r, List<SyncedLimiter> nodes) {
    double[] carry = new double[KEYS.length];
    long last = Ticker.system().read();
    int next = 0;
    while (driving) {
      long now = Ticker.system().read();
      double seconds = (now - last) / 1e9;
      long w = Math.floorDiv(now, WINDOW_NANOS);
      stalls.merge(w, now - last, Math::max);
      last = now;
      AtomicLongArray counts = admitted.computeIfAbsent(w, x -> new AtomicLongArray(KEYS.length * REGIONS));
      AtomicLongArray slot = slots.computeIfAbsent(Math.floorDiv(now, SLOT_NANOS), x -> new AtomicLongArray(KEYS.length));
      splits.put(w, split);
      for (int k = 0; k < KEYS.length; k++) {
        carry[k] += 2.0 * G * split[r] * seconds;
        while (carry[k] >= 1) {
          carry[k] -= 1;
          if (nodes.get(next++ % nodes.size()).tryAcquire(KEYS[k])) {
            counts.incrementAndGet(k * REGIONS + r);
            slot.incrementAndGet(k);
          }
        }
      }
      java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
    }
  }

  private void row(StringBuilder md, String run, long from, long to, boolean shifts) {
    double sum = 0;
    double worst = Double.MAX_VALUE;
    double over = 0;
    int n = 0;
    for (long w = from; w < to; w++) {
      double windowLow = Double.MAX_VALUE;
      for (int k = 0; k < KEYS.length; k++) {
        double u = (double) total(w, k) / G;
        sum += Math.min(1, u);
        n++;
        windowLow = Math.min(windowLow, u);
        over = Math.max(over, u - 1);
      }
      worst = Math.min(worst, windowLow);
    }
    StringBuilder reconverge = new StringBuilder();
    if (shifts) {
      for (int i = 0; i < ROTATION.length; i++) {
        long shift = from + (long) i * PHASE_WINDOWS;
        int windows = -1;
        for (long w = shift; w < shift + PHASE_WINDOWS; w++) {
          boolean all = true;
          for (int k = 0; k < KEYS.length; k++) {
            all &= total(w, k) >= 0.95 * G;
          }
          if (all) {
            windows = (int) (w - shift);
            break;
          }
        }
        reconverge.append(i == 0 ? "" : ", ").append(windows < 0 ? "never" : Integer.toString(windows));
      }
    } else {
      reconverge.append("–");
    }
    double[] fair = fairness(from, to);
    if (BUCKET > 0) {
      over = 0;
      for (int k = 0; k < KEYS.length; k++) {
        over = Math.max(over, worstOverBucket(k, from, to) / G);
      }
    }
    md.append(String.format(Locale.ROOT, "| %s | %d | %.1f%% | %.1f%% | %+.2f%% | %s | %s |%n", run, to - from,
        100.0 * sum / n, 100.0 * worst, 100.0 * Math.max(0, over), reconverge,
        fair == null ? "–" : String.format(Locale.ROOT, "%.1f%% (%.1f%%)", 100 * fair[0], 100 * fair[1])));
  }

  /**
   * A token-bucket quota: the most all regions admitted of key k in any run of 10 ms slots within
   * windows [from, to), beyond the burst plus the refill over the run's length (permits; at most 0
   * where the bound holds). A slot's admissions may fall anywhere in it, so a run of slots is given the
   * refill of its whole length ({@link RegionRig#worstOverBucket}, a grain of one slot).
   */
  private double worstOverBucket(int k, long from, long to) {
    TreeMap<Long, Long> counts = new TreeMap<>();
    long slotsPerWindow = WINDOW_NANOS / SLOT_NANOS;
    for (long i = from * slotsPerWindow; i < to * slotsPerWindow; i++) {
      AtomicLongArray slot = slots.get(i);
      if (slot != null && slot.get(k) > 0) {
        counts.put(i * SLOT_NANOS, slot.get(k));
      }
    }
    return RegionRig.worstOverBucket(counts, (double) G / WINDOW_NANOS, SLOT_NANOS, BUCKET);
  }

  /**
   * Max-min fairness in windows [from, to): for every key and every region whose demand its max-min
   * fair split of G meets in full (it asks for no more than the others' level), what it admitted over
   * what it asked for, at most 1: {mean, worst}; null where no region asked for anything.
   */
  private double[] fairness(long from, long to) {
    double sum = 0;
    double worst = 1;
    int n = 0;
    for (long w = from; w < to; w++) {
      double[] in = splits.get(w);
      AtomicLongArray counts = admitted.get(w);
      if (in == null || counts == null) {
        continue;
      }
      double[] demand = new double[REGIONS];
      for (int r = 0; r < REGIONS; r++) {
        demand[r] = 2.0 * G * in[r] * WINDOW_NANOS / 1e9;
      }
      double[] fair = maxMin(G, demand);
      for (int k = 0; k < KEYS.length; k++) {
        for (int r = 0; r < REGIONS; r++) {
          if (demand[r] >= 1 && fair[r] >= demand[r] - 1e-9) {
            double ratio = Math.min(1, counts.get(k * REGIONS + r) / demand[r]);
            sum += ratio;
            worst = Math.min(worst, ratio);
            n++;
          }
        }
      }
    }
    return n == 0 ? null : new double[] {sum / n, worst};
  }

  /** Max-min fair split of {@code budget} over {@code demand}: the smallest demands met in full, the rest level. */
  static double[] maxMin(double budget, double[] demand) {
    int n = demand.length;
    double[] x = new double[n];
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    java.util.Arrays.sort(order, java.util.Comparator.comparingDouble(i -> demand[i]));
    double left = budget;
    for (int j = 0; j < n; j++) {
      int i = order[j];
      x[i] = Math.min(demand[i], left / (n - j));
      left -= x[i];
    }
    return x;
  }

  private long total(long w, int k) {
    AtomicLongArray counts = admitted.get(w);
    if (counts == null) {
      return 0;
    }
    long sum = 0;
    for (int r = 0; r < REGIONS; r++) {
      sum += counts.get(k * REGIONS + r);
    }
    return sum;
  }

  private static Process startCoordinator(String cluster, List<String> regions, Path log) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m", "-Dsluice.realtime.sliding=" + SLIDING, "-Dsluice.realtime.bucket=" + BUCKET,
        "-Dsluice.realtime.verbose=" + Boolean.getBoolean("sluice.realtime.verbose"), "-cp",
        System.getProperty("java.class.path"),
        CoordinatorProcess.class.getName(), cluster, "5801",
        "api", Long.toString(G), Long.toString(WINDOW_NANOS / 1_000_000), "tenant-*", "5000", Long.toString(ROUND_MS)));
    cmd.addAll(regions);
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  /** Waits until the process's log holds the line {@code expected}, at most {@code timeoutMillis}. */
  private static void awaitLine(Path log, String expected, long timeoutMillis) throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMillis;
    while (System.currentTimeMillis() < deadline) {
      if (Files.exists(log) && Files.readAllLines(log, StandardCharsets.UTF_8).contains(expected)) {
        return;
      }
      Thread.sleep(10);
    }
    throw new IllegalStateException("coordinator process: no '" + expected + "' within " + timeoutMillis + " ms"
        + " (see " + log + ")");
  }

  private static long window() {
    return Math.floorDiv(Ticker.system().read(), WINDOW_NANOS);
  }

  private static long nextWindow() {
    return window() + 1;
  }

  private static void sleepUntil(long tickerNanos) throws InterruptedException {
    long left = tickerNanos - Ticker.system().read();
    if (left > 0) {
      Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
    }
  }
}
