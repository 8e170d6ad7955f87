package io.sluice.cli;

import io.sluice.node.Durations;
import io.sluice.region.CoordinatorConfig;
import io.sluice.region.GlobalQuota;
import io.sluice.region.Region;
import io.sluice.region.RegionCoordinator;
import io.sluice.sync.redis.RedisStoreConfig;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sluice coordinator}: one replica of the region coordinator. Start two or more with the same
 * options on one host (they cluster on loopback, taking the next free ports); the oldest leads.
 */
@Command(name = "coordinator", mixinStandardHelpOptions = true,
    description = "Runs one replica of the region coordinator: splits each global quota across the regions'"
        + " Redis by demand. Start two or more replicas with the same options; the oldest leads.")
public final class CoordinatorCommand implements Callable<Integer> {
  @Option(names = "--region", paramLabel = "NAME=URI", required = true,
      description = "A region and its Redis (standalone or Sentinel), e.g. eu=redis://10.0.0.5:6379. Repeat per region.")
  List<String> regions;

  @Option(names = "--quota", paramLabel = "NAME=G/WINDOW[:PATTERN]",
      description = "A global quota: G permits per fixed WINDOW for each key matching PATTERN (a glob, default *),"
          + " e.g. api=6000/10s:tenant-*. Repeat per quota.")
  List<String> quotas = new java.util.ArrayList<>();

  @Option(names = "--sliding-quota", paramLabel = "NAME=G/WINDOW[:PATTERN]",
      description = "A global quota on a sliding window counter (G permits in any WINDOW, the nodes' limit a"
          + " sliding window counter too), in the form of --quota. Repeat per quota.")
  List<String> slidingQuotas = new java.util.ArrayList<>();

  @Option(names = "--bucket-quota", paramLabel = "NAME=G/WINDOW,BURST[:PATTERN]",
      description = "A token-bucket global quota: a refill of G permits per WINDOW, its rate split between the"
          + " regions by demand, and a burst of BURST permits split evenly, e.g. api=6000/10s,600:tenant-*; the nodes"
          + " build a token bucket of that burst and refill, in exact mode or with token claims (a batch size above"
          + " 1), with FAIL_CLOSED or FAIL_OPEN (see the README). Repeat per quota.")
  List<String> bucketQuotas = new java.util.ArrayList<>();

  @Option(names = "--round", paramLabel = "TIME", defaultValue = "250ms", converter = DurationConverter.class,
      description = "How often the leader reallocates (default: ${DEFAULT-VALUE}).")
  Duration round;

  @Option(names = "--lease", paramLabel = "TIME", defaultValue = "5s", converter = DurationConverter.class,
      description = "How long a region keeps its share without a new write, in whole windows (default: ${DEFAULT-VALUE}).")
  Duration lease;

  @Option(names = "--smoothing", paramLabel = "W", defaultValue = "0.8",
      description = "Weight of the newest round in the demand rates, in (0, 1] (default: ${DEFAULT-VALUE}).")
  double smoothing;

  @Option(names = "--cluster", paramLabel = "NAME", defaultValue = "sluice-coordinator",
      description = "The replicas' Hazelcast cluster name (default: ${DEFAULT-VALUE}).")
  String cluster;

  @Option(names = "--key-prefix", paramLabel = "P", defaultValue = "sluice",
      description = "Key prefix of the regions' counters, as the nodes (or sidecars) use it (default: ${DEFAULT-VALUE}).")
  String keyPrefix;

  @Option(names = "--port", paramLabel = "PORT", defaultValue = "5801",
      description = "First loopback port of the replicas' cluster; the next 9 are tried too (default: ${DEFAULT-VALUE}).")
  int port;

