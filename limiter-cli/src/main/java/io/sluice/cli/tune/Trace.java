package io.sluice.cli.tune;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The requests of one run, generated from the seed alone and replayed unchanged for every setting:
 * request i arrives {@code at[i]} nanoseconds after the start, for key {@code key[i]}, at node
 * {@code node[i]} (uniformly at random, as a load balancer would). Sorted by time.
 */
final class Trace {
  /** Most requests one trace may hold (about 320 MB of arrays at most). */
  static final long MAX_REQUESTS = 20_000_000L;
  /** Key numbers take 20 bits of a packed sort word: at most 2^20 keys. */
  static final int KEY_BITS = 20;
  static final int MAX_KEYS = 1 << KEY_BITS;

  final long[] at;
  final int[] key;
  final int[] node;
  final int keys;
  final int nodes;
  final int windows;
  final long windowNanos;

  private Trace(long[] at, int[] key, int[] node, int keys, int nodes, int windows, long windowNanos) {
    this.at = at;
    this.key = key;
    this.node = node;
    this.keys = keys;
    this.nodes = nodes;
    this.windows = windows;
    this.windowNanos = windowNanos;
  }

  int size() {
    return at.length;
  }

  long durationNanos() {
    return windows * windowNanos;
  }

  /** What the profile asks for over the run, requests (for the size check). */
  static double expected(Profile p, long limit, double demand, int keys, int windows) {
    if (p == Profile.STEP) {
      return (windows / 2) * 0.5 * limit + (windows - windows / 2) * demand * limit;
    }
    return expectedPerWindow(p, limit, demand, keys) * windows;
  }

  private static double expectedPerWindow(Profile p, long limit, double demand, int keys) {
    switch (p) {
      case STEADY:
        return demand * limit;
      case BURSTY:
        return (0.25 + demand) * limit;
      case ZIPF:
        return demand * limit * harmonic(keys);
      case HOT_KEY:
        return (demand + (keys > 1 ? 1 : 0)) * limit;
      case MIXED: {
        int hot = mixedHotKeys(keys);
        int spread = keys - hot;
        double meanFactor = demand * (1 - 1 / Profile.MIXED_SPREAD) / Math.log(Profile.MIXED_SPREAD);
        // a late key is active for half the run on average
        double active = spread == 0 ? 1 : 1 - 0.5 * mixedLateKeys(spread) / spread;
        return (hot * demand + spread * meanFactor * active) * limit;
      }
      default:
        throw new AssertionError(p);
    }
  }

  static Trace generate(Profile p, long limit, double demand, int keys, int nodes, int windows, long windowNanos,
      long seed) {
    return generate(p, limit, demand, keys, nodes, windows, windowNanos, seed, null, false);
  }

  /**
   * As above, with requests spread over the nodes in proportion to {@code nodeWeights} (null: evenly),
   * e.g. to give regions unequal demand, or with {@code keyAffinity} every request of a key to one node,
   * the node drawn from the key.
   */
  static Trace generate(Profile p, long limit, double demand, int keys, int nodes, int windows, long windowNanos,
      long seed, double[] nodeWeights, boolean keyAffinity) {
    double expected = expected(p, limit, demand, keys, windows);
    if (expected > MAX_REQUESTS) {
      throw new IllegalArgumentException(String.format(java.util.Locale.ROOT,
          "the profile %s would replay about %,.0f requests (--limit x --demand x windows of --duration);"
              + " at most %,d: lower --limit, --demand or --duration", p.label, expected, MAX_REQUESTS));
    }
    SplittableRandom rnd = new SplittableRandom(seed);
    Builder b = new Builder((int) Math.min(Integer.MAX_VALUE - 8, (long) (expected * 1.1) + 1_024));
    arrivals(b, rnd, p, limit, demand, keys, windows, windowNanos);
    return b.build(rnd, nodes, p.manyKeys() ? keys : 1, windows, windowNanos, nodeWeights, keyAffinity);
  }

