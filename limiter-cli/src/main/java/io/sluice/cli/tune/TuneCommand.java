package io.sluice.cli.tune;

import io.sluice.cli.DurationConverter;

import io.sluice.node.Durations;

import io.sluice.cli.Shutdown;
import io.sluice.cli.Sluice;
import io.sluice.node.Limit;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code sluice tune}: batch size against accuracy, measured on simulated nodes against a real store. */
@Command(name = "tune",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    usageHelpWidth = 100,
    header = "Batch size against accuracy: simulated nodes against a real store, error vs store calls.",
    description = {
        "Simulates N nodes (real SyncedLimiters, one store connection each) in this JVM against a store,"
            + " replays one seeded traffic trace with every batch size (and sync interval) of the sweep and with the"
            + " exact mode, and reports for each, against the exact algorithm deciding the same requests at the same"
            + " moments: over- and under-admission (%% of the limit, per key and window), false denials (requests the"
            + " exact algorithm admitted and the setting denied, %% of all requests, and how many in key-windows below"
            + " half the limit), what it admitted in %% of what the exact algorithm admitted; and store calls per 1,000"
            + " decisions, decision latency p50/p99 and decisions/s."
            + " Prints a table, writes CSV, JSON, an SVG chart and an HTML report, and recommends the largest"
            + " setting within --max-error and --max-false-denials with no false denial below half the limit.",
        "",
        "Store: an embedded Hazelcast member (default, nothing to install) or --redis URI.",
        ""},
    footer = {"",
        "Example: sluice tune --profile zipf --nodes 8 --batch-sizes 10,100,1000 --out zipf-report",
        "",
        "Exit codes: 0 done, 1 store unreachable or report not writable, 2 bad option, 130 Ctrl-C (the report"
            + " is still written with the settings measured so far)."})
public final class TuneCommand implements Callable<Integer> {
  static final int MAX_NODES = 256;
  /** With --simulate: the simulated clock has no threads to share two cores between. */
  static final int MAX_SIMULATED_NODES = io.sluice.sync.sim.SimulatedNodes.MAX_NODES;

  @Spec
  CommandSpec spec;

  @Option(names = "--profile", paramLabel = "NAME", defaultValue = "mixed", converter = ProfileConverter.class,
      description = "Traffic shape: mixed (K keys, default 200, at rates spread log-uniformly from D/300 to D x limit,"
          + " default 0.01x to 3x: sparse keys seconds apart, keys first seen mid-window, a few hot keys at D x limit),"
          + " steady (one key, Poisson arrivals at D x limit), bursty (a burst of D x limit in a"
          + " tenth of each window over a 0.25 x limit background), zipf (many keys, a few hot), hot-key (one key at"
          + " D x limit among cold keys), step (0.5 x limit, then D x limit from half-way). Default: ${DEFAULT-VALUE}.")
  Profile profile;

  @Option(names = "--duration", paramLabel = "TIME", defaultValue = "8s", converter = DurationConverter.class,
      description = "Traffic replayed per setting (a whole number of windows: rounded down), e.g. 10s, 2m."
          + " The run takes about (settings) x (duration + flat-out + 2 s). Default: ${DEFAULT-VALUE}.")
  Duration duration;

  @Option(names = "--nodes", paramLabel = "N", defaultValue = "4",
      description = "Simulated nodes, each a SyncedLimiter with its own store connection and its own thread"
          + " (1-" + MAX_NODES + "; up to " + MAX_SIMULATED_NODES + " with --simulate). Default: ${DEFAULT-VALUE}.")
  int nodes;

  @Option(names = "--limit", paramLabel = "L",
      description = "Permits per key per window. Default: 100 for the mixed profile (its many keys at 1,000 would be"
          + " far more requests than 2 cores replay in real time), 1000 for the others.")
  Long limit;

  @Option(names = "--window", paramLabel = "TIME", defaultValue = "1s", converter = DurationConverter.class,
      description = "The limit's window (at least 10ms). Default: ${DEFAULT-VALUE}.")
  Duration window;

  @Option(names = "--algorithm", paramLabel = "ALG", defaultValue = "sliding",
      description = "sliding (sliding window counter, the production default) or fixed (fixed window)."
          + " Default: ${DEFAULT-VALUE}.")
  String algorithm;

  @Option(names = "--demand", paramLabel = "D",
      description = "How many times its limit the hottest key asks for (0 < D <= 100). Default: 3 for the mixed"
          + " profile, 2 for the others.")
  Double demand;

