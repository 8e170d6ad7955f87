package io.sluice.benchmarks;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.sluice.benchmarks.DistributedNodes.Impl;
import io.sluice.benchmarks.DistributedNodes.Node;
import io.sluice.benchmarks.DistributedNodes.Spec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What one exact decision costs in CPU, Sluice's exact mode beside the hand-written one-script limiter
 * ({@link ExactBaseline}): the Java process's CPU time and redis-server's ({@code INFO cpu}) per
 * decision, and Redis's time inside the EVALSHA calls ({@code INFO commandstats}). CPU time moves far
 * less than decisions/s when other work shares the machine, so it compares the two where a
 * throughput run cannot (on a loaded 2-core VM cells of one run moved by up to 5x). Rounds alternate
 * the implementations; the median of the rounds is printed.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.sluice.benchmarks.ExactCost [decisions per round] [rounds] [threads]
 * </pre>
 */
public final class ExactCost {
  private ExactCost() {
  }

  public static void main(String[] args) throws Exception {
    int decisions = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
    List<Impl> impls = new ArrayList<>(ExactBaseline.impls());
    impls.add(0, DistributedNodes.sluice(1L));
    Spec spec = new Spec(DistributedBenchmark.THROUGHPUT_LIMIT, Duration.ofSeconds(1), false);
    Map<String, double[][]> results = new LinkedHashMap<>(); // per impl: [round][java, redis, script, wall, commands]
    try (RedisLauncher redis = RedisLauncher.start("redis-server")) {
      RedisClient adminClient = RedisClient.create(redis.uri());
      try (StatefulRedisConnection<String, String> admin = adminClient.connect()) {
        RedisCommands<String, String> cli = admin.sync();
        int run = 0;
        for (int r = 0; r < rounds; r++) {
          for (Impl impl : impls) {
            double[] m = null;
            for (int attempt = 1; m == null; attempt++) {
              try {
                m = round(cli, impl, spec, "c" + (++run), decisions, threads);
              } catch (RuntimeException e) {
                // (a busy machine may time a connection or a script load out: that round again)
                if (attempt == 3) {
                  throw e;
                }
                System.err.println("ExactCost: " + impl.label() + " round " + (r + 1) + " failed (" + e + "); again");
              }
            }
            results.computeIfAbsent(impl.label(), k -> new double[rounds][]) [r] = m;
          }
        }
      } finally {
        adminClient.shutdown(0, 1, TimeUnit.SECONDS);
      }
    }
    System.out.printf(Locale.ROOT, "%d decisions per round, %d rounds, %d thread(s), one shared key; medians"
        + " (min-max) per decision%n", decisions, rounds, threads);
    System.out.printf(Locale.ROOT, "%-46s %-22s %-22s %-22s %-22s %s%n", "implementation", "Java CPU us",
        "redis-server CPU us", "EVALSHA time in Redis us", "wall us", "Redis commands");
    for (Map.Entry<String, double[][]> e : results.entrySet()) {
      StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-46s", e.getKey()));
      for (int k = 0; k < 5; k++) {
        double[] v = new double[rounds];
        for (int r = 0; r < rounds; r++) {
          v[r] = e.getValue()[r][k];
        }
        Arrays.sort(v);
        line.append(String.format(Locale.ROOT, k == 4 ? " %.3f" : " %-22s", k == 4 ? v[rounds / 2]
            : String.format(Locale.ROOT, "%.2f (%.2f-%.2f)", v[rounds / 2], v[0], v[rounds - 1])));
      }
      System.out.println(line);
    }
    System.out.flush();
    Runtime.getRuntime().halt(0); // (Lettuce's and Netty's threads linger a while after shutdown)
  }

  /** One round of one implementation: a warm-up, then {@code decisions} decisions measured. */
  private static double[] round(RedisCommands<String, String> cli, Impl impl, Spec spec, String prefix,
      int decisions, int threads) throws Exception {
    try (Node node = impl.factory().create(cliUri(cli), spec, prefix, 0)) {
      decide(node, 2_000, threads);
      cli.configResetstat();
      double redisCpu0 = redisCpu(cli);
      long java0 = javaCpuNanos();
      long t0 = System.nanoTime();
      decide(node, decisions, threads);
      long wall = System.nanoTime() - t0;
      long java = javaCpuNanos() - java0;
      double redisCpu = redisCpu(cli) - redisCpu0;
      long commands = 0;
      double scriptMicros = 0;
      for (String line : cli.info("commandstats").split("\r?\n")) {
        if (!line.startsWith("cmdstat_") || line.startsWith("cmdstat_info") || line.startsWith("cmdstat_config")) {
          continue;
        }
        long calls = field(line, "calls=");
        commands += calls;
        if (line.startsWith("cmdstat_evalsha:")) {
          scriptMicros = field(line, "usec=");
        }
      }
      return new double[] {java / 1e3 / decisions, redisCpu * 1e6 / decisions, scriptMicros / decisions,
          wall / 1e3 / decisions * threads, (double) commands / decisions};
    }
  }

  private static String uri;

  private static String cliUri(RedisCommands<String, String> cli) {
    if (uri == null) {
      uri = "redis://127.0.0.1:" + cli.configGet("port").get("port");
    }
    return uri;
  }

  private static void decide(Node node, int decisions, int threads) throws InterruptedException {
    Thread[] workers = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      int share = decisions / threads + (t < decisions % threads ? 1 : 0);
      workers[t] = new Thread(() -> {
        for (int i = 0; i < share; i++) {
          if (!node.tryAcquire("shared")) {
            throw new IllegalStateException("denied with the limit far away");
          }
        }
      });
      workers[t].start();
    }
    for (Thread w : workers) {
      w.join();
    }
  }

  private static long field(String line, String name) {
    int at = line.indexOf(name) + name.length();
    int end = at;
    while (end < line.length() && (Character.isDigit(line.charAt(end)))) {
      end++;
    }
    return Long.parseLong(line.substring(at, end));
  }

  private static double redisCpu(RedisCommands<String, String> cli) {
    return DistributedHarness.usedCpuSeconds(cli.info("cpu"));
  }

  private static long javaCpuNanos() {
    return ManyKeyThroughput.processCpuNanos();
  }
}
