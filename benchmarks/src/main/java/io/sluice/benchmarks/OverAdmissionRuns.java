package io.sluice.benchmarks;

import static io.sluice.benchmarks.DistributedBenchmark.OA_BURST;
import static io.sluice.benchmarks.DistributedBenchmark.OA_BURST_THREADS;
import static io.sluice.benchmarks.DistributedBenchmark.OA_DEMAND;
import static io.sluice.benchmarks.DistributedBenchmark.OA_LIMIT;
import static io.sluice.benchmarks.DistributedBenchmark.OA_NODES;
import static io.sluice.benchmarks.DistributedBenchmark.OA_WINDOW;
import static io.sluice.benchmarks.DistributedBenchmark.OA_WINDOWS;
import static io.sluice.benchmarks.DistributedHarness.log;
import static io.sluice.benchmarks.DistributedHarness.storeCalls;
import static io.sluice.benchmarks.DistributedHarness.waitUntil;

import io.sluice.benchmarks.DistributedNodes.Impl;
import io.sluice.benchmarks.DistributedNodes.Node;
import io.sluice.benchmarks.DistributedNodes.SluiceNode;
import io.sluice.benchmarks.DistributedNodes.Spec;
import io.sluice.node.Ticker;
import io.sluice.sync.spi.StoreKeys;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The over-admission part of {@link DistributedBenchmark}: {@link DistributedBenchmark#OA_NODES} nodes
 * on one key at twice the limit, paced, and with a synchronized burst at a window's edge; admitted per
 * window against the limit.
 */
final class OverAdmissionRuns {
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

  private final DistributedOptions o;
  private final DistributedHarness h;

  OverAdmissionRuns(DistributedOptions o, DistributedHarness h) {
    this.o = o;
    this.h = h;
  }

  List<OverAdmission> overAdmission(String uri) throws InterruptedException {
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
   * {@link DistributedBenchmark#OA_BURST_THREADS} threads per node deciding flat out for the first
   * {@link DistributedBenchmark#OA_BURST} of window 1, all released at its first instant.
   */
  private OverAdmission overAdmissionRun(String uri, Spec spec, Impl impl, boolean burst) throws InterruptedException {
    String prefix = "oa" + h.nextRun();
    String where = "over-admission, " + impl.label() + (burst ? ", burst" : "");
    long windowNanos = spec.window().toNanos();
    List<Node> nodes = h.createNodes(uri, spec, impl, prefix, where);
    if (nodes == null) {
      return null;
    }
    Run run = new Run(windowNanos, burst ? OA_BURST_THREADS : 0);
    Thread[] workers = run.workers(nodes, prefix);
    for (Thread w : workers) {
      w.start();
    }
    waitUntil(run.start - 50_000_000L);
    h.resetStats();
    long callsBefore = storeCalls(nodes);
    h.joinWorkers(workers, OA_WINDOWS * windowNanos, where);
    Map<String, Long> mix = h.commandStats();
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
    h.closeNodes(nodes, where);
    Map<Long, Long> storeCounts = storeCounts(nodes, prefix, run.startWindow);
    h.reportFailures(run.thrown, swallowed, where);
    long commands = mix.values().stream().mapToLong(Long::longValue).sum();
    return new OverAdmission(impl, burst, run.admittedPerWindow(), run.attemptsPerWindow(), run.lateTotal(), commands,
        storeCalls, mix, storeCounts, stats.toString());
  }

  /** What a Sluice store counted per window; empty for the peers. */
  private Map<Long, Long> storeCounts(List<Node> nodes, String prefix, long startWindow) {
    Map<Long, Long> storeCounts = new TreeMap<>();
    if (nodes.get(0) instanceof SluiceNode) {
      // what the store counted per window (the flush and exact scripts keep the latest one or two)
      String key = new String(StoreKeys.counterKey(prefix, "bench", "hot"), StandardCharsets.UTF_8);
      for (Map.Entry<String, String> e : h.admin().hgetall(key).entrySet()) {
        try {
          long w = Long.parseLong(e.getKey()) - startWindow;
          storeCounts.put(w, Long.parseLong(e.getValue()));
        } catch (NumberFormatException ignored) {
          // not a window field
        }
      }
    }
    return storeCounts;
  }

  /**
   * One run's schedule and counts: when it starts and ends, and per paced node and burst thread what
   * was attempted and admitted in each window.
   *
   * <p>Concurrency: each worker writes only its own rows (and slot of {@link #thrown}); the driving
   * thread reads them after joining the workers.
   */
  private static final class Run {
    final long windowNanos;
    final long startWindow;
    final long start;
    final long end;
    final long period;
    final int burstThreads;
    final long[][] admitted = new long[OA_NODES][OA_WINDOWS];
    final long[][] attempts = new long[OA_NODES][OA_WINDOWS];
    final long[] late = new long[OA_NODES];
    final long[][] burstAdmitted;
    final long[][] burstAttempts;
    final Throwable[] thrown;

    Run(long windowNanos, int burstThreads) {
      this.windowNanos = windowNanos;
      // start at a window edge at least 2 s away: every Sluice node has heartbeated and seen the others
      this.startWindow = Math.floorDiv(Ticker.system().read(), windowNanos) + 3;
      this.start = startWindow * windowNanos;
      this.end = start + OA_WINDOWS * windowNanos;
      long perNodeRate = Math.round(OA_DEMAND * OA_LIMIT * 1e9 / windowNanos / OA_NODES); // per second
      this.period = 1_000_000_000L / perNodeRate;
      this.burstThreads = burstThreads;
      this.burstAdmitted = new long[OA_NODES * burstThreads][OA_WINDOWS];
      this.burstAttempts = new long[OA_NODES * burstThreads][OA_WINDOWS];
      this.thrown = new Throwable[OA_NODES * (1 + burstThreads)];
    }

    /** The paced threads, one per node, then the burst threads, spread over the nodes; not started. */
    Thread[] workers(List<Node> nodes, String prefix) {
      Thread[] workers = new Thread[OA_NODES * (1 + burstThreads)];
      for (int b = 0; b < OA_NODES * burstThreads; b++) {
        workers[OA_NODES + b] = burstWorker(nodes.get(b % OA_NODES), b, prefix);
      }
      for (int n = 0; n < OA_NODES; n++) {
        workers[n] = pacedWorker(nodes.get(n), n, prefix);
      }
      return workers;
    }

    private Thread burstWorker(Node node, int index, String prefix) {
      long burstEnd = start + OA_BURST.toNanos();
      Thread t = new Thread(() -> {
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
      }, "oa-burst-" + prefix + "-" + index);
      t.setDaemon(true);
      return t;
    }

    private Thread pacedWorker(Node node, int index, String prefix) {
      long offset = index * period / OA_NODES;
      Thread t = new Thread(() -> {
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
      }, "oa-" + prefix + "-" + index);
      t.setDaemon(true);
      return t;
    }

    long[] admittedPerWindow() {
      return perWindow(admitted, burstAdmitted);
    }

    long[] attemptsPerWindow() {
      return perWindow(attempts, burstAttempts);
    }

    private static long[] perWindow(long[][] paced, long[][] bursts) {
      long[] sum = new long[OA_WINDOWS];
      for (long[][] rows : List.of(paced, bursts)) {
        for (long[] row : rows) {
          for (int w = 0; w < OA_WINDOWS; w++) {
            sum[w] += row[w];
          }
        }
      }
      return sum;
    }

    long lateTotal() {
      long sum = 0;
      for (long l : late) {
        sum += l;
      }
      return sum;
    }
  }
}
