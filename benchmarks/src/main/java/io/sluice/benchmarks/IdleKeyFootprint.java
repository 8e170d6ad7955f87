package io.sluice.benchmarks;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.sluice.node.Limit;
import io.sluice.node.RateLimiter;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;
import java.util.stream.Collectors;

/**
 * Heap bytes per idle key held in a key table, for Sluice and for the usual
 * "ConcurrentHashMap of per-key limiters" with Bucket4j, Resilience4j and Guava.
 *
 * <p>Each implementation takes one decision on each of N distinct keys (default 1,000,000) with a
 * limit that keeps every key busy for the whole test (capacity 10, refill 1 per hour), so that no
 * key is at rest and Sluice evicts nothing. Used heap is read from the {@link MemoryMXBean} after
 * repeated {@link System#gc()}, before and after the inserts; the key Strings are created first and
 * kept alive through both readings, so the per-key figure excludes them. Their own cost (String,
 * its byte[] and the slot of the array holding it) is measured separately and added for the
 * "including the key" column.
 *
 * <p>Run with a fixed heap and the serial collector for exact, stable readings:
 *
 * <pre>
 * java -Xms4g -Xmx4g -XX:+UseSerialGC -cp benchmarks/target/benchmarks.jar \
 *     io.sluice.benchmarks.IdleKeyFootprint benchmarks/results/idle-key-footprint.md [keys]
 * </pre>
 */
public final class IdleKeyFootprint {
  private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

  private IdleKeyFootprint() {
  }

  /** One implementation: fills a table with the given keys and returns it (to be kept alive). */
  interface Table {
    Object fill(String[] keys);
  }

  public static void main(String[] args) throws IOException {
    if (args.length < 1 || args.length > 2) {
      System.err.println("usage: IdleKeyFootprint <output.md> [keys, default 1000000]");
      System.exit(2);
    }
    Path out = Path.of(args[0]);
    int n = args.length > 1 ? Integer.parseInt(args[1].replace("_", "")) : 1_000_000;
    String report = run(n);
    System.out.println(report);
    if (out.getParent() != null) {
      Files.createDirectories(out.getParent());
    }
    Files.writeString(out, report, StandardCharsets.UTF_8);
    System.out.println("written to " + out);
  }

  static String run(int n) {
    List<String[]> rows = new ArrayList<>();
    List<Object[]> impls = List.of(
        new Object[] {"ConcurrentHashMap<String, Object> alone (baseline, shared value)", (Table) IdleKeyFootprint::chmOnly},
        new Object[] {"Sluice RateLimiter (own key table)", (Table) IdleKeyFootprint::sluice},
        new Object[] {"Bucket4j 8.15 LockFreeBucket + ConcurrentHashMap", (Table) IdleKeyFootprint::bucket4j},
        new Object[] {"Resilience4j 2.4 AtomicRateLimiter + ConcurrentHashMap", (Table) IdleKeyFootprint::resilience4j},
        new Object[] {"Guava 33.8 RateLimiter + ConcurrentHashMap", (Table) IdleKeyFootprint::guava});

    // Warm up: load every class and run static initialisers, so they are not charged to the keys.
    String[] warm = keys(2_000, "warm-");
    for (Object[] impl : impls) {
      Reference.reachabilityFence(((Table) impl[1]).fill(warm));
    }
    warm = null;

    long beforeStrings = usedHeap();
    String[] keys = keys(n, "user-");
    long afterStrings = usedHeap();
    double stringBytes = (afterStrings - beforeStrings) / (double) n;

    for (Object[] impl : impls) {
      String name = (String) impl[0];
      Table table = (Table) impl[1];
      long before = usedHeap();
      Object filled = table.fill(keys);
      long after = usedHeap();
      Reference.reachabilityFence(filled);
      filled = null;
      double perKey = (after - before) / (double) n;
      System.err.printf(Locale.ROOT, "%-70s %8.1f bytes/key%n", name, perKey);
      rows.add(new String[] {name, fmt(perKey), fmt(perKey + stringBytes)});
    }
    Reference.reachabilityFence(keys);

    StringBuilder md = new StringBuilder();
    md.append("## Idle key footprint\n\n");
    md.append(String.format(Locale.ROOT, "Heap per idle key, %,d distinct keys, one allowed decision each"
        + " (capacity 10, refill 1 per hour: no key returns to rest). Used heap after repeated"
        + " System.gc(), before and after the inserts.%n%n", n));
    md.append("| implementation | bytes/key excl. key String | bytes/key incl. key String |\n");
    md.append("|---|---:|---:|\n");
    for (String[] r : rows) {
      md.append("| ").append(r[0]).append(" | ").append(r[1]).append(" | ").append(r[2]).append(" |\n");
    }
    md.append(String.format(Locale.ROOT, "%nKey String cost: %s bytes/key (String + byte[] of a Latin-1 key like"
        + " \"user-0000123\" + the 4-byte slot of the String[] holding it); the last column adds it.%n",
        fmt(stringBytes)));
    md.append(String.format(Locale.ROOT, "%nJVM: %s %s, %s, max heap %,d MB, compressed oops %s.%n",
        System.getProperty("java.vm.name"), System.getProperty("java.vm.version"), gcNames(),
        MEMORY.getHeapMemoryUsage().getMax() >> 20, vmOption("UseCompressedOops")));
    return md.toString();
  }

