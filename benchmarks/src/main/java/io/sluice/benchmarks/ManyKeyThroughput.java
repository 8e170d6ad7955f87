package io.sluice.benchmarks;

import io.sluice.benchmarks.DistributedNodes.Impl;
import io.sluice.benchmarks.DistributedNodes.Node;
import io.sluice.benchmarks.DistributedNodes.Spec;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The distributed benchmark's rows on many keys: one node's decisions per second with its threads
 * drawing every decision's key uniformly from {@value #KEYS} keys they share (xorshift per thread, no
 * allocation), limits far away. Sluice over Redis (default batching and batch 1000) and the same Sluice
 * node in-process, beside the in-process peers keyed the way users key them ({@code ConcurrentHashMap}:
 * a plain get, {@code computeIfAbsent} on a miss): a naive map of fixed-window counters, Bucket4j
 * local, Resilience4j and Guava. Every cell's ratio is to the best peer of the same run and thread
 * count.
 *
 * <p>A fresh node per cell: where the machine is fast enough, its warm-up decides on every key many
 * times over (the key tables fill there), so the measured interval is on keys the node knows, each rolling over to a new window once a
 * second (windows of one second), as a service's keys do. Besides the rate, each cell reports the bytes
 * the deciding threads allocated per decision (the JVM's per-thread allocation counter), and for the
 * Redis rows the store calls and Redis commands per 1,000 decisions.
 *
 * <p>Its own class, called by {@link DistributedBenchmark} with the same options ({@code --only},
 * {@code --threads}, warm-up and measured seconds); {@code --skip-throughput} skips it too.
 */
final class ManyKeyThroughput {
  /** Keys the threads of a cell draw from. */
  static final int KEYS = 100_000;

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** What the run needs from the benchmark around it: Redis's command counter and where failures go. */
  interface Harness {
    /** Resets Redis's command statistics (before a measured interval). */
    void resetStats();

    /** Redis commands since the last reset. */
    long commands();

    /** CPU seconds redis-server has used since it started ({@code INFO cpu}, user and system). */
    double redisCpuSeconds();

    void failure(String message);
  }

  /** One measured cell. */
  record Cell(Impl impl, int threads, double seconds, long allowed, long denied, long commands, long storeCalls,
      double bytesPerDecision, long waited, long waitedNanos, Cpu cpu) {
    long decisions() {
      return allowed + denied;
    }

    double perSecond() {
      return decisions() / seconds;
    }

    double per1000(long n) {
      return n < 0 || decisions() == 0 ? Double.NaN : n * 1000.0 / decisions();
    }

    /** Nanoseconds of CPU per decision: the deciding threads', the rest of the JVM's, redis-server's. */
    double cpuPerDecision(long nanos) {
      return nanos < 0 || decisions() == 0 ? Double.NaN : (double) nanos / decisions();
    }

    /** The mean wait of a decision that waited for the store, microseconds (NaN: none waited). */
    double meanWaitMicros() {
      return waited <= 0 ? Double.NaN : waitedNanos / 1e3 / waited;
    }
  }

  /**
   * CPU time over a cell's measured interval, nanoseconds: the deciding threads' (the decision path's own
   * cost), the rest of the JVM's (flusher, Lettuce, GC, JIT) and redis-server's (0 for the in-process
   * rows); -1 where the JVM does not tell. On two cores shared by all three, what the deciding threads
   * can have is what the others leave.
   */
  record Cpu(long deciding, long restOfJvm, long redis) {
  }

  private final Harness harness;
  private final double warmupSeconds;
  private final double measureSeconds;
  private final int[] threads;
  private final String[] names = new String[KEYS];
  private int run;

  ManyKeyThroughput(Harness harness, double warmupSeconds, double measureSeconds, int[] threads) {
    this.harness = harness;
    this.warmupSeconds = warmupSeconds;
    this.measureSeconds = measureSeconds;
    this.threads = threads.clone();
    for (int i = 0; i < KEYS; i++) {
      names[i] = KeyedDecisionBenchmark.keyName(i);
    }
  }

  /** Sluice over Redis and in-process first, then the in-process peers (the ratios' denominators). */
  static List<Impl> impls(Pattern only) {
    List<Impl> all = List.of(
        DistributedNodes.sluice(null),
        DistributedNodes.sluice(1000L),
        DistributedNodes.sluiceFixed(null),
        DistributedNodes.inProcess(),
        peer("naive ConcurrentHashMap of fixed-window counters", limit -> new Keyed<>(key -> new NaiveWindowCounter(limit),
            NaiveWindowCounter::tryAcquire)),
        peer("Bucket4j local", limit -> new Keyed<>(KeyedDecisionBenchmark::newBucket, b -> b.tryConsume(1))),
        peer("Resilience4j", limit -> new Keyed<>(KeyedDecisionBenchmark::newResilience4j,
            io.github.resilience4j.ratelimiter.RateLimiter::acquirePermission)),
        peer("Guava", limit -> new Keyed<>(KeyedDecisionBenchmark::newGuava,
            com.google.common.util.concurrent.RateLimiter::tryAcquire)));
    List<Impl> out = new ArrayList<>();
    for (Impl i : all) {
      if (only == null || only.matcher(i.label()).find()) {
        out.add(i);
      }
    }
    return out;
  }

  /** The peers' family, as the report's ratios find them. */
  static final String PEER = "in-process peer";

  static boolean isPeer(Impl impl) {
    return impl.family().equals(PEER);
  }

  private interface PeerFactory {
    Node create(long limit);
  }

  private static Impl peer(String name, PeerFactory f) {
    return new Impl(PEER, name, false, (uri, spec, prefix, index) -> f.create(spec.limit()));
  }

  List<Cell> run(String uri, Spec spec, List<Impl> impls) throws InterruptedException {
    List<Cell> cells = new ArrayList<>();
    for (Impl impl : impls) {
      for (int t : threads) {
        Cell c = measure(uri, spec, impl, t);
        if (c != null) {
          cells.add(c);
          System.out.printf(Locale.ROOT, "[distributed] %-60s %dt %,d keys %,14.0f decisions/s  %6.1f B/decision"
                  + "  %8.1f cmds/1000  %6.2f store calls/1000  %6.2f waited/1000 (mean %.1f us)"
                  + "  CPU ns/decision: deciding %.0f, rest of JVM %.0f, redis %.0f%n", impl.label(), t,
              KEYS, c.perSecond(), c.bytesPerDecision(), c.per1000(c.commands()), c.per1000(c.storeCalls()),
              c.per1000(c.waited()), c.meanWaitMicros(), c.cpuPerDecision(c.cpu().deciding()),
              c.cpuPerDecision(c.cpu().restOfJvm()), c.cpuPerDecision(c.cpu().redis()));
        }
      }
    }
    return cells;
  }

  private Cell measure(String uri, Spec spec, Impl impl, int n) throws InterruptedException {
    String where = impl.label() + ", " + n + "t on " + KEYS + " keys";
    Node node;
    try {
      node = impl.factory().create(uri, spec, "mkt" + (++run), 0);
    } catch (Exception e) {
      harness.failure(where + ": cannot create the node: " + e);
      return null;
    }
    Worker[] workers = new Worker[n];
    Thread[] started = new Thread[n];
    for (int t = 0; t < n; t++) {
      workers[t] = new Worker(node, names, 0x5EED_1234_ABCD_EF01L + 0x9E37_79B9_7F4A_7C15L * (t + 1));
      started[t] = new Thread(workers[t], "many-keys-" + run + "-" + t);
      started[t].setDaemon(true);
    }
    for (Thread w : started) {
      w.start();
    }
    sleep(warmupSeconds);
    harness.resetStats();
    double redisBefore = impl.usesRedis() ? harness.redisCpuSeconds() : 0;
    long processBefore = processCpuNanos();
    long[] before = snapshot(workers, started, node);
    long t0 = System.nanoTime();
    sleep(measureSeconds);
    long t1 = System.nanoTime();
    long[] after = snapshot(workers, started, node);
    long processAfter = processCpuNanos();
    double redisAfter = impl.usesRedis() ? harness.redisCpuSeconds() : 0;
    long commands = impl.usesRedis() ? harness.commands() : 0;
    stop(where, node, workers, started);
    long allowed = after[0] - before[0];
    long denied = after[1] - before[1];
    if (allowed == 0 || denied > 0) {
      harness.failure(where + ": " + allowed + " allowed and " + denied + " denied with the limits far away");
    }
    long decisions = allowed + denied;
    double bytes = before[2] < 0 || after[2] < 0 || decisions == 0 ? Double.NaN
        : (double) (after[2] - before[2]) / decisions;
    long storeCalls = before[3] < 0 ? -1 : after[3] - before[3];
    long deciding = before[6] < 0 || after[6] < 0 ? -1 : after[6] - before[6];
    long process = processBefore < 0 || processAfter < 0 ? -1 : processAfter - processBefore;
    Cpu cpu = new Cpu(deciding, deciding < 0 || process < 0 ? -1 : Math.max(0, process - deciding),
        (long) ((redisAfter - redisBefore) * 1e9));
    return new Cell(impl, n, (t1 - t0) / 1e9, allowed, denied, commands, storeCalls, bytes, after[4] - before[4],
        after[5] - before[5], cpu);
  }

  /** CPU nanoseconds this JVM has used (-1 where the JVM does not tell). */
  static long processCpuNanos() {
    return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
        ? os.getProcessCpuTime() : -1;
  }

  /** Stops the workers and closes the node, reporting what went wrong in the cell. */
  private void stop(String where, Node node, Worker[] workers, Thread[] started) throws InterruptedException {
    for (Worker w : workers) {
      w.running = false;
    }
    for (Thread w : started) {
      w.join(10_000);
      if (w.isAlive()) {
        harness.failure(where + ": thread " + w.getName() + " still running 10 s after the end");
      }
    }
    long swallowed = node.swallowedErrors();
    try {
      node.close();
    } catch (RuntimeException e) {
      harness.failure(where + ": close failed: " + e);
    }
    for (Worker w : workers) {
      if (w.thrown != null) {
        harness.failure(where + ": " + w.thrown);
      }
    }
    if (swallowed > 0) {
      harness.failure(where + ": " + swallowed + " store failures inside the implementation");
    }
  }

  /**
   * Allowed, denied, bytes the deciding threads allocated (-1 if unknown), the node's store calls, for a
   * Sluice node over a store its decisions that waited for the store and their total wait, and the
   * deciding threads' CPU nanoseconds (-1 if unknown).
   */
  private static long[] snapshot(Worker[] workers, Thread[] threads, Node node) {
    long allowed = 0;
    long denied = 0;
    long bytes = 0;
    long cpu = 0;
    for (int i = 0; i < workers.length; i++) {
      allowed += workers[i].allowed();
      denied += workers[i].denied();
      long b = THREADS.isThreadAllocatedMemoryEnabled() ? THREADS.getThreadAllocatedBytes(threads[i].getId()) : -1;
      bytes = b < 0 || bytes < 0 ? -1 : bytes + b;
      long c = THREADS.isThreadCpuTimeEnabled() ? THREADS.getThreadCpuTime(threads[i].getId()) : -1;
      cpu = c < 0 || cpu < 0 ? -1 : cpu + c;
    }
    long waited = -1;
    long waitedNanos = 0;
    if (node instanceof DistributedNodes.SluiceNode sluice) {
      waited = sluice.limiter.waitedDecisions();
      waitedNanos = sluice.limiter.waitedNanos();
    }
    return new long[] {allowed, denied, bytes, node.storeCalls(), waited, waitedNanos, cpu};
  }

  /** One deciding thread: a key drawn uniformly per decision (xorshift64, multiply-shift), counted. */
  private static final class Worker implements Runnable {
    private static final VarHandle ALLOWED;
    private static final VarHandle DENIED;

    static {
      try {
        ALLOWED = MethodHandles.lookup().findVarHandle(Worker.class, "allowed", long.class);
        DENIED = MethodHandles.lookup().findVarHandle(Worker.class, "denied", long.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    private final Node node;
    private final String[] names;
    private long x;
    // (one writer: a release store per decision, no locked instruction, read by the harness)
    private long allowed;
    private long denied;
    volatile boolean running = true;
    volatile Throwable thrown;

    Worker(Node node, String[] names, long seed) {
      this.node = node;
      this.names = names;
      this.x = KeyedDecisionBenchmark.splitMix64(seed) | 1;
    }

    @Override
    public void run() {
      try {
        long a = 0;
        long d = 0;
        while (running) {
          long s = x;
          s ^= s << 13;
          s ^= s >>> 7;
          s ^= s << 17;
          x = s;
          if (node.tryAcquire(names[(int) (((s >>> 32) * names.length) >>> 32)])) {
            ALLOWED.setRelease(this, ++a);
          } else {
            DENIED.setRelease(this, ++d);
          }
        }
      } catch (Throwable e) {
        thrown = e;
      }
    }

    long allowed() {
      return (long) ALLOWED.getAcquire(this);
    }

    long denied() {
      return (long) DENIED.getAcquire(this);
    }
  }

  // ------------------------------------------------------------------ the in-process peers

  /** A peer's limiter per key in a {@code ConcurrentHashMap}: a plain get, computeIfAbsent on a miss. */
  private static final class Keyed<L> implements Node {
    private final ConcurrentHashMap<String, L> map = new ConcurrentHashMap<>();
    private final java.util.function.Function<String, L> create;
    private final java.util.function.Predicate<L> decide;

    Keyed(java.util.function.Function<String, L> create, java.util.function.Predicate<L> decide) {
      this.create = create;
      this.decide = decide;
    }

    @Override
    public boolean tryAcquire(String key) {
      L l = map.get(key);
      return decide.test(l != null ? l : map.computeIfAbsent(key, create));
    }

    @Override
    public void close() {
    }
  }

  // ------------------------------------------------------------------ report

  /** The section of the report: decisions/s, ratio to the best peer, bytes and store traffic per decision. */
  static void report(StringBuilder md, List<Cell> cells, double warmupSeconds, double measureSeconds) {
    if (cells.isEmpty()) {
      return;
    }
    List<Integer> counts = new ArrayList<>();
    Map<String, Map<Integer, Cell>> byImpl = new LinkedHashMap<>();
    for (Cell c : cells) {
      if (!counts.contains(c.threads())) {
        counts.add(c.threads());
      }
      byImpl.computeIfAbsent(c.impl().label(), k -> new LinkedHashMap<>()).put(c.threads(), c);
    }
    Map<Integer, Cell> best = new LinkedHashMap<>();
    for (Cell c : cells) {
      if (isPeer(c.impl()) && (best.get(c.threads()) == null || c.perSecond() > best.get(c.threads()).perSecond())) {
        best.put(c.threads(), c);
      }
    }
    header(md, counts, warmupSeconds, measureSeconds);
    for (Map.Entry<String, Map<Integer, Cell>> e : byImpl.entrySet()) {
      row(md, e.getKey(), e.getValue(), counts, best);
    }
  }

  private static void header(StringBuilder md, List<Integer> counts, double warmupSeconds, double measureSeconds) {
    md.append("\n## ").append(String.format(Locale.ROOT, "%,d", KEYS)).append(" keys, one node\n\n");
    md.append(String.format(Locale.ROOT, "Every decision on a key drawn uniformly from %,d keys the node's threads"
        + " share (limits far away, windows of 1 s: each key rolls over once a second); %s s warm-up + %s s measured, a"
        + " fresh node per cell (keys its warm-up did not reach are new in the measured interval: on a loaded"
        + " machine, many). Peers in-process, keyed through a"
        + " `ConcurrentHashMap` (get, `computeIfAbsent` on a miss), each reading the system clock per decision;"
        + " *vs best peer* divides by the fastest peer with the same threads in this run. *B/decision*: bytes the"
        + " deciding threads allocated per decision (the flusher's and Lettuce's threads not counted). *CPU ns per"
        + " decision*: the deciding threads' CPU time (the decision path's own cost), the rest of the JVM's (flusher,"
        + " Lettuce, GC, JIT) and redis-server's (`INFO cpu`), over the measured interval, each divided by the"
        + " decisions; on two cores the three share, the deciding threads get what the others leave.%n%n",
        KEYS, trim(warmupSeconds), trim(measureSeconds)));
    md.append("| implementation |");
    for (int t : counts) {
      md.append(' ').append(t).append("t decisions/s | vs best peer |");
    }
    for (int t : counts) {
      md.append(' ').append(t).append("t B/decision |");
    }
    for (int t : counts) {
      md.append(' ').append(t).append("t CPU ns per decision: deciding / rest of JVM / redis |");
    }
    md.append(" per 1,000 decisions: store calls / Redis commands, decisions that waited for the store |\n|---|");
    md.append("---:|".repeat(counts.size() * 4)).append("---|\n");
  }

  /** One implementation's row: its cells by thread count, against the best peer's. */
  private static void row(StringBuilder md, String label, Map<Integer, Cell> byThreads, List<Integer> counts,
      Map<Integer, Cell> best) {
    md.append("| ").append(label).append(" |");
    for (int t : counts) {
      Cell c = byThreads.get(t);
      Cell b = best.get(t);
      if (c == null) {
        md.append(" n/a | |");
        continue;
      }
      md.append(String.format(Locale.ROOT, c.perSecond() >= 1e5 ? " %,.2f M |" : " %,.0f |",
          c.perSecond() >= 1e5 ? c.perSecond() / 1e6 : c.perSecond()));
      md.append(b == null ? " |" : c == b ? " best peer |"
          : String.format(Locale.ROOT, " %s%.2fx%s |", isPeer(c.impl()) ? "" : "**", c.perSecond() / b.perSecond(),
              isPeer(c.impl()) ? "" : "**"));
    }
    for (int t : counts) {
      Cell c = byThreads.get(t);
      md.append(c == null || Double.isNaN(c.cpuPerDecision(c.cpu().deciding())) ? " n/a |"
          : String.format(Locale.ROOT, " %.0f / %.0f / %.0f |", c.cpuPerDecision(c.cpu().deciding()),
              c.cpuPerDecision(c.cpu().restOfJvm()), c.cpuPerDecision(c.cpu().redis())));
    }
    StringBuilder traffic = new StringBuilder();
    for (int t : counts) {
      Cell c = byThreads.get(t);
      md.append(c == null || Double.isNaN(c.bytesPerDecision()) ? " n/a |"
          : String.format(Locale.ROOT, " %.1f |", c.bytesPerDecision()));
      if (c != null && c.impl().usesRedis()) {
        traffic.append(traffic.length() == 0 ? "" : "; ").append(String.format(Locale.ROOT,
            "%dt %.2f / %.1f, %.2f waited (mean %.0f µs)", t, c.per1000(c.storeCalls()), c.per1000(c.commands()),
            c.per1000(c.waited()), c.meanWaitMicros()));
      }
    }
    md.append(' ').append(traffic.length() == 0 ? "-" : traffic).append(" |\n");
  }

  private static String trim(double seconds) {
    return seconds == Math.rint(seconds) ? Long.toString((long) seconds) : Double.toString(seconds);
  }

  private static void sleep(double seconds) throws InterruptedException {
    long until = System.nanoTime() + (long) (seconds * 1e9);
    for (long d; (d = until - System.nanoTime()) > 0; ) {
      TimeUnit.NANOSECONDS.sleep(d);
    }
  }
}
