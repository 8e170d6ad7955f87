package io.sluice.region;

import io.sluice.node.ManualTicker;
import io.sluice.sync.RedisServer;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.StoreUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.function.IntToDoubleFunction;

/**
 * Regions as real processes on loopback, driven in simulated time: one redis-server per region,
 * nodes (SyncedLimiters, each on its own connection) in every region, and coordinator replicas in a
 * real Hazelcast cluster. Time is a {@link ManualTicker} shared by nodes and coordinators, advanced in
 * 10 ms steps: nodes flush every 100 ms and coordinators run a round every second, so a run is
 * repeatable and its figures do not depend on how busy the machine is. The coordinator's link to a
 * region can be cut (its calls fail) while the region's nodes keep their own.
 */
public final class RegionRig implements AutoCloseable {
  static final long STEP_NANOS = 10_000_000L;
  static final long SYNC_NANOS = 100_000_000L;
  static final long ROUND_NANOS = 1_000_000_000L;

  final GlobalQuota quota;
  final ManualTicker ticker;
  final List<String> regionNames = new ArrayList<>();
  final List<RedisServer> servers = new ArrayList<>();
  final List<List<SyncedLimiter>> nodes = new ArrayList<>();
  final List<RedisCounterStore> stores = new ArrayList<>();
  final List<RegionCoordinator> coordinators = new ArrayList<>();
  final boolean[] cut;
  /** Per key, per window, per region: permits the nodes admitted (their own decisions, the ground truth). */
  final Map<String, Map<Long, long[]>> admitted = new java.util.HashMap<>();
  /**
   * Per key, for a sliding quota: the highest the regions' sliding estimate went (window w's count,
   * all regions, plus window w - 1's at the weight the counter gives it) at any step, in permits.
   */
  final Map<String, Double> peakSlidingEstimate = new java.util.HashMap<>();
  /** Per key, per step (its time, ns): permits admitted in all regions (a token-bucket quota's bound is over any interval). */
  final Map<String, TreeMap<Long, Long>> admittedAt = new java.util.HashMap<>();
  private final double[] carry;
  private int nextNode;
  /** How often the coordinators are asked for a round, ns of simulated time (a whole number of steps). */
  long roundNanos = ROUND_NANOS;

  public RegionRig(int regions, int nodesPerRegion, GlobalQuota quota) {
    this(regions, nodesPerRegion, quota, DIRECT);
  }

  /** Where region r's nodes reach its redis-server on loopback port {@code port} (through a proxy, in chaos tests). */
  @FunctionalInterface
  public interface NodeLink {
    String uri(int region, int port);
  }

  /** Nodes that reach their region's redis-server directly. */
  public static final NodeLink DIRECT = (r, port) -> "redis://127.0.0.1:" + port;

  /** A rig whose nodes reach their region's Redis at {@code nodeLink}'s address (the coordinator directly). */
  public RegionRig(int regions, int nodesPerRegion, GlobalQuota quota, NodeLink nodeLink) {
    this(regions, nodesPerRegion, quota, nodeLink, 1);
  }

