package io.sluice.benchmarks;

import io.sluice.node.Limit;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;

/**
 * What new keys cost a {@link SyncedLimiter} on a real Redis (started by the harness on a free loopback
 * port), one thread, every decision on a key never seen before (each asks the store once: a cold key's
 * take), and what the limiter gives back once keys go idle:
 * <ol>
 *   <li>a key table filling up ({@code --max-keys} new keys, windows of an hour so none goes idle), then
 *       full while new keys keep coming (as many again): decisions per second, p50 / p99 / max, and
 *       the ratio of the two (a full table once scanned itself for every new key: 753 decisions/s,
 *       p99 13 ms);</li>
 *   <li>{@code --keys} new keys on windows of 10 s: the views held and the heap they take (used heap
 *       after GC, against the same reading before), then the same once their windows are over and the
 *       flusher has dropped them.</li>
 * </ol>
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+UseSerialGC -cp benchmarks/target/benchmarks.jar io.sluice.benchmarks.SyncedKeyTable \
 *     benchmarks/results/synced-key-table.md [--max-keys 100000] [--keys 200000] [--redis-server redis-server]
 * </pre>
 */
public final class SyncedKeyTable {
  private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

  private SyncedKeyTable() {
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: SyncedKeyTable <output.md> [--max-keys N] [--keys N] [--redis-server binary]");
      System.exit(2);
    }
    Path out = Path.of(args[0]);
    int maxKeys = 100_000;
    int keys = 200_000;
    String redisServer = "redis-server";
    for (int i = 1; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--max-keys" -> maxKeys = positive("--max-keys", args[i + 1]);
        case "--keys" -> keys = positive("--keys", args[i + 1]);
        case "--redis-server" -> redisServer = args[i + 1];
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    StringBuilder md = new StringBuilder("# New keys on a SyncedLimiter (Redis)\n\n");
    md.append(String.format(Locale.ROOT, "Run by `io.sluice.benchmarks.SyncedKeyTable` on %d cores, Java %s, one thread;"
        + " every decision is on a key never seen before (a cold key: it asks the store once).%n%n",
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.version")));
    try (RedisLauncher redis = RedisLauncher.start(redisServer);
        RedisCounterStore store = RedisCounterStore.connect(RedisStoreConfig.builder(redis.uri()).build())) {
      fullTable(md, store, maxKeys);
      idleKeys(md, store, keys);
    }
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, md.toString(), StandardCharsets.UTF_8);
    System.out.print(md);
  }

  /** The key table filling up, then full while new keys keep coming. */
  private static void fullTable(StringBuilder md, RedisCounterStore store, int maxKeys) {
    Limit hourly = Limit.fixedWindow("table").limit(1_000).window(Duration.ofHours(1)).build();
    try (SyncedLimiter limiter = SyncedLimiter.builder(hourly, store).maxKeys(maxKeys).build()) {
      warmUp(limiter);
      Phase filling = run(limiter, "fill-", maxKeys - 1_000);
      Phase full = run(limiter, "more-", maxKeys);
      md.append("| key table (max ").append(String.format(Locale.ROOT, "%,d", maxKeys))
          .append(" keys) | new keys | decisions/s | p50 (µs) | p99 (µs) | max (ms) |\n|---|---:|---:|---:|---:|---:|\n");
      md.append(filling.row("filling up (each new key asks the store)"))
          .append(full.row("full, new keys keep coming (charged to the shared overflow view)"));
      md.append(String.format(Locale.ROOT, "%nOn the full table %,d decisions went to the overflow view: the table"
          + " had no idle view to drop (hour-long windows), and a sweep runs at most every 100 ms, so a new key"
          + " costs no scan of the table; the overflow view is one budget that all of them share.%n%n",
          limiter.overflowed()));
    }
  }

  /** New keys on short windows: the views and heap they hold, then what is left once their windows are over. */
  private static void idleKeys(StringBuilder md, RedisCounterStore store, int keys) throws InterruptedException {
    Limit shortWindows = Limit.fixedWindow("idle").limit(1_000).window(Duration.ofSeconds(10)).build();
    long before = usedHeap();
    try (SyncedLimiter limiter = SyncedLimiter.builder(shortWindows, store).maxKeys(Math.max(keys, 1)).build()) {
      Phase fill = run(limiter, "idle-", keys);
      int held = limiter.keys();
      long heldHeap = usedHeap() - before;
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (limiter.keys() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(500);
      }
      int left = limiter.keys();
      long leftHeap = usedHeap() - before;
      md.append(String.format(Locale.ROOT, "Idle keys given back (%,d new keys on 10 s windows, %,.0f decisions/s):%n%n"
          + "| | views held | heap above the reading before (MB) | per view held (bytes) |%n|---|---:|---:|---:|%n"
          + "| after the last new key | %,d | %.1f | %s |%n| once their windows were over | %,d | %.1f | – |%n",
          keys, fill.perSecond(), held, heldHeap / 1e6, held > 0 ? Long.toString(heldHeap / held) : "–", left,
          leftHeap / 1e6));
    }
  }

  private static int positive(String name, String value) {
    int n = Integer.parseInt(value);
    if (n <= 0) {
      throw new IllegalArgumentException(name + ": must be positive, got " + value);
    }
    return n;
  }

  private static void warmUp(SyncedLimiter limiter) {
    for (int i = 0; i < 1_000; i++) {
      limiter.tryAcquire("warm-" + i);
    }
  }

  /** One decision on each of {@code n} new keys, timed one by one. */
  private static Phase run(SyncedLimiter limiter, String prefix, int n) {
    String[] keys = new String[n];
    for (int i = 0; i < n; i++) {
      keys[i] = prefix + i;
    }
    long[] nanos = new long[n];
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      limiter.tryAcquire(keys[i]);
      nanos[i] = System.nanoTime() - t0;
    }
    long elapsed = System.nanoTime() - start;
    Arrays.sort(nanos);
    return new Phase(n, elapsed, nanos[n / 2], nanos[(int) (n * 0.99)], nanos[n - 1]);
  }

  private record Phase(int keys, long elapsedNanos, long p50, long p99, long max) {
    double perSecond() {
      return keys * 1e9 / elapsedNanos;
    }

    String row(String name) {
      return String.format(Locale.ROOT, "| %s | %,d | %,.0f | %.1f | %.1f | %.1f |%n", name, keys, perSecond(),
          p50 / 1e3, p99 / 1e3, max / 1e6);
    }
  }

  private static long usedHeap() throws InterruptedException {
    for (int i = 0; i < 4; i++) {
      System.gc();
      Thread.sleep(100);
    }
    return MEMORY.getHeapMemoryUsage().getUsed();
  }

  static {
    // (quiet: Lettuce logs through java.util.logging)
    java.util.logging.Logger.getLogger("io.lettuce").setLevel(java.util.logging.Level.WARNING);
  }
}
