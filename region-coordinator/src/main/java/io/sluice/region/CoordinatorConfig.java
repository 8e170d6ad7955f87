package io.sluice.region;

import io.sluice.node.Durations;
import io.sluice.sync.spi.Counter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a coordinator replica runs: the regions, the global quotas, how often it reallocates, how long
 * a region may keep a share without hearing from it, and its Hazelcast cluster. Every replica of one
 * deployment gets the same configuration. Checked as a whole at {@link Builder#build()}: floors that
 * exceed a quota, floors for unknown regions and duplicate names fail with the field named.
 */
public final class CoordinatorConfig {
  private final List<Region> regions;
  private final List<GlobalQuota> quotas;
  private final Duration roundInterval;
  private final Duration lease;
  private final double smoothing;
  private final int maxKeysPerQuota;
  private final String clusterName;
  private final int port;
  private final int portCount;

  private CoordinatorConfig(Builder b) {
    this.regions = List.copyOf(b.regions);
    this.quotas = List.copyOf(b.quotas);
    this.roundInterval = b.roundInterval;
    this.lease = b.lease;
    this.smoothing = b.smoothing;
    this.maxKeysPerQuota = b.maxKeysPerQuota;
    this.clusterName = b.clusterName;
    this.port = b.port;
    this.portCount = b.portCount;
  }

  public static Builder builder() {
    return new Builder();
  }

  public List<Region> regions() {
    return regions;
  }

  public List<GlobalQuota> quotas() {
    return quotas;
  }

  public Duration roundInterval() {
    return roundInterval;
  }

  public Duration lease() {
    return lease;
  }

  public double smoothing() {
    return smoothing;
  }

  public int maxKeysPerQuota() {
    return maxKeysPerQuota;
  }

  public String clusterName() {
    return clusterName;
  }

  public int port() {
    return port;
  }

  public int portCount() {
    return portCount;
  }

  /** Settings of a coordinator; every error names its field. */
  public static final class Builder {
    private final List<Region> regions = new ArrayList<>();
    private final List<GlobalQuota> quotas = new ArrayList<>();
    private Duration roundInterval = Duration.ofMillis(250);
    private Duration lease = Duration.ofSeconds(5);
    private double smoothing = 0.8;
    private int maxKeysPerQuota = 10_000;
    private String clusterName = "sluice-coordinator";
    private int port = 5801;
    private int portCount = 10;

    Builder() {
    }

    public Builder region(Region region) {
      if (region == null) {
        throw new IllegalArgumentException("regions: must not contain null");
      }
      regions.add(region);
      return this;
    }

    public Builder quota(GlobalQuota quota) {
      if (quota == null) {
        throw new IllegalArgumentException("quotas: must not contain null");
      }
      quotas.add(quota);
      return this;
    }

    /**
     * How often the leader reads demand and rewrites shares (default 250 ms): a few rounds a window,
     * so that a shift of demand is met within the window it happens in (real time, G per 1 s window,
     * demand rotating between the regions every 5 s: 93% of G used with rounds every second, where
     * the first window after each shift kept the old split; 99.7% every 250 ms). Regional nodes beat
     * at every sync (100 ms by default): a round closer than that to the last one may find a region
     * silent, and leave its shares as they are for that round.
     */
    public Builder roundInterval(Duration interval) {
      if (interval == null || interval.toMillis() < 10) {
        throw new IllegalArgumentException("roundInterval: must be at least 10ms, got " + Durations.format(interval));
      }
      this.roundInterval = interval;
      return this;
    }

    /**
     * How long a region keeps the share it was given without a new write, rounded up to whole windows
     * of the quota (default 5 s): after it, the region enforces the static share G / regions.
     */
    public Builder lease(Duration lease) {
      if (lease == null || lease.isNegative() || lease.isZero()) {
        throw new IllegalArgumentException("lease: must be positive, got " + Durations.format(lease));
      }
      this.lease = lease;
      return this;
    }

    /**
     * Weight of the newest round in each region's demand rate (an exponential moving average): 1
     * follows demand at once, smaller values damp noise so that shares do not swing (default 0.8).
     */
    public Builder smoothing(double weightOfNewest) {
      if (!(weightOfNewest > 0 && weightOfNewest <= 1)) {
        throw new IllegalArgumentException("smoothing: must be in (0, 1], got " + weightOfNewest);
      }
      this.smoothing = weightOfNewest;
      return this;
    }

    /** Keys of one quota reallocated per round, the most recently seen first (default 10,000). */
    public Builder maxKeysPerQuota(int maxKeys) {
      if (maxKeys < 1) {
        throw new IllegalArgumentException("maxKeysPerQuota: must be positive, got " + maxKeys);
      }
      this.maxKeysPerQuota = maxKeys;
      return this;
    }

    /** The replicas' Hazelcast cluster: its name and the first of {@code portCount} loopback ports. */
    public Builder cluster(String name, int port, int portCount) {
      if (name == null || name.isEmpty()) {
        throw new IllegalArgumentException("cluster.name: must not be empty");
      }
      if (port < 1 || port > 65535 || portCount < 1 || port + portCount - 1 > 65535) {
        throw new IllegalArgumentException("cluster.port: ports " + port + " to " + (port + portCount - 1)
            + " must lie in 1..65535");
      }
      this.clusterName = name;
      this.port = port;
      this.portCount = portCount;
      return this;
    }

    public CoordinatorConfig build() {
      if (regions.isEmpty()) {
        throw new IllegalArgumentException("regions: at least one region is needed");
      }
      if (quotas.isEmpty()) {
        throw new IllegalArgumentException("quotas: at least one quota is needed");
      }
      Set<String> regionNames = new HashSet<>();
      for (Region r : regions) {
        if (!regionNames.add(r.name())) {
          throw new IllegalArgumentException("regions: duplicate region name " + r.name());
        }
      }
      Set<String> quotaNames = new HashSet<>();
      for (GlobalQuota q : quotas) {
        if (!quotaNames.add(q.name())) {
          throw new IllegalArgumentException("quotas: duplicate quota name " + q.name());
        }
        if (q.quota() < regions.size()) {
          throw new IllegalArgumentException("quotas[" + q.name() + "].quota: " + q.quota() + " cannot be split over "
              + regions.size() + " regions");
        }
        try {
          Counter.regional(q.limit(), regions.size()); // what the nodes' counters must hold (a bucket's burst)
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("quotas[" + q.name() + "]." + e.getMessage(), e);
        }
        for (Map.Entry<String, Long> f : q.floors().entrySet()) {
          if (!regionNames.contains(f.getKey())) {
            throw new IllegalArgumentException("quotas[" + q.name() + "].floor: unknown region " + f.getKey()
                + " (regions: " + regionNames + ")");
          }
        }
        long floors = 0;
        for (Region r : regions) {
          floors += q.floor(r.name(), regions.size());
        }
        if (floors > q.quota()) {
          throw new IllegalArgumentException("quotas[" + q.name() + "].floor: the regions' floors sum to " + floors
              + ", more than the quota " + q.quota());
        }
      }
      return new CoordinatorConfig(this);
    }
  }
}