  @Option(names = "--keys", paramLabel = "K",
      description = "Keys of the mixed (default 200), zipf (default 1000) and hot-key (default 101: one hot, 100 cold)"
          + " profiles; the others use one key.")
  Integer keys;

  @Option(names = "--seed", paramLabel = "S", defaultValue = "42",
      description = "Seed of the traffic trace: the same seed and options give the same requests, keys and nodes."
          + " Default: ${DEFAULT-VALUE}.")
  long seed;

  @Option(names = "--batch-sizes", paramLabel = "B", split = ",", defaultValue = "1,10,50,100,500,1000",
      description = "Batch sizes to sweep (each at least 1; 1 is the exact mode, always measured as the reference)."
          + " Default: ${DEFAULT-VALUE}.")
  List<Long> batchSizes;

  @Option(names = "--sync-intervals", paramLabel = "TIME", split = ",", defaultValue = "100ms",
      converter = DurationConverter.class,
      description = "Sync intervals to sweep with every batch size (each positive, at most half the window)."
          + " Default: ${DEFAULT-VALUE}.")
  List<Duration> syncIntervals;

  @Option(names = "--redis", paramLabel = "URI",
      description = "Run against this Redis (redis://host:port, rediss:// for TLS, redis://user:pass@host) instead"
          + " of the embedded Hazelcast member. Keys go under sluice-tune-*"
          + " and expire on their own.")
  String redis;

  @Option(names = "--region-redis", paramLabel = "URI",
      description = "Regions: give one Redis per region (two or more, repeat the option). Node n is in region"
          + " n mod R; each region's nodes enforce its share of the limit and a region coordinator in this JVM"
          + " splits the limit by demand. Needs --algorithm fixed; not with --redis.")
  List<String> regionRedis = new ArrayList<>();

  @Option(names = "--region-weights", paramLabel = "W", split = ",",
      description = "With --region-redis: how demand splits over the regions, e.g. 70,20,10 (default: evenly).")
  List<Double> regionWeights = new ArrayList<>();

  @Option(names = "--node-skew", paramLabel = "S", defaultValue = "0",
      description = "How requests spread over the nodes: 0 evenly; above 0, node n gets a share in proportion to"
          + " 1 / (n + 1)^S (Zipf's law: with 1, node 0 gets about a fifth of the demand of 64 nodes), as a load"
          + " balancer that favours some instances would. Not with --region-weights. Default: ${DEFAULT-VALUE}.")
  double nodeSkew;

  @Option(names = "--key-affinity",
      description = "Every request of a key to the same node (a load balancer's session affinity, keys hashed to"
          + " instances), the node fixed by the key; without it each request goes to a node at random."
          + " Not with --node-skew or --region-redis.")
  boolean keyAffinity;

  @Option(names = "--out", paramLabel = "DIR", defaultValue = "tune-report",
      description = "Directory for results.csv, results.json, chart.svg and report.html. Default: ${DEFAULT-VALUE}.")
  Path out;

  @Option(names = "--max-error", paramLabel = "PCT", defaultValue = "1",
      description = "Largest error, in %% of the limit, that a recommended setting may show: its worst"
          + " over-admission in any key and window and its worst under-admission in any window where the limit was"
          + " reached must both stay within it. Default: ${DEFAULT-VALUE}.")
  double maxError;

  @Option(names = "--max-false-denials", paramLabel = "PCT", defaultValue = "0.1",
      description = "Most false denials a recommended setting may show, in %% of all requests: requests the exact"
          + " algorithm admitted and the setting denied, over every key and window (a setting with any false denial"
          + " in a key-window below half the limit is never recommended). Default: ${DEFAULT-VALUE}.")
  double maxFalseDenials;

  @Option(names = "--flat-out", paramLabel = "TIME", defaultValue = "1s", converter = DurationConverter.class,
      description = "After each replay, how long all nodes decide as fast as they can to measure decisions/s"
          + " (0s to skip). Default: ${DEFAULT-VALUE}.")
  Duration flatOut;

  @Option(names = "--reservation",
      description = "Also measure the reservation mode (SyncedLimiter.Builder.reservation(): nodes admit only"
          + " permits the store leased them, never over the limit) at every batch size above 1 and sync interval"
          + " of the sweep; its rows are recommended where no setting of the approximate mode passes. Not with"
          + " --region-redis.")
  boolean reservation;