  // ---------------------------------------------------------------- implementations

  static Object chmOnly(String[] keys) {
    Object value = new Object();
    ConcurrentHashMap<String, Object> map = new ConcurrentHashMap<>();
    for (String key : keys) {
      map.computeIfAbsent(key, k -> value);
    }
    check("baseline", map.size(), keys.length);
    return map;
  }

  static Object sluice(String[] keys) {
    Limit limit = Limit.tokenBucket("idle").capacity(10).refill(1, Duration.ofHours(1)).build();
    RateLimiter limiter = RateLimiter.builder(limit).maxKeys(keys.length).build();
    for (String key : keys) {
      KeyedDecisionBenchmark.requireAllowed("sluice", limiter.tryAcquire(key));
    }
    check("sluice", limiter.size(), keys.length);
    if (limiter.evicted() != 0 || limiter.overflowed() != 0) {
      throw new IllegalStateException("sluice: evicted=" + limiter.evicted() + " overflowed=" + limiter.overflowed());
    }
    return limiter;
  }

  static Object bucket4j(String[] keys) {
    Bandwidth bandwidth = Bandwidth.builder().capacity(10).refillGreedy(1, Duration.ofHours(1)).build();
    return fillMap("bucket4j", keys, k -> Bucket.builder().addLimit(bandwidth).build(), b -> b.tryConsume(1));
  }

  static Object resilience4j(String[] keys) {
    RateLimiterConfig config = RateLimiterConfig.custom()
        .limitForPeriod(10)
        .limitRefreshPeriod(Duration.ofHours(1))
        .timeoutDuration(Duration.ZERO)
        .build();
    return fillMap("resilience4j", keys, k -> io.github.resilience4j.ratelimiter.RateLimiter.of(k, config),
        io.github.resilience4j.ratelimiter.RateLimiter::acquirePermission);
  }

  static Object guava(String[] keys) {
    // Guava has no capacity: 1 permit per hour (its burst is one second's worth of permits).
    return fillMap("guava", keys, k -> com.google.common.util.concurrent.RateLimiter.create(1.0 / 3600),
        com.google.common.util.concurrent.RateLimiter::tryAcquire);
  }

  interface Decide<T> {
    boolean decide(T limiter);
  }

  interface Factory<T> {
    T create(String key);
  }

  private static <T> Object fillMap(String name, String[] keys, Factory<T> factory, Decide<T> decide) {
    ConcurrentHashMap<String, T> map = new ConcurrentHashMap<>();
    for (String key : keys) {
      T limiter = map.get(key);
      if (limiter == null) {
        limiter = map.computeIfAbsent(key, factory::create);
      }
      KeyedDecisionBenchmark.requireAllowed(name, decide.decide(limiter));
    }
    check(name, map.size(), keys.length);
    return map;
  }

  // ---------------------------------------------------------------- measuring

  static String[] keys(int n, String prefix) {
    IntFunction<String> name = i -> {
      String digits = Integer.toString(i);
      StringBuilder sb = new StringBuilder(prefix.length() + 7).append(prefix);
      for (int pad = digits.length(); pad < 7; pad++) {
        sb.append('0');
      }
      return sb.append(digits).toString();
    };
    String[] keys = new String[n];
    for (int i = 0; i < n; i++) {
      keys[i] = name.apply(i);
      keys[i].hashCode(); // cache the hash as a map would (the field exists either way)
    }
    return keys;
  }

  /** Used heap after full collections, once it stops shrinking. */
  static long usedHeap() {
    long best = Long.MAX_VALUE;
    int stable = 0;
    for (int i = 0; i < 20 && stable < 3; i++) {
      System.gc();
      long used = MEMORY.getHeapMemoryUsage().getUsed();
      if (used < best - 1024) {
        best = used;
        stable = 0;
      } else {
        best = Math.min(best, used);
        stable++;
      }
    }
    return best;
  }

  private static void check(String name, int size, int expected) {
    if (size != expected) {
      throw new IllegalStateException(name + ": holds " + size + " keys, expected " + expected);
    }
  }

  private static String fmt(double bytes) {
    return String.format(Locale.ROOT, "%.1f", bytes);
  }

  private static String gcNames() {
    return ManagementFactory.getGarbageCollectorMXBeans().stream()
        .map(GarbageCollectorMXBean::getName).collect(Collectors.joining(" + "));
  }

  private static String vmOption(String option) {
    try {
      return ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class).getVMOption(option).getValue();
    } catch (RuntimeException e) {
      return "unknown";
    }
  }
}
