package io.sluice.cli.tune;

import com.hazelcast.core.HazelcastInstance;
import io.sluice.cli.UserError;
import io.sluice.node.Limit;
import io.sluice.region.CoordinatorConfig;
import io.sluice.region.GlobalQuota;
import io.sluice.region.Region;
import io.sluice.region.RegionCoordinator;
import io.sluice.sync.hazelcast.HazelcastCounterStore;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.StoreUnavailableException;
import java.time.Duration;
import java.util.List;

/**
 * The store the simulated nodes share. Each setting runs under its own key prefix, so runs never see
 * each other's counts, and each node gets its own {@link CounterStore} (its own Redis connection, or
 * its own store object with its own callback thread on the shared Hazelcast member).
 */
interface Backend extends AutoCloseable {

  /** One line for the report: what store, where. */
  String describe();

  /** Whether the store runs SyncedLimiter's exact mode (batch size 1). */
  boolean hasExactMode();

  /** A store for one node, under this setting's prefix. */
  CounterStore open(String prefix);

  /** A store for node {@code node}: with regions, the Redis of the node's region (node mod regions). */
  default CounterStore open(String prefix, int node) {
    return open(prefix);
  }

  /** How many regions split the limit (1: no regions). */
  default int regions() {
    return 1;
  }

  /**
   * What coordinates the regions while a setting runs (the region coordinator), stopped by closing
   * it; nothing without regions.
   */
  default AutoCloseable coordinate(String prefix, Limit limit) {
    return () -> { };
  }

  /** Drops what a setting left in the store (best effort). */
  void drop(String prefix);

  @Override
  void close();

  /**
   * One embedded Hazelcast member on loopback, shared by all simulated nodes. Why one and not one per
   * node: N members in one JVM on one machine would compete for the same cores (each member runs
   * dozens of threads), forming the cluster costs seconds per member, and the store-call counts,
   * which are what the sweep compares, do not depend on where a partition lives. What one member
   * does change: a store call is a local call instead of a network hop, so flushes come back sooner
   * than on a real cluster and the approximate mode looks a little more accurate than it would be,
   * and the exact mode (one entry processor per decision) looks faster than it would be.
   * The cluster name is unique per run so that no other member on this machine joins it.
   */
  static Backend hazelcast(String run) {
    // tune has its own shutdown hook (Ctrl-C writes the report): Hazelcast must not stop the member
    // under it; the member is shut down by close()
    if (System.getProperty("hazelcast.shutdownhook.enabled") == null) {
      System.setProperty("hazelcast.shutdownhook.enabled", "false");
    }
    String cluster = run;
    synchronized (HAZELCAST_LOG) {
      // a command line prints its own output: join chatter with other members on this machine is noise
      if (HAZELCAST_LOG.getLevel() == null) {
        HAZELCAST_LOG.setLevel(java.util.logging.Level.SEVERE);
      }
    }
    HazelcastCounterStore member = startMember(cluster);
    HazelcastInstance instance = member.instance();
    return new Backend() {
      @Override
      public String describe() {
        return "embedded Hazelcast " + com.hazelcast.instance.BuildInfoProvider.getBuildInfo().getVersion()
            + " (one member on 127.0.0.1 shared by the simulated nodes, cluster " + cluster + ")";
      }

      @Override
      public boolean hasExactMode() {
        return true; // one entry processor per decision
      }

      @Override
      public CounterStore open(String prefix) {
        return HazelcastCounterStore.of(instance, HazelcastCounterStore.Settings.builder()
            .clusterName(cluster).mapPrefix(prefix).sequenceTtl(Duration.ofMinutes(10)).build());
      }

      @Override
      public void drop(String prefix) {
        for (String map : new String[] {".counters", ".sequences", ".nodes"}) {
          try {
            instance.getMap(prefix + map).destroy();
          } catch (RuntimeException e) {
            // best effort: the member goes away with the run anyway
          }
        }
      }

      @Override
      public void close() {
        member.close();
      }
    };
  }