  @Override
  public Integer call() throws InterruptedException {
    CoordinatorConfig config;
    try {
      CoordinatorConfig.Builder b = CoordinatorConfig.builder().roundInterval(round).lease(lease).smoothing(smoothing)
          .cluster(cluster, port, 10);
      for (String r : regions) {
        String[] nameUri = split(r, "--region", "NAME=URI");
        b.region(Region.of(nameUri[0], RedisStoreConfig.builder(nameUri[1]).keyPrefix(keyPrefix).build()));
      }
      if (quotas.isEmpty() && slidingQuotas.isEmpty() && bucketQuotas.isEmpty()) {
        throw new IllegalArgumentException("--quota: give at least one quota (--quota, --sliding-quota or"
            + " --bucket-quota)");
      }
      for (String q : quotas) {
        b.quota(quota(q, "--quota", false));
      }
      for (String q : slidingQuotas) {
        b.quota(quota(q, "--sliding-quota", true));
      }
      for (String q : bucketQuotas) {
        b.quota(bucketQuota(q));
      }
      config = b.build();
    } catch (IllegalArgumentException e) {
      throw new UserError(e.getMessage(), Sluice.EXIT_USAGE);
    }
    RegionCoordinator coordinator = RegionCoordinator.start(config);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      coordinator.close();
      stopped.countDown();
    }, "sluice-coordinator-shutdown"));
    System.out.println("sluice coordinator: replica of cluster " + cluster + " (" + coordinator.members()
        + " member(s) seen), " + config.regions().size() + " regions, " + config.quotas().size()
        + " quota(s), a round every " + Durations.format(round) + "; Ctrl-C stops it");
    boolean led = false;
    while (!stopped.await(round.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
      if (coordinator.leading() != led) {
        led = coordinator.leading();
        System.out.println("sluice coordinator: " + (led ? "leading, epoch " + coordinator.epoch() : "standing by"));
      }
    }
    return 0;
  }

  /** {@code NAME=G/WINDOW[:PATTERN]}, given to {@code option}: a fixed window, or a sliding window counter. */
  static GlobalQuota quota(String spec, String option, boolean sliding) {
    String[] nameRest = split(spec, option, "NAME=G/WINDOW[:PATTERN]");
    String rest = nameRest[1];
    String pattern = "*";
    int colon = rest.indexOf(':');
    if (colon >= 0) {
      pattern = rest.substring(colon + 1);
      rest = rest.substring(0, colon);
    }
    int slash = rest.indexOf('/');
    if (slash <= 0) {
      throw new IllegalArgumentException(option + ": expected NAME=G/WINDOW[:PATTERN], got " + spec);
    }
    long g;
    try {
      g = Long.parseLong(rest.substring(0, slash));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + ": G must be a whole number of permits, got " + spec);
    }
    Duration window;
    try {
      window = Durations.parse(rest.substring(slash + 1));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(option + ": " + e.getMessage() + " in " + spec);
    }
    GlobalQuota.Builder q = GlobalQuota.builder(nameRest[0]).quota(g).window(window).keyPattern(pattern);
    return (sliding ? q.slidingWindow() : q).build();
  }

  /** {@code NAME=G/WINDOW,BURST[:PATTERN]}: a token bucket's refill of G per WINDOW, and its burst. */
  static GlobalQuota bucketQuota(String spec) {
    String[] nameRest = split(spec, "--bucket-quota", "NAME=G/WINDOW,BURST[:PATTERN]");
    String rest = nameRest[1];
    int colon = rest.indexOf(':');
    String head = colon >= 0 ? rest.substring(0, colon) : rest;
    int comma = head.indexOf(',');
    if (comma <= 0) {
      throw new IllegalArgumentException("--bucket-quota: expected NAME=G/WINDOW,BURST[:PATTERN], got " + spec);
    }
    long burst;
    try {
      burst = Long.parseLong(head.substring(comma + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--bucket-quota: BURST must be a whole number of permits, got " + spec);
    }
    String windowSpec = nameRest[0] + "=" + head.substring(0, comma) + (colon >= 0 ? rest.substring(colon) : "");
    GlobalQuota window;
    try {
      window = quota(windowSpec, "--bucket-quota", false);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(e.getMessage().startsWith("--bucket-quota: expected")
          ? "--bucket-quota: expected NAME=G/WINDOW,BURST[:PATTERN], got " + spec
          : e.getMessage().replace(windowSpec, spec), e);
    }
    return GlobalQuota.builder(window.name()).quota(window.quota()).window(window.window())
        .keyPattern(window.keyPattern()).tokenBucket(burst).build();
  }

  private static String[] split(String spec, String option, String form) {
    int eq = spec.indexOf('=');
    if (eq <= 0 || eq == spec.length() - 1) {
      throw new IllegalArgumentException(option + ": expected " + form + ", got " + spec);
    }
    return new String[] {spec.substring(0, eq), spec.substring(eq + 1)};
  }
}
