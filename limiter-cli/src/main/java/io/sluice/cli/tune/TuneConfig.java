package io.sluice.cli.tune;

import io.sluice.node.Limit;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The validated options of one {@code tune} run. */
record TuneConfig(
    Profile profile,
    int nodes,
    long limit,
    Duration window,
    Duration duration,
    boolean sliding,
    double demand,
    int keys,
    long seed,
    List<Long> batchSizes,
    List<Duration> syncIntervals,
    String redis,
    Path out,
    double maxErrorPct,
    double maxFalseDenialsPct,
    Duration throughput,
    List<String> regionRedis,
    List<Double> regionWeights,
    /** {@code --simulate}: the store's round trip on the simulated clock; null for a real store on the wall clock. */
    Duration simulatedRoundTrip,
    /** {@code --node-skew}: 0 spreads requests evenly over the nodes, above 0 by Zipf's law with this exponent. */
    double nodeSkew,
    /** {@code --reservation}: the reservation mode measured too, at every batch size above 1 and sync interval. */
    boolean reservation,
    /** {@code --key-affinity}: every request of a key to the same node (else each to a node at random). */
    boolean keyAffinity) {

  /** One region (no --region-redis), the default --max-false-denials. */
  TuneConfig(Profile profile, int nodes, long limit, Duration window, Duration duration, boolean sliding, double demand,
      int keys, long seed, List<Long> batchSizes, List<Duration> syncIntervals, String redis, Path out,
      double maxErrorPct, Duration throughput) {
    this(profile, nodes, limit, window, duration, sliding, demand, keys, seed, batchSizes, syncIntervals, redis, out,
        maxErrorPct, Recommender.DEFAULT_MAX_FALSE_DENIALS_PCT, throughput, List.of(), List.of(), null, 0, false, false);
  }

  /** {@code --simulate}: simulated nodes on a simulated clock, no store of their own. */
  boolean simulated() {
    return simulatedRoundTrip != null;
  }

  /** Regions split the limit (each its own Redis) when two or more are given. */
  boolean regional() {
    return regionRedis.size() > 1;
  }

  /**
   * How requests spread over the nodes: node n is in region n mod R, and a region's weight is shared
   * by its nodes; null for an even spread.
   */
  double[] nodeWeights() {
    if (nodeSkew > 0) {
      // (node n gets 1 / (n + 1)^s of the demand, normalised: a load balancer that favours some
      // instances, or clients pinned to a few of them)
      double[] w = new double[nodes];
      for (int n = 0; n < nodes; n++) {
        w[n] = Math.pow(n + 1, -nodeSkew);
      }
      return w;
    }
    if (!regional() || regionWeights.isEmpty()) {
      return null;
    }
    int regions = regionRedis.size();
    double[] w = new double[nodes];
    for (int n = 0; n < nodes; n++) {
      int r = n % regions;
      int inRegion = nodes / regions + (r < nodes % regions ? 1 : 0);
      w[n] = regionWeights.get(r) / inRegion;
    }
    return w;
  }

  /** How requests reach the nodes, for the reports: "spread at random over 4 nodes" and the like. */
  String routing() {
    if (keyAffinity) {
      return String.format(Locale.ROOT, "each key's requests on one of %d nodes (--key-affinity)", nodes);
    }
    if (nodeSkew > 0) {
      return String.format(Locale.ROOT, "spread over %d nodes by Zipf's law (--node-skew %s)", nodes, nodeSkew);
    }
    if (regional() && !regionWeights.isEmpty()) {
      return String.format(Locale.ROOT, "spread over %d nodes by region weights %s", nodes, regionWeights);
    }
    return String.format(Locale.ROOT, "spread at random over %d nodes", nodes);
  }

  Limit sluiceLimit() {
    Limit.Builder b = sliding ? Limit.slidingWindowCounter("tune") : Limit.fixedWindow("tune");
    return b.limit(limit).window(window).build();
  }

  int windows() {
    return (int) (duration.toNanos() / window.toNanos());
  }

  String algorithm() {
    return sliding ? "sliding" : "fixed";
  }

  /**
   * The settings of the sweep, smallest first; batch size 1 (the exact mode, where the sync interval
   * does not matter) once; with {@code --reservation}, each batched setting in the reservation mode too.
   */
  List<Setting> settings() {
    List<Setting> out = new ArrayList<>();
    for (long b : batchSizes) {
      if (b == 1) {
        out.add(new Setting(1, syncIntervals.get(0)));
        continue;
      }
      for (Duration s : syncIntervals) {
        out.add(new Setting(b, s));
        if (reservation) {
          out.add(new Setting(b, s, true));
        }
      }
    }
    out.sort(null);
    return out;
  }
}
