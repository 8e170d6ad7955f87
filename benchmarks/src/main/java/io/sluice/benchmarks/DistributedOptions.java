package io.sluice.benchmarks;

import java.util.regex.Pattern;

/**
 * The command-line options of {@link DistributedBenchmark}: what to run, for how long, and where to
 * write the report. Filled once by {@link #parse} on the main thread, read-only after.
 */
final class DistributedOptions {
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

  static DistributedOptions parse(String[] args) {
    DistributedOptions o = new DistributedOptions();
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