  /** The profile's requests, their times and keys, into {@code b}. */
  private static void arrivals(Builder b, SplittableRandom rnd, Profile p, long limit, double demand, int keys,
      int windows, long windowNanos) {
    double perWindow = windowNanos;
    long end = windows * windowNanos;
    switch (p) {
      case STEADY:
        poisson(b, rnd, 0, end, demand * limit / perWindow, r -> 0);
        break;
      case BURSTY:
        poisson(b, rnd, 0, end, 0.25 * limit / perWindow, r -> 0);
        bursts(b, rnd, Math.round(demand * limit), windows, windowNanos);
        break;
      case ZIPF: {
        double h = harmonic(keys);
        double[] cumulative = zipfCumulative(keys, h);
        poisson(b, rnd, 0, end, demand * limit * h / perWindow, r -> pick(cumulative, r.nextDouble()));
        break;
      }
      case HOT_KEY: {
        double cold = keys > 1 ? 1.0 : 0.0;
        double hotShare = demand / (demand + cold);
        poisson(b, rnd, 0, end, (demand + cold) * limit / perWindow,
            r -> keys == 1 || r.nextDouble() < hotShare ? 0 : 1 + r.nextInt(keys - 1));
        break;
      }
      case STEP: {
        long half = (windows / 2) * windowNanos;
        poisson(b, rnd, 0, half, 0.5 * limit / perWindow, r -> 0);
        poisson(b, rnd, half, end, demand * limit / perWindow, r -> 0);
        break;
      }
      case MIXED: {
        Mixed plan = Mixed.plan(keys, demand, end, rnd);
        for (int k = 0; k < keys; k++) {
          int key = k;
          poisson(b, rnd, plan.startNanos[k], end, plan.demand[k] * limit / perWindow, r -> key);
        }
        break;
      }
      default:
        throw new AssertionError(p);
    }
  }

  /** The bursty profile's bursts: {@code burst} requests in a tenth of each window, at a random place in it. */
  private static void bursts(Builder b, SplittableRandom rnd, long burst, int windows, long windowNanos) {
    long width = windowNanos / 10;
    for (int w = 0; w < windows; w++) {
      long from = w * windowNanos + (long) (rnd.nextDouble() * (windowNanos - width));
      for (long i = 0; i < burst; i++) {
        b.add(from + (long) (rnd.nextDouble() * width), 0);
      }
    }
  }

  /** Zipf's law over the keys (key k at 1 / (k + 1)), cumulative, for {@link #pick}. */
  private static double[] zipfCumulative(int keys, double h) {
    double[] cumulative = new double[keys];
    double sum = 0;
    for (int k = 0; k < keys; k++) {
      sum += 1.0 / (k + 1) / h;
      cumulative[k] = sum;
    }
    cumulative[keys - 1] = 1.0;
    return cumulative;
  }

  /** The mixed profile's hot keys (at D x L): 1 per 50 keys, at least 1 and at most 3. */
  static int mixedHotKeys(int keys) {
    return Math.max(1, Math.min(3, keys / 50));
  }

  /** How many of the mixed profile's spread keys start at a random moment of the run: a quarter. */
  static int mixedLateKeys(int spreadKeys) {
    return (spreadKeys + 2) / 4;
  }

  /**
   * The mixed profile's keys: keys 0 to h-1 are hot (D x L per window); the others have rates spread
   * log-uniformly over D/300 x L to D x L (stratified: the i-th of S keys in order of rate has its rate
   * drawn within the i-th S-th of the log range, so every seed covers the whole spread), assigned to
   * key numbers in a seeded random order. Every fourth spread key in order of rate (so late keys have
   * all rates) starts at a moment drawn uniformly over the run, almost always inside a window, instead
   * of at the start: the limiter first sees it mid-run and mid-window.
   */
  static final class Mixed {
    /** Per key, its demand in units of the limit per window. */
    final double[] demand;
    /** Per key, when its Poisson arrivals begin, nanoseconds after the start of the run. */
    final long[] startNanos;

    private Mixed(double[] demand, long[] startNanos) {
      this.demand = demand;
      this.startNanos = startNanos;
    }