  @Option(names = "--simulate",
      description = "Simulate instead of replaying on the wall clock: the nodes (up to " + MAX_SIMULATED_NODES
          + ") run the real SyncedLimiter on a simulated clock against an in-memory store that keeps claims as the"
          + " scripts do, with a store round trip of --round-trip; the same options give the same figures. No"
          + " latency or decisions/s (n/a); not with --redis or --region-redis.")
  boolean simulate;

  @Option(names = "--round-trip", paramLabel = "TIME", defaultValue = "1ms", converter = DurationConverter.class,
      description = "With --simulate: the store's round trip (a sync's call reaches the store after half of it and"
          + " is answered after all of it; 0s for none, at most 1s). Default: ${DEFAULT-VALUE}.")
  Duration roundTrip;

  @Override
  public Integer call() throws Exception {
    TuneConfig config = validate();
    CommandLine cl = spec.commandLine();
    try (Shutdown.Guard guard = Shutdown.install(20_000)) {
      TuneResult r = new Tuner(config, commandText(), cl.getOut(), cl.getErr(), guard, Progress.terminal()).run();
      return r.interrupted() ? Sluice.EXIT_INTERRUPTED : 0;
    }
  }

  private String commandText() {
    List<String> args = spec.commandLine().getParseResult().originalArgs();
    StringBuilder sb = new StringBuilder("sluice tune");
    for (String a : args.subList(args.indexOf("tune") + 1, args.size())) {
      sb.append(' ').append(a.matches("[A-Za-z0-9_.,:/=@%+-]+") ? a : "'" + a.replace("'", "'\\''") + "'");
    }
    return Backend.redact(sb.toString());
  }

  TuneConfig validate() {
    int maxNodes = simulate ? MAX_SIMULATED_NODES : MAX_NODES;
    if (nodes < 1 || nodes > maxNodes) {
      throw bad("--nodes: must be between 1 and " + maxNodes + (simulate ? "" : " (up to " + MAX_SIMULATED_NODES
          + " with --simulate)") + ", got " + nodes);
    }
    long limit = this.limit == null ? profile.defaultLimit : this.limit;
    double demand = this.demand == null ? profile.defaultDemand : this.demand;
    if (limit < 1 || limit > Limit.MAX_WINDOW_LIMIT) {
      throw bad("--limit: must be between 1 and " + Limit.MAX_WINDOW_LIMIT + ", got " + limit);
    }
    checkTimes();
    boolean sliding;
    if ("sliding".equalsIgnoreCase(algorithm)) {
      sliding = true;
    } else if ("fixed".equalsIgnoreCase(algorithm)) {
      sliding = false;
    } else {
      throw bad("--algorithm: must be sliding or fixed, got '" + algorithm + "'");
    }
    if (!(demand > 0 && demand <= 100)) {
      throw bad("--demand: must be above 0 and at most 100, got " + demand);
    }
    int k = keys == null ? profile.defaultKeys : keys;
    if (keys != null && !profile.manyKeys()) {
      throw bad("--keys: the " + profile.label + " profile has one key; --keys is for mixed, zipf and hot-key");
    }
    if (k < 1 || k > Trace.MAX_KEYS) {
      throw bad("--keys: must be between 1 and " + Trace.MAX_KEYS + ", got " + k);
    }
    List<Long> batches = distinctBatchSizes();
    List<Duration> intervals = distinctSyncIntervals();
    if (!(maxError > 0 && maxError <= 100)) {
      throw bad("--max-error: must be above 0 and at most 100 (% of the limit), got " + maxError);
    }
    if (!(maxFalseDenials >= 0 && maxFalseDenials <= 100)) {
      throw bad("--max-false-denials: must be between 0 and 100 (% of requests), got " + maxFalseDenials);
    }
    if (flatOut.isNegative() || flatOut.compareTo(Duration.ofMinutes(1)) > 0) {
      throw bad("--flat-out: must be between 0s and 1m, got " + Durations.format(flatOut));
    }
    checkStores();
    checkSimulation();
    return new TuneConfig(profile, nodes, limit, window, duration, sliding, demand, k, seed, List.copyOf(batches),
        List.copyOf(intervals), redis, out, maxError, maxFalseDenials, flatOut, List.copyOf(regionRedis),
        List.copyOf(regionWeights), simulate ? roundTrip : null, nodeSkew, reservation, keyAffinity);
  }

  /** --simulate and --round-trip. */
  private void checkSimulation() {
    if (!simulate) {
      if (!roundTrip.equals(Duration.ofMillis(1))) {
        throw bad("--round-trip: only with --simulate (a real store's round trip is what it is)");
      }
      return;
    }
    if (redis != null || !regionRedis.isEmpty()) {
      throw bad("--simulate: not together with " + (redis != null ? "--redis" : "--region-redis")
          + " (the simulation has its own in-memory store)");
    }
    if (roundTrip.isNegative() || roundTrip.compareTo(Duration.ofSeconds(1)) > 0) {
      throw bad("--round-trip: must be between 0s and 1s, got " + Durations.format(roundTrip));
    }

  }