  /** Holds the level set on Hazelcast's JDK logger (java.util.logging keeps loggers only weakly). */
  java.util.logging.Logger HAZELCAST_LOG = java.util.logging.Logger.getLogger("com.hazelcast");

  /**
   * The member listens on one free ephemeral port and looks for no other: with Hazelcast's default
   * range (5701 and up) it would first try to join every member other programs run on this machine,
   * which costs seconds and finds nothing (the cluster name is our own).
   */
  private static HazelcastCounterStore startMember(String cluster) {
    RuntimeException last = null;
    for (int attempt = 0; attempt < 3; attempt++) {
      int port = freePort("the embedded Hazelcast member");
      try {
        return HazelcastCounterStore.embedded(
            HazelcastCounterStore.Settings.builder().clusterName(cluster).port(port).portCount(1).build());
      } catch (RuntimeException e) {
        last = e; // the port was taken in between: try another
      }
    }
    throw new UserError("cannot start the embedded Hazelcast member: " + last.getMessage());
  }

  /**
   * A Redis server given by URI: each node connects on its own. Keys are written under
   * {@code <run>-<n>} ({@code run} is {@code sluice-tune-} and a random suffix); window counters expire two windows after their last write and
   * sequence keys after ten minutes, so nothing stays behind for long.
   */
  static Backend redis(String uri, String run) {
    // connect once now, so that an unreachable server is one clear error before anything runs
    try {
      RedisCounterStore.connect(config(uri, run + "-probe")).close(); // reachable, scripts load
    } catch (StoreUnavailableException e) {
      throw new UserError("--redis " + redact(uri) + ": " + e.getMessage());
    } catch (IllegalArgumentException e) {
      throw new UserError("--redis: " + e.getMessage().replace(uri, redact(uri)), io.sluice.cli.Sluice.EXIT_USAGE);
    } catch (RuntimeException e) {
      throw new UserError("--redis " + redact(uri) + ": cannot use it: " + e);
    }
    return new Backend() {
      @Override
      public String describe() {
        return "Redis at " + redact(uri) + " (one connection per simulated node, keys under " + run + "-*)";
      }

      @Override
      public boolean hasExactMode() {
        return true;
      }

      @Override
      public CounterStore open(String prefix) {
        try {
          return RedisCounterStore.connect(config(uri, prefix));
        } catch (StoreUnavailableException e) {
          throw new UserError("--redis " + redact(uri) + ": " + e.getMessage());
        }
      }

      @Override
      public void drop(String prefix) {
        // the keys expire on their own (see above); SCAN-and-delete would touch the user's keyspace
      }

      @Override
      public void close() {
      }

    };
  }

  /**
   * Regions, each with its own Redis (the URIs, in order): node n belongs to region n mod R and its
   * SyncedLimiter enforces the region's share of the limit; while a setting runs, a region
   * coordinator (one replica, in this JVM) splits the limit by demand, a round every quarter of a
   * window (at least 250 ms, the coordinator's default), leases of two windows.
   */
  static Backend regions(List<String> uris, String run) {
    probeRegions(uris, run);
    // tune has its own shutdown hook (Ctrl-C writes the report): Hazelcast must not stop the
    // coordinator's member under it; each coordinator is closed when its setting ends
    if (System.getProperty("hazelcast.shutdownhook.enabled") == null) {
      System.setProperty("hazelcast.shutdownhook.enabled", "false");
    }
    int regions = uris.size();
    return new Backend() {
      @Override
      public String describe() {
        return describeRegions(uris);
      }

      @Override
      public boolean hasExactMode() {
        return false; // a region's share is enforced in the approximate mode only
      }

      @Override
      public CounterStore open(String prefix) {
        return open(prefix, 0);
      }

      @Override
      public CounterStore open(String prefix, int node) {
        String uri = uris.get(node % regions);
        try {
          return RedisCounterStore.connect(config(uri, prefix));
        } catch (StoreUnavailableException e) {
          throw new UserError("--region-redis " + redact(uri) + ": " + e.getMessage());
        }
      }

      @Override
      public int regions() {
        return regions;
      }

      @Override
      public AutoCloseable coordinate(String prefix, Limit limit) {
        return startCoordinator(uris, prefix, limit);
      }

      @Override
      public void drop(String prefix) {
        // the keys expire on their own, as with --redis
      }

      @Override
      public void close() {
      }
    };
  }