    static Mixed plan(int keys, double topDemand, long runNanos, SplittableRandom rnd) {
      int hot = Math.min(keys, mixedHotKeys(keys));
      int spread = keys - hot;
      double[] demand = new double[keys];
      long[] start = new long[keys];
      for (int k = 0; k < hot; k++) {
        demand[k] = topDemand;
      }
      int[] order = new int[spread];
      for (int i = 0; i < spread; i++) {
        order[i] = i;
      }
      for (int i = spread - 1; i > 0; i--) {
        int j = rnd.nextInt(i + 1);
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
      }
      double logSpread = Math.log(Profile.MIXED_SPREAD);
      for (int i = 0; i < spread; i++) {
        int key = hot + order[i];
        double u = (i + rnd.nextDouble()) / spread;
        demand[key] = topDemand * Math.exp((u - 1) * logSpread);
        if (i % 4 == 1) {
          start[key] = (long) (rnd.nextDouble() * runNanos);
        }
      }
      return new Mixed(demand, start);
    }
  }

  private interface KeyPicker {
    int pick(SplittableRandom rnd);
  }

  /** Poisson arrivals at {@code ratePerNano} between from and end (exponential gaps). */
  private static void poisson(Builder b, SplittableRandom rnd, long from, long end, double ratePerNano, KeyPicker keys) {
    if (ratePerNano <= 0) {
      return;
    }
    double t = from;
    for (;;) {
      t += -Math.log(1 - rnd.nextDouble()) / ratePerNano;
      if (t >= end) {
        return;
      }
      b.add((long) t, keys.pick(rnd));
    }
  }

  private static int pick(double[] cumulative, double u) {
    int i = Arrays.binarySearch(cumulative, u);
    return Math.min(cumulative.length - 1, i >= 0 ? i : -i - 1);
  }

  static double harmonic(int n) {
    double h = 0;
    for (int k = 1; k <= n; k++) {
      h += 1.0 / k;
    }
    return h;
  }

  private static final class Builder {
    // time << KEY_BITS | key: sorts by time, then key, in one primitive sort; 2^43 ns is over two hours
    private long[] packed;
    private int n;

    Builder(int capacity) {
      packed = new long[Math.max(16, capacity)];
    }

    void add(long at, int key) {
      if (n == packed.length) {
        if (n >= MAX_REQUESTS) {
          throw new IllegalArgumentException("the trace would hold more than " + MAX_REQUESTS + " requests");
        }
        packed = Arrays.copyOf(packed, (int) Math.min(MAX_REQUESTS, (long) n * 2));
      }
      packed[n++] = (at << KEY_BITS) | key;
    }

    Trace build(SplittableRandom rnd, int nodes, int keys, int windows, long windowNanos, double[] nodeWeights,
        boolean keyAffinity) {
      double[] cumulative = null;
      if (nodeWeights != null) {
        cumulative = new double[nodes];
        double sum = 0;
        for (int i = 0; i < nodes; i++) {
          sum += nodeWeights[i];
          cumulative[i] = sum;
        }
        for (int i = 0; i < nodes; i++) {
          cumulative[i] /= sum;
        }
      }
      long[] sorted = Arrays.copyOf(packed, n);
      packed = null;
      Arrays.sort(sorted);
      long[] at = new long[n];
      int[] key = new int[n];
      int[] node = new int[n];
      for (int i = 0; i < n; i++) {
        at[i] = sorted[i] >>> KEY_BITS;
        key[i] = (int) (sorted[i] & ((1L << KEY_BITS) - 1));
        node[i] = keyAffinity ? nodeOfKey(key[i], nodes)
            : cumulative == null ? rnd.nextInt(nodes) : pick(cumulative, rnd.nextDouble());
      }
      return new Trace(at, key, node, keys, nodes, windows, windowNanos);
    }
  }

  /**
   * The node every request of key {@code key} goes to under --key-affinity: the key's index times an odd
   * constant, mod the nodes (for a power-of-two node count, the index mod the nodes), so that the keys,
   * hot and cold, spread evenly.
   */
  static int nodeOfKey(int key, int nodes) {
    return Math.floorMod(key * 0x9E3779B9, nodes);
  }
}