  /**
   * A rig whose token-bucket quota's nodes claim tokens in batches of {@code bucketBatch} (1: exact mode,
   * one script per decision).
   */
  public RegionRig(int regions, int nodesPerRegion, GlobalQuota quota, NodeLink nodeLink, long bucketBatch) {
    this.quota = quota;
    // start on a window edge, so that the first window is a whole one
    long window = quota.window().toNanos();
    this.ticker = new ManualTicker(Math.floorDiv(System.currentTimeMillis() * 1_000_000L, window) * window + window);
    this.cut = new boolean[regions];
    this.carry = new double[regions];
    try {
      for (int r = 0; r < regions; r++) {
        regionNames.add("region-" + (char) ('a' + r));
        RedisServer server = RedisServer.start();
        servers.add(server);
        List<SyncedLimiter> list = new ArrayList<>();
        for (int n = 0; n < nodesPerRegion; n++) {
          RedisCounterStore store = RedisCounterStore.connect(redis(nodeLink.uri(r, server.port())));
          stores.add(store);
          SyncedLimiter.Builder b = SyncedLimiter.builder(quota.limit(), store).nodeId(regionNames.get(r) + "-" + n)
              .ticker(ticker).autoSync(false).activeNodes(() -> nodesPerRegion).regionalQuota(regions)
              .heartbeatInterval(Duration.ofMillis(100)) // (beats at every sync below, on the wall clock)
              .flushTimeout(Duration.ofSeconds(10));
          if (quota.bucket()) {
            b.onStoreFailure(StoreFailurePolicy.FAIL_CLOSED); // (a regional bucket's policies admit nothing uncounted)
            if (bucketBatch > 1) {
              b.batchSize(bucketBatch);
            }
          }
          list.add(b.build());
        }
        nodes.add(list);
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  CoordinatorConfig config(String cluster) {
    return config(cluster, r -> redis(servers.get(r).uri()));
  }

  /** The coordinator's configuration, reaching region r with {@code region.apply(r)}. */
  private CoordinatorConfig config(String cluster, java.util.function.IntFunction<RedisStoreConfig> region) {
    CoordinatorConfig.Builder b = CoordinatorConfig.builder().quota(quota).cluster(cluster, 5801, 20)
        .lease(Duration.ofSeconds(5));
    for (int r = 0; r < servers.size(); r++) {
      b.region(Region.of(regionNames.get(r), region.apply(r)));
    }
    return b.build();
  }

  /**
   * A coordinator replica on the rig's clock that reaches region r at {@code regionUri.apply(r)}
   * (through Toxiproxy, in the chaos tests) with the default timeouts a deployment would have.
   */
  public RegionCoordinator addCoordinator(String cluster, java.util.function.IntFunction<String> regionUri) {
    RegionCoordinator c = RegionCoordinator.start(
        config(cluster, r -> RedisStoreConfig.builder(regionUri.apply(r)).build()), ticker, false);
    coordinators.add(c);
    return c;
  }

  public int regions() {
    return servers.size();
  }

  /**
   * Kills region r's redis-server and starts a fresh one on the same port: every key gone (counts,
   * the coordinator's share records, the nodes' sequences); the nodes and the coordinator reconnect.
   */
  public void restartEmpty(int r) {
    int port = servers.get(r).port();
    servers.get(r).close();
    servers.set(r, RedisServer.start(port));
  }

  /** The plain loopback port of region r's redis-server. */
  public int redisPort(int r) {
    return servers.get(r).port();
  }

  /** A coordinator replica in the given Hazelcast cluster, whose link to a region fails while it is cut. */
  RegionCoordinator addCoordinator(String cluster) {
    RegionCoordinator c = new RegionCoordinator(config(cluster), ticker, region -> {
      int r = regionNames.indexOf(region.name());
      RegionClient real = RegionClient.of(region);
      return new RegionClient() {
        private void check() {
          if (cut[r]) {
            throw new StoreUnavailableException("region " + region.name() + " is cut off (test)", null);
          }
        }

        @Override
        public long epoch() {
          check();
          return real.epoch();
        }

        @Override
        public List<String> keys(io.sluice.node.Limit limit, long window, int maxKeys) {
          check();
          return real.keys(limit, window, maxKeys);
        }

        @Override
        public RegionShareStore.Registry nodes() {
          check();
          return real.nodes();
        }

        @Override
        public List<RegionShareStore.KeyState> read(io.sluice.node.Limit limit, long window, List<String> keys) {
          check();
          return real.read(limit, window, keys);
        }

        @Override
        public RegionShareStore.WriteResult write(long epoch, io.sluice.sync.spi.Counter counter, long window,
            long nowMicros, Duration ttl, List<RegionShareStore.ShareWrite> writes) {
          check();
          return real.write(epoch, counter, window, nowMicros, ttl, writes);
        }

        @Override
        public void close() {
          real.close();
        }
      };
    }, false);
    coordinators.add(c);
    return c;
  }

  /** Decisions region r's nodes left to their failure policy so far (the store failed, or their breaker was open). */
  public long fallbackDecisions(int region) {
    return nodes.get(region).stream().mapToLong(SyncedLimiter::fallbackDecisions).sum();
  }

  /**
   * Runs traffic for {@code duration} of simulated time: region r asks for
   * {@code demand.applyAsDouble(r)} permits per second of {@code key}, spread over its nodes; every
   * replica is asked to run a round each second, or every {@link #roundNanos} (only the leader acts). Returns how many rounds a
   * replica led.
   */
  public int run(Duration duration, IntToDoubleFunction demandPerSecond, String... keys) {
    int led = 0;
    long end = ticker.read() + duration.toNanos();
    while (ticker.read() < end) {
      long now = ticker.read();
      long w = Math.floorDiv(now, quota.window().toNanos());
      for (int r = 0; r < servers.size(); r++) {
        carry[r] += demandPerSecond.applyAsDouble(r) * STEP_NANOS / 1e9;
        List<SyncedLimiter> list = nodes.get(r);
        while (carry[r] >= 1) {
          carry[r] -= 1;
          SyncedLimiter node = list.get(nextNode++ % list.size());
          for (String key : keys) { // every key sees the same traffic
            if (node.tryAcquire(key)) {
              admitted.computeIfAbsent(key, k -> new TreeMap<>())
                  .computeIfAbsent(w, x -> new long[servers.size()])[r]++;
              admittedAt.computeIfAbsent(key, k -> new TreeMap<>()).merge(now, 1L, Long::sum);
            }
          }
        }
      }
      if (quota.sliding()) {
        noteSlidingEstimates(now, w, keys);
      }
      ticker.advanceNanos(STEP_NANOS);
      now = ticker.read();
      if (now % SYNC_NANOS == 0) {
        for (List<SyncedLimiter> list : nodes) {
          list.forEach(SyncedLimiter::syncNow);
          list.forEach(SyncedLimiter::heartbeatNow); // as a flusher does: the coordinator listens to them
        }
      }
      if (now % roundNanos == 0) {
        for (RegionCoordinator c : coordinators) {
          if (c.round()) {
            led++;
          }
        }
      }
    }
    return led;
  }

  /**
   * A token-bucket quota's bound, checked over every interval of the run: the most that all regions
   * together admitted of a key in an interval beyond the quota's burst plus its refill over the
   * interval's length (permits; at most 0 where the bound holds), the admissions of a step at its time.
   */
  public double worstOverBucket(String key) {
    return worstOverBucket(admittedAt.getOrDefault(key, new TreeMap<>()),
        (double) quota.quota() / quota.window().toNanos(), 0, quota.burst());
  }

  /**
   * The most {@code counts} (time, ns, to permits admitted, in time order) hold in any interval beyond
   * {@code burst} plus {@code perNano} of refill over the interval's length, where each count may fall
   * anywhere within {@code grainNanos} of its time (0: at it), so that counts i..j are given the refill
   * of t_j - t_i + grain. One pass: that is (P_j - rate * (t_j + grain)) - (P_{i-1} - rate * t_i), the
   * least of the second term kept as it goes.
   */
  static double worstOverBucket(NavigableMap<Long, Long> counts, double perNano, long grainNanos,
      long burst) {
    if (counts.isEmpty()) {
      return 0;
    }
    long origin = counts.firstKey(); // (times relative to it, so that the products stay small)
    double worst = Double.NEGATIVE_INFINITY;
    double lowest = Double.POSITIVE_INFINITY;
    long sum = 0;
    for (Map.Entry<Long, Long> e : counts.entrySet()) {
      double t = e.getKey() - origin;
      lowest = Math.min(lowest, sum - perNano * t);
      sum += e.getValue();
      worst = Math.max(worst, sum - perNano * (t + grainNanos) - lowest);
    }
    return worst - burst;
  }

  /** After a step's decisions at {@code now}: the sliding estimate of every key, the peak kept. */
  private void noteSlidingEstimates(long now, long w, String... keys) {
    long window = quota.window().toNanos();
    double prevWeight = 1 - (double) (now - w * window) / window;
    for (String key : keys) {
      double estimate = total(key, w) + prevWeight * total(key, w - 1);
      peakSlidingEstimate.merge(key, estimate, Math::max);
    }
  }

  /**
   * Generous timeouts: the figures come from simulated time, and a store call that times out on a
   * busy machine would only add noise (the breaker and fallbacks are the chaos tests' subject).
   */
  private static RedisStoreConfig redis(String uri) {
    return RedisStoreConfig.builder(uri).commandTimeout(Duration.ofSeconds(5)).connectTimeout(Duration.ofSeconds(5))
        .build();
  }

  public long window() {
    return Math.floorDiv(ticker.read(), quota.window().toNanos());
  }

  /** What the nodes of region r admitted of a key in window w. */
  public long admitted(String key, long w, int r) {
    return admitted.getOrDefault(key, Map.of()).getOrDefault(w, new long[servers.size()])[r];
  }

  /** Total admitted of a key over all regions in window w. */
  public long total(String key, long w) {
    long sum = 0;
    for (int r = 0; r < servers.size(); r++) {
      sum += admitted(key, w, r);
    }
    return sum;
  }

  /** A region's share record for a key, read on a connection of the test's own. */
  public RegionShareStore.KeyState record(int region, String key) {
    try (RegionShareStore s = RegionShareStore.connect(redis(servers.get(region).uri()))) {
      return s.read(quota.limit(), window(), List.of(key)).get(0);
    }
  }

  @Override
  public void close() {
    for (RegionCoordinator c : coordinators) {
      try {
        c.close();
      } catch (RuntimeException ignored) {
        // a crashed replica is already down
      }
    }
    for (List<SyncedLimiter> list : nodes) {
      list.forEach(SyncedLimiter::close);
    }
    stores.forEach(RedisCounterStore::close);
    servers.forEach(RedisServer::close);
  }
}