  /** Connects to each region's Redis once now, so that an unreachable one is one clear error before anything runs. */
  private static void probeRegions(List<String> uris, String run) {
    for (String uri : uris) {
      try {
        RedisCounterStore.connect(config(uri, run + "-probe")).close();
      } catch (StoreUnavailableException e) {
        throw new UserError("--region-redis " + redact(uri) + ": " + e.getMessage());
      } catch (IllegalArgumentException e) {
        throw new UserError("--region-redis: " + e.getMessage().replace(uri, redact(uri)), io.sluice.cli.Sluice.EXIT_USAGE);
      } catch (RuntimeException e) {
        throw new UserError("--region-redis " + redact(uri) + ": cannot use it: " + e);
      }
    }
  }

  private static String describeRegions(List<String> uris) {
    int regions = uris.size();
    StringBuilder sb = new StringBuilder(regions + " regions, each its own Redis (");
    for (int r = 0; r < regions; r++) {
      sb.append(r == 0 ? "" : ", ").append(regionName(r)).append(' ').append(redact(uris.get(r)));
    }
    return sb.append("; node n in region n mod ").append(regions)
        .append("), split by a region coordinator in this JVM").toString();
  }

  /** The global quota of a tune run's limit: a fixed window, or a sliding window counter. */
  private static GlobalQuota quota(Limit limit, Duration window) {
    GlobalQuota.Builder q = GlobalQuota.builder(limit.name()).quota(limit.capacity()).window(window);
    if (limit.algorithm() == io.sluice.node.Algorithm.SLIDING_WINDOW_COUNTER) {
      q.slidingWindow();
    }
    return q.build();
  }

  private static AutoCloseable startCoordinator(List<String> uris, String prefix, Limit limit) {
    Duration window = Duration.ofNanos(limit.periodNanos());
    // (a tenth of a window, 100 ms for a window of 1 s, was as often as the regional nodes beat, at
    // every sync: a round that finds a region's node not heard since the round before takes the
    // region for cut off and leaves its shares as they are)
    Duration round = window.dividedBy(4).compareTo(Duration.ofMillis(250)) < 0 ? Duration.ofMillis(250)
        : window.dividedBy(4);
    CoordinatorConfig.Builder b = CoordinatorConfig.builder()
        .quota(quota(limit, window))
        .roundInterval(round).lease(window.multipliedBy(2)).cluster(prefix, freePort("the region coordinator"), 1);
    for (int r = 0; r < uris.size(); r++) {
      b.region(Region.of(regionName(r), config(uris.get(r), prefix)));
    }
    return RegionCoordinator.start(b.build());
  }

  private static String regionName(int r) {
    return "region-" + (char) ('a' + r);
  }

  /** A loopback port free right now, for a Hazelcast member of this run. */
  private static int freePort(String forWhat) {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (java.io.IOException e) {
      throw new UserError("cannot find a free loopback port for " + forWhat + ": " + e.getMessage());
    }
  }

  /**
   * The store's settings, with a command timeout of 2 s instead of 500 ms: tune runs many nodes and the
   * store on one machine, where a connection handshake under load can take longer than a service's
   * tight timeout; a flush that takes that long still shows in the latency and error figures.
   */
  private static RedisStoreConfig config(String uri, String prefix) {
    return RedisStoreConfig.builder(uri).keyPrefix(prefix).sequenceTtl(Duration.ofMinutes(10))
        .commandTimeout(Duration.ofSeconds(2)).connectTimeout(Duration.ofSeconds(2)).build();
  }

  /** The URI without a password, for messages and reports. */
  static String redact(String uri) {
    return uri == null ? null : uri.replaceAll("(://[^:@/]*:)[^@/]*@", "$1***@");
  }
}
