package io.sluice.benchmarks;

import static io.sluice.benchmarks.DistributedBenchmark.THROUGHPUT_LIMIT;
import static io.sluice.benchmarks.DistributedBenchmark.THROUGHPUT_WINDOW;
import static io.sluice.benchmarks.DistributedHarness.log;
import static io.sluice.benchmarks.DistributedHarness.sleepSeconds;

import io.sluice.benchmarks.DistributedNodes.Impl;
import io.sluice.benchmarks.DistributedNodes.Node;
import io.sluice.benchmarks.DistributedNodes.Spec;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * The throughput part of {@link DistributedBenchmark}: decisions per second of one node for every
 * implementation and case (threads, own or shared key), and the Redis commands they cost; and the
 * cells on 100,000 keys, which {@link ManyKeyThroughput} measures.
 *
 * <p>Concurrency: each worker thread counts into its own LongAdders and leaves what it threw in its
 * slot of an array; the driving thread reads both, the array after joining. {@link Flag} stops them.
 */
final class ThroughputRuns {
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

  private final DistributedOptions o;
  private final DistributedHarness h;

  ThroughputRuns(DistributedOptions o, DistributedHarness h) {
    this.o = o;
    this.h = h;
  }

  List<Cell> throughput(String uri) throws InterruptedException {
    List<Cell> cells = new ArrayList<>();
    Spec spec = new Spec(THROUGHPUT_LIMIT, THROUGHPUT_WINDOW, false);
    // JVM warm-up: the first cells of a fresh JVM ran several times slower (Lettuce/Netty paths not yet
    // compiled) although each cell has its own warm-up; one untimed pass over every implementation first
    double warmup = o.quick ? 0.5 : 1.5;
    log("JVM warm-up: every implementation, 2 threads on a shared key, " + warmup + " s each, not reported");
    for (Impl impl : DistributedBenchmark.impls(o.only)) {
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
    List<Impl> impls = DistributedBenchmark.impls(o.only);
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
    String prefix = prefixStart + h.nextRun();
    String where = impl.label() + ", " + c.label();
    Node node;
    try {
      node = impl.factory().create(uri, spec, prefix, 0);
    } catch (Exception e) {
      h.failures.add(where + ": cannot create the node: " + e);
      e.printStackTrace();
      return null;
    }
    int n = c.threads();
    LongAdder[] allowed = adders(n);
    LongAdder[] denied = adders(n);
    Throwable[] thrown = new Throwable[n];
    Flag running = new Flag();
    Thread[] workers = deciders(node, c, prefix, allowed, denied, thrown, running);
    for (Thread w : workers) {
      w.start();
    }
    sleepSeconds(warmupSeconds);
    h.resetStats();
    long allowed0 = sum(allowed);
    long denied0 = sum(denied);
    long t0 = System.nanoTime();
    sleepSeconds(measureSeconds);
    long t1 = System.nanoTime();
    long allowed1 = sum(allowed);
    long denied1 = sum(denied);
    Map<String, Long> mix = h.commandStats();
    running.on = false;
    String stats = stopAndCheck(node, workers, thrown, where);
    long allowedCount = allowed1 - allowed0;
    long deniedCount = denied1 - denied0;
    if (allowedCount == 0) {
      h.failures.add(where + ": no decision allowed in the measured interval (" + deniedCount + " denied)");
    }
    long commands = mix.values().stream().mapToLong(Long::longValue).sum();
    noteOddities(impl, where, !prefixStart.equals("w"), allowedCount, deniedCount, commands, mix);
    return new Cell(impl, c, (t1 - t0) / 1e9, allowedCount, deniedCount, commands, mix, stats);
  }

  /** One thread per {@code c.threads()}, deciding flat out on its key until {@code running} goes off. */
  private static Thread[] deciders(Node node, Case c, String prefix, LongAdder[] allowed, LongAdder[] denied,
      Throwable[] thrown, Flag running) {
    Thread[] workers = new Thread[c.threads()];
    for (int t = 0; t < workers.length; t++) {
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
    return workers;
  }

  /** Joins the workers and closes the node, recording what went wrong; the node's counters at the end. */
  private String stopAndCheck(Node node, Thread[] workers, Throwable[] thrown, String where)
      throws InterruptedException {
    for (Thread w : workers) {
      w.join(10_000);
      if (w.isAlive()) {
        h.failures.add(where + ": thread " + w.getName() + " still running 10 s after the end (stuck in a call?)");
      }
    }
    String stats = node.stats();
    long swallowed = node.swallowedErrors();
    try {
      node.close();
    } catch (RuntimeException e) {
      h.failures.add(where + ": close failed: " + e);
    }
    for (Throwable e : thrown) {
      if (e != null) {
        h.failures.add(where + ": " + e);
        e.printStackTrace();
      }
    }
    if (swallowed > 0) {
      h.failures.add(where + ": " + swallowed + " store failures inside the implementation (" + stats + ")");
    }
    return stats;
  }

  /** Notes a reported cell that denied although the limit was far away, and Redis traffic of an in-process node. */
  private void noteOddities(Impl impl, String where, boolean reported, long allowedCount, long deniedCount,
      long commands, Map<String, Long> mix) {
    if (reported && allowedCount + deniedCount > 0 && allowedCount < 0.9 * (allowedCount + deniedCount)) {
      h.notes.add(String.format(Locale.ROOT, "%s: only %.1f%% of decisions allowed although the limit (%,d per window "
          + "and key) was far away: the denials come from the implementation, not from the limit", where,
          100.0 * allowedCount / (allowedCount + deniedCount), THROUGHPUT_LIMIT));
    }
    if (!impl.usesRedis() && commands > 0) {
      h.notes.add(where + ": " + commands + " Redis commands seen while an in-process node ran: " + mix);
    }
  }

  private static final class Flag {
    volatile boolean on = true;
  }

  private static LongAdder[] adders(int n) {
    LongAdder[] adders = new LongAdder[n];
    for (int t = 0; t < n; t++) {
      adders[t] = new LongAdder();
    }
    return adders;
  }

  private static long sum(LongAdder[] adders) {
    long s = 0;
    for (LongAdder a : adders) {
      s += a.sum();
    }
    return s;
  }

  /** One node on 100,000 keys, Sluice beside the in-process peers: {@link ManyKeyThroughput}. */
  List<ManyKeyThroughput.Cell> manyKeyThroughput(String uri) throws InterruptedException {
    ManyKeyThroughput.Harness harness = new ManyKeyThroughput.Harness() {
      @Override
      public void resetStats() {
        h.resetStats();
      }

      @Override
      public long commands() {
        return h.commandStats().values().stream().mapToLong(Long::longValue).sum();
      }

      @Override
      public double redisCpuSeconds() {
        return h.redisCpuSeconds();
      }

      @Override
      public void failure(String message) {
        h.failures.add(message);
      }
    };
    return new ManyKeyThroughput(harness, o.warmupSeconds, o.measureSeconds, o.threads)
        .run(uri, new Spec(THROUGHPUT_LIMIT, THROUGHPUT_WINDOW, false), ManyKeyThroughput.impls(o.only));
  }
}