  /** --window and --duration. */
  private void checkTimes() {
    if (window.compareTo(Limit.MIN_WINDOW) < 0 || window.compareTo(Duration.ofHours(1)) > 0) {
      throw bad("--window: must be between 10ms and 1h, got " + Durations.format(window));
    }
    if (duration.compareTo(window) < 0) {
      throw bad("--duration: must be at least one window (" + Durations.format(window) + "), got "
          + Durations.format(duration));
    }
    if (duration.compareTo(Duration.ofHours(1)) > 0) {
      throw bad("--duration: at most 1h, got " + Durations.format(duration));
    }
  }

  /** --batch-sizes, each at least 1, without repeats. */
  private List<Long> distinctBatchSizes() {
    if (batchSizes.isEmpty()) {
      throw bad("--batch-sizes: give at least one batch size");
    }
    List<Long> batches = new ArrayList<>();
    for (long b : batchSizes) {
      if (b < 1) {
        throw bad("--batch-sizes: every batch size must be at least 1, got " + b);
      }
      if (!batches.contains(b)) {
        batches.add(b);
      }
    }
    return batches;
  }

  /** --sync-intervals, each positive and at most half the window, without repeats. */
  private List<Duration> distinctSyncIntervals() {
    List<Duration> intervals = new ArrayList<>();
    for (Duration s : syncIntervals) {
      if (s.isZero() || s.isNegative()) {
        throw bad("--sync-intervals: every interval must be positive, got " + Durations.format(s));
      }
      if (s.multipliedBy(2).compareTo(window) > 0) {
        throw bad("--sync-intervals: at most half the window (" + Durations.format(window.dividedBy(2)) + "), got "
            + Durations.format(s));
      }
      if (!intervals.contains(s)) {
        intervals.add(s);
      }
    }
    if (intervals.isEmpty()) {
      throw bad("--sync-intervals: give at least one interval");
    }
    return intervals;
  }

  /** --redis, --region-redis and --region-weights. */
  private void checkStores() {
    if (redis != null && redis.isBlank()) {
      throw bad("--redis: give a URI such as redis://127.0.0.1:6379");
    }
    if (regionRedis.size() == 1) {
      throw bad("--region-redis: give two or more regions (one Redis each), or use --redis for one");
    }
    if (!regionRedis.isEmpty()) {
      if (redis != null) {
        throw bad("--region-redis: not together with --redis (each region has its own Redis)");
      }
      if (reservation) {
        throw bad("--reservation: not with --region-redis (regions enforce their shares in the approximate mode)");
      }
      if (nodes < regionRedis.size()) {
        throw bad("--nodes: at least one node per region (" + regionRedis.size() + "), got " + nodes);
      }
      for (String uri : regionRedis) {
        if (uri == null || uri.isBlank()) {
          throw bad("--region-redis: give a URI such as redis://127.0.0.1:6379");
        }
      }
    }
    if (!(nodeSkew >= 0 && nodeSkew <= 4)) {
      throw bad("--node-skew: must be between 0 and 4, got " + nodeSkew);
    }
    if (nodeSkew > 0 && !regionWeights.isEmpty()) {
      throw bad("--node-skew: not with --region-weights (each sets how requests spread over the nodes)");
    }
    if (keyAffinity && (nodeSkew > 0 || !regionRedis.isEmpty())) {
      throw bad("--key-affinity: not with " + (nodeSkew > 0 ? "--node-skew" : "--region-redis")
          + " (each sets how requests spread over the nodes)");
    }
    if (!regionWeights.isEmpty()) {
      if (regionWeights.size() != regionRedis.size()) {
        throw bad("--region-weights: one weight per --region-redis (" + regionRedis.size() + "), got "
            + regionWeights.size());
      }
      for (double w : regionWeights) {
        if (!(w > 0) || Double.isInfinite(w)) {
          throw bad("--region-weights: every weight must be positive, got " + w);
        }
      }
    }
  }

  private ParameterException bad(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  static final class ProfileConverter implements CommandLine.ITypeConverter<Profile> {
    @Override
    public Profile convert(String value) {
      try {
        return Profile.parse(value);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException(e.getMessage());
      }
    }
  }
}
