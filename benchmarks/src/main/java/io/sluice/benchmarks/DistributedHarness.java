package io.sluice.benchmarks;

import io.lettuce.core.api.sync.RedisCommands;
import io.sluice.benchmarks.DistributedNodes.Impl;
import io.sluice.benchmarks.DistributedNodes.Node;
import io.sluice.benchmarks.DistributedNodes.Spec;
import io.sluice.node.Ticker;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What the runs of {@link DistributedBenchmark} share: the admin connection that resets and reads
 * Redis's command statistics, the failures and notes the report lists, the run numbers that keep every
 * run's Redis keys apart, and the plumbing of nodes and worker threads (create, join, close, wait).
 *
 * <p>Concurrency: failures, notes and the run number are touched by the driving thread only (worker
 * threads leave what they threw in arrays read after they are joined); errors is a concurrent queue.
 */
final class DistributedHarness {
  private final RedisCommands<String, String> admin;
  final List<String> failures = new ArrayList<>();
  final List<String> notes = new ArrayList<>();
  final ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
  private int runNumber;

  DistributedHarness(RedisCommands<String, String> admin) {
    this.admin = admin;
  }

  RedisCommands<String, String> admin() {
    return admin;
  }

  /** The next run's number: its Redis keys' prefix, after the run kind's letters. */
  int nextRun() {
    return ++runNumber;
  }

  /** {@link DistributedBenchmark#OA_NODES} nodes of an implementation, or null (the failure recorded) when one cannot be made. */
  List<Node> createNodes(String uri, Spec spec, Impl impl, String prefix, String where) {
    List<Node> nodes = new ArrayList<>();
    try {
      for (int i = 0; i < DistributedBenchmark.OA_NODES; i++) {
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
  void joinWorkers(Thread[] workers, long runNanos, String where) throws InterruptedException {
    for (Thread w : workers) {
      w.join(runNanos / 1_000_000 + 15_000);
      if (w.isAlive()) {
        failures.add(where + ": thread " + w.getName() + " still running 15 s after the end");
      }
    }
  }

  void closeNodes(List<Node> nodes, String where) {
    for (Node node : nodes) {
      try {
        node.close();
      } catch (RuntimeException e) {
        failures.add(where + ": close failed: " + e);
      }
    }
  }

  /** Records what a run's threads threw and the store failures the implementations swallowed. */
  void reportFailures(Throwable[] thrown, long swallowed, String where) {
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
  static long storeCalls(List<Node> nodes) {
    long sum = 0;
    for (Node node : nodes) {
      if (node.storeCalls() < 0) {
        return -1;
      }
      sum += node.storeCalls();
    }
    return sum;
  }

  static void waitUntil(long epochNanos) {
    for (long d; (d = epochNanos - Ticker.system().read()) > 0; ) {
      LockSupport.parkNanos(d);
    }
  }

  static void sleepSeconds(double seconds) throws InterruptedException {
    long until = System.nanoTime() + (long) (seconds * 1e9);
    for (long d; (d = until - System.nanoTime()) > 0; ) {
      TimeUnit.NANOSECONDS.sleep(d);
    }
  }

  static void log(String s) {
    PrintStream out = System.out;
    out.println("[distributed] " + s);
  }

  // ------------------------------------------------------------------ Redis stats

  void resetStats() {
    admin.configResetstat();
  }

  /** CPU seconds redis-server has used since it started (user and system, {@code INFO cpu}). */
  double redisCpuSeconds() {
    return usedCpuSeconds(admin.info("cpu"));
  }

  /** User and system CPU seconds in the answer to {@code INFO cpu}. */
  static double usedCpuSeconds(String infoCpu) {
    double sum = 0;
    for (String line : infoCpu.split("\r?\n")) {
      if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
        sum += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
      }
    }
    return sum;
  }

  /** calls= per command since the last reset, without this harness's own INFO and CONFIG calls. */
  Map<String, Long> commandStats() {
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

  static String infoField(String info, String field) {
    for (String line : info.split("\r?\n")) {
      if (line.startsWith(field + ":")) {
        return line.substring(field.length() + 1).trim();
      }
    }
    return "?";
  }
}
