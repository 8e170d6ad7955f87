package io.sluice.sync;

import io.sluice.node.Algorithm;
import io.sluice.node.Limit;
import io.sluice.node.ReferenceModels;
import io.sluice.sync.sim.SimulatedNodes;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * The differential accuracy kit: drives N {@link SyncedLimiter} nodes sharing one store and the exact
 * algorithm (limiter-node's reference model, one per key) with the same requests at the same moments,
 * on a simulated clock, and reports the two figures every accuracy claim needs, over every key:
 * <ul>
 *   <li><b>over-admission</b>: how far the permits the nodes admitted pass the limit, per key and
 *       window, as the algorithm itself measures it (a fixed window's count; a sliding window's
 *       weighted estimate at each admission), in permits and in % of the limit;</li>
 *   <li><b>false denials</b>: requests the exact algorithm admitted and the nodes denied, in % of all
 *       requests, and among them those on a key below half its limit (the exact run's estimate with
 *       the request stays within half the limit), which must be none.</li>
 * </ul>
 * Each node syncs on its own timer (a random phase), beats as its flusher does (the beat rides on its
 * flushes and claim calls), and a sync a decision asks for runs one simulated millisecond later, as the
 * flusher thread would: the nodes
 * and their syncs are {@link SimulatedNodes} with no store round trip (what {@code sluice tune
 * --simulate} runs with one). Traffic is
 * generated from a seed ({@link Traffic}); a failing run prints its seed, which replays it exactly.
 * {@code -Dsluice.kit.debug=true} prints every admission over the bound and every false denial below
 * half the limit with the nodes' views; {@code -Dsluice.kit.debugAll=true} every false denial and
 * every admission the exact algorithm denied (a swap's other half); {@code -Dsluice.kit.trace=true}
 * every decision in the first 3 ms and the last 20 ms of each window, with both verdicts and the view;
 * {@code -Dsluice.kit.traceKey=KEY} every decision on one key.
 */
public final class AccuracyKit {
  private static final boolean DEBUG = Boolean.getBoolean("sluice.kit.debug");
  private static final boolean DEBUG_ALL = Boolean.getBoolean("sluice.kit.debugAll");
  private static final String TRACE_KEY = System.getProperty("sluice.kit.traceKey");
  /** Simulated time starts near today's epoch time, so a real store's TTLs and windows look ordinary. */
  public static final long START_NANOS = 1_764_547_200_000_000_000L; // 2025-12-01T00:00:00Z

  enum Mode { APPROXIMATE, RESERVATION, EXACT }

  /** One request: when, which key, how many permits. */
  record Request(long atNanos, String key, long cost) {
  }

  /** A traffic profile drawn from a seed: its requests in time order, and the limit they go to. */
  record Traffic(String name, Limit limit, List<Request> requests, long seed) {
    /**
     * The same traffic {@code factor} times slower, on windows {@code factor} times longer: the same
     * requests per window. For real stores, whose TTLs run on the wall clock: a simulated window must
     * not take longer on the wall clock than a stored window lives.
     */
    Traffic stretched(int factor) {
      List<Request> slower = new ArrayList<>(requests.size());
      for (Request r : requests) {
        slower.add(new Request(START_NANOS + (r.atNanos() - START_NANOS) * factor, r.key(), r.cost()));
      }
      // (the profile's limit with a window that many times longer: every limit of the kit is made by window())
      Limit l = window(limit.algorithm(), limit.name(), limit.capacity(), Duration.ofNanos(limit.periodNanos() * factor));
      return new Traffic(name + " x" + factor + " slower", l, List.copyOf(slower), seed);
    }
  }

  /**
   * How the nodes are set up, and how requests reach them: each to a node drawn at random, or, {@code
   * eachKeyOnOneNode}, every request of a key to the same node (a load balancer's session affinity, keys
   * hashed to instances), the node drawn from the key's hash. {@code coldKeyAllowance}: the builder's
   * (on by default). {@code clockStep}: how far apart neighbouring nodes' clocks are (node i's clock
   * {@code (i - (nodes - 1) / 2) * clockStep} ahead of the simulation's; zero: all in step).
   */
  /** Whether nodes whose clocks are apart ({@link Setup#clockStep}) set them to the store's (the builder's default for the wall clock). */
  static final boolean ALIGN_CLOCKS = Boolean.parseBoolean(System.getProperty("sluice.kit.alignClocks", "true"));

  /**
   * How the kit's nodes run: {@code throughTryAcquire}, every decision through {@code tryAcquire} (the path that takes a
   * key's credit without the view's monitor; {@code SimulatedNodes#decideBare}) rather than {@code acquire}.
   */
  record Setup(int nodes, Mode mode, long batchSize, Duration syncInterval, boolean eachKeyOnOneNode,
      boolean coldKeyAllowance, Duration clockStep, boolean throughTryAcquire) {
    Setup(int nodes, Mode mode, long batchSize, Duration syncInterval) {
      this(nodes, mode, batchSize, syncInterval, false, true, Duration.ZERO, false);
    }

    /** This setup with the nodes' cold-key allowances off ({@code SyncConfig.Builder#coldKeyAllowance}). */
    Setup withoutColdKeyAllowance() {
      return new Setup(nodes, mode, batchSize, syncInterval, eachKeyOnOneNode, false, clockStep, throughTryAcquire);
    }

    /** This setup with neighbouring nodes' clocks {@code step} apart. */
    Setup withClockStep(Duration step) {
      return new Setup(nodes, mode, batchSize, syncInterval, eachKeyOnOneNode, coldKeyAllowance, step, throughTryAcquire);
    }

    /** This setup with every decision made through {@code tryAcquire}. */
    Setup viaTryAcquire() {
      return new Setup(nodes, mode, batchSize, syncInterval, eachKeyOnOneNode, coldKeyAllowance, clockStep, true);
    }

    /** Each node's clock offset from the simulation's (null: all in step). */
    long[] clockOffsetsNanos() {
      if (clockStep.isZero()) {
        return null;
      }
      long[] offsets = new long[nodes];
      for (int i = 0; i < nodes; i++) {
        offsets[i] = (long) ((i - (nodes - 1) / 2.0) * clockStep.toNanos());
      }
      return offsets;
    }

    static Setup of(int nodes, Mode mode) {
      return new Setup(nodes, mode, SyncedLimiter.Builder.DEFAULT_BATCH_SIZE, SyncedLimiter.Builder.DEFAULT_SYNC_INTERVAL);
    }

    /** {@link #of}, with every request of a key sent to the same node. */
    static Setup eachKeyOnOneNode(int nodes, Mode mode) {
      return new Setup(nodes, mode, SyncedLimiter.Builder.DEFAULT_BATCH_SIZE, SyncedLimiter.Builder.DEFAULT_SYNC_INTERVAL,
          true, true, Duration.ZERO, false);
    }

    /** The node request {@code r} goes to ({@code random} draws it where keys go to any node). */
    int nodeFor(Request r, SplittableRandom random) {
      int drawn = random.nextInt(nodes);
      // (the key's String.hashCode times an odd constant, mod the nodes: a fixed spread of the keys, even
      // over the kit's keys; for a power-of-two node count it is the hash mod the nodes)
      return eachKeyOnOneNode ? Math.floorMod(r.key().hashCode() * 0x9E3779B9, nodes) : drawn;
    }

    @Override
    public String toString() {
      return nodes + " node" + (nodes == 1 ? "" : "s") + ", " + mode.name().toLowerCase(Locale.ROOT)
          + (mode == Mode.EXACT ? "" : ", batch " + batchSize + ", sync " + syncInterval.toMillis() + " ms")
          + (eachKeyOnOneNode ? ", each key on one node" : "") + (coldKeyAllowance ? "" : ", no cold-key allowance")
          + (clockStep.isZero() ? "" : ", clocks " + clockStep.toNanos() / 1e6 + " ms apart")
          + (throughTryAcquire ? ", tryAcquire" : "");
    }
  }

  /** The figures of one run. */
  record Report(String traffic, String setup, long seed, long requests, long exactAdmitted, long nodesAdmitted,
      long falseDenials, long netFalseDenials, long falseDenialsBelowHalf, long extraAdmissions, double worstOverPermits,
      double worstOverPercent, long keyWindowsOverBound, long keyWindows, long storeCalls, long keyUpdates,
      long waitedDecisions, long limit, double waitP50Micros, double waitP99Micros, long ledgerLost,
      long ledgerExtra) {

    double falseDenialPercent() {
      return requests == 0 ? 0 : 100.0 * falseDenials / requests;
    }

    /**
     * False denials not made up in their key-window: per key and window, those the exact algorithm
     * admitted and the nodes denied less those the nodes admitted and the exact algorithm denied
     * (when neither run is at the limit the two sets differ only in which request got through).
     */
    double netFalseDenialPercent() {
      return requests == 0 ? 0 : 100.0 * netFalseDenials / requests;
    }

    /** Permits the nodes admitted in % of what the exact algorithm admitted. */
    double admittedVsExactPercent() {
      return exactAdmitted == 0 ? 100 : 100.0 * nodesAdmitted / exactAdmitted;
    }

    double storeCallsPerThousand() {
      return requests == 0 ? 0 : 1000.0 * storeCalls / requests;
    }

    double keyUpdatesPerThousand() {
      return requests == 0 ? 0 : 1000.0 * keyUpdates / requests;
    }

    /**
     * Whether the ledger was read: the store is the in-memory one and the limit a window limit, whose
     * permits the store counts ({@link #ledgerLost} and {@link #ledgerExtra} are -1 otherwise).
     */
    boolean ledgerRead() {
      return ledgerLost >= 0;
    }

    /**
     * Permits the store counted beyond those admitted where {@code mode} must count none (0 where the
     * ledger was not read): every mode but reservation, which counts what it was granted (a fixed window's
     * grant left unused at the window's end stays counted, budget lost, never a permit admitted beyond it).
     */
    long ledgerExtraIn(Mode mode) {
      return ledgerRead() && mode != Mode.RESERVATION ? ledgerExtra : 0;
    }

    double waitedPercent() {
      return requests == 0 ? 0 : 100.0 * waitedDecisions / requests;
    }

    /** The over-admission bound of DESIGN.md: 0.5% of the limit or 1 permit, whichever is larger. */
    double overBoundPermits() {
      return Math.max(1, 0.005 * limit);
    }

    @Override
    public String toString() {
      return String.format(Locale.ROOT,
          "%s | %s | seed %d: %,d requests; admitted %.2f%% of exact (%,d / %,d); false denials %,d (%.3f%%),"
              + " not made up in their key-window %.3f%%, below half the limit %,d; over worst %.2f permits (%.3f%% of %,d), key-windows over the bound %,d"
              + " of %,d; store calls %.1f /1k, key updates %.1f /1k; decisions that waited %.2f%%"
              + " (wall clock p50 %.0f us, p99 %.0f us)",
          traffic, setup, seed, requests, admittedVsExactPercent(), nodesAdmitted, exactAdmitted, falseDenials,
          falseDenialPercent(), netFalseDenialPercent(), falseDenialsBelowHalf, worstOverPermits, worstOverPercent, limit, keyWindowsOverBound,
          keyWindows, storeCallsPerThousand(), keyUpdatesPerThousand(), waitedPercent(), waitP50Micros, waitP99Micros);
    }
  }

  private AccuracyKit() {
  }

  /** Runs the traffic through {@code setup.nodes} limiters on a new store from {@code stores}. */
  static Report run(Traffic traffic, Setup setup, Supplier<? extends CounterStore> stores) {
    CounterStore store = stores.get();
    try {
      return run(traffic, setup, store, "kit-" + Long.toHexString(traffic.seed()));
    } finally {
      store.close();
    }
  }

  static Report run(Traffic traffic, Setup setup, CounterStore store, String nodePrefix) {
    return run(traffic, setup, n -> store, nodePrefix, store);
  }

  /**
   * Node n works through {@code storeOf.apply(n)} (a connection of its own, as a real node has);
   * {@code shared} is the store the figures are read from when it is the in-memory one.
   */
  static Report run(Traffic traffic, Setup setup, java.util.function.IntFunction<CounterStore> storeOf, String nodePrefix,
      CounterStore shared) {
    CounterStore store = shared;
    Limit limit = traffic.limit();
    SplittableRandom random = new SplittableRandom(traffic.seed() * 31 + setup.nodes());
    // the nodes, their syncs on their timers (phases from random), asked-for syncs and heartbeats:
    // SimulatedNodes with no round trip, which sluice tune --simulate runs too (with one)
    SimulatedNodes sim = new SimulatedNodes(setup.nodes(), setup.syncInterval(), Duration.ZERO, START_NANOS, random,
        storeOf, (i, s) -> {
          SyncedLimiter.Builder b = SyncedLimiter.builder(limit, s).nodeId(nodePrefix + "-" + i)
              .coldKeyAllowance(setup.coldKeyAllowance());
          if (!setup.clockStep().isZero()) {
            // (nodes' clocks apart: set to the store's, the simulation's, unless -Dsluice.kit.alignClocks=false
            // measures them as they are; in step, nothing to set)
            b.alignClockToStore(ALIGN_CLOCKS);
          }
          switch (setup.mode()) {
            case EXACT -> b.batchSize(1);
            case RESERVATION -> b.batchSize(setup.batchSize()).reservation();
            default -> b.batchSize(setup.batchSize());
          }
          return b;
        }, setup.clockOffsetsNanos());
    List<SyncedLimiter> nodes = sim.limiters();
    long window = limit.periodNanos();
    boolean sliding = limit.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER;
    // a bucket's over-admission: the nodes' admissions replayed through the bucket with debt allowed,
    // per key {backlog in tokens, time}: how far past its capacity they took it (0 when they never did)
    boolean bucket = SyncedLimiter.claimsTokens(limit);
    double refillPerNano = (double) limit.refillTokens() / limit.periodNanos();
    Map<String, double[]> debts = new HashMap<>();
    double bound = Math.max(1, 0.005 * limit.capacity());
    Map<String, ReferenceModels.Model> exact = new HashMap<>();
    Map<String, long[]> exactCounts = new HashMap<>(); // key -> {window, count, previous count}
    Map<String, long[]> nodeCounts = new HashMap<>();
    // the ledger: every permit the nodes admitted, per key and window (the request's: the nodes' clocks
    // and the store's are one where they are in step)
    Map<String, Map<Long, long[]>> admittedByKey = new HashMap<>();
    Map<String, double[]> worst = new HashMap<>(); // key -> {window, worst over in it}
    Map<String, long[]> swaps = new HashMap<>(); // key -> {window, exact-only admissions, nodes-only admissions}
    long net = 0;
    long exactAdmitted = 0;
    long nodesAdmitted = 0;
    long falseDenials = 0;
    long belowHalf = 0;
    long extra = 0;
    double worstOver = 0;
    long overBound = 0;
    long keyWindows = 0;
    List<Long> waits = new ArrayList<>();
    try {
      for (Request r : traffic.requests()) {
        sim.advanceTo(r.atNanos());
        int n = setup.nodeFor(r, random);
        SyncedLimiter node = nodes.get(n);
        long waitedBefore = node.waitedDecisions();
        long startedAt = System.nanoTime();
        boolean nodeAllowed = setup.throughTryAcquire() ? sim.decideBare(n, r.key(), r.cost()) : sim.decide(n, r.key(), r.cost()).allowed();
        if (node.waitedDecisions() != waitedBefore) {
          waits.add(System.nanoTime() - startedAt);
        }
        long now = r.atNanos();
        long w = Math.floorDiv(now, window);
        double prevWeight = sliding ? (double) (window - (now - w * window)) / window : 0;

        long[] ec = roll(exactCounts.computeIfAbsent(r.key(), k -> new long[] {w, 0, 0}), w);
        double exactEstimate = ec[2] * prevWeight + ec[1];
        // at the stores' resolution: every store takes the nodes' times in whole microseconds
        ReferenceModels.Answer expected = exact.computeIfAbsent(r.key(), k -> ReferenceModels.of(limit,
            START_NANOS)).request(now / 1_000 * 1_000, r.cost());
        boolean exactAllowed = expected.allowed;
        if (exactAllowed) {
          ec[1] += r.cost();
          exactAdmitted += r.cost();
        }
        if (r.key().equals(TRACE_KEY) || Boolean.getBoolean("sluice.kit.trace") && ((now - w * window) > window - 20_000_000L || (now - w * window) < 3_000_000L)) {
          System.err.printf("trace: key %s cost %d at +%.3f ms w %d node %d: exact %s %d (prev %d, remaining %d) node %s; %s%n", r.key(), r.cost(),
              (now - w * window) / 1e6, w, n, exactAllowed, ec[1], ec[2], expected.remaining, nodeAllowed,
              CoreAccess.core(node).describeView(r.key(), now));
        }
        if (exactAllowed != nodeAllowed) {
          long[] sw = swaps.get(r.key());
          if (sw == null || sw[0] != w) {
            if (sw != null) {
              net += Math.max(0, sw[1] - sw[2]);
            }
            sw = new long[] {w, 0, 0};
            swaps.put(r.key(), sw);
          }
          sw[exactAllowed ? 1 : 2]++;
        }
        if (exactAllowed && !nodeAllowed) {
          falseDenials++;
          if (DEBUG_ALL && bucket) {
            System.err.printf("false denial: key %s cost %d at %d us node %d: exact remaining %d%n", r.key(), r.cost(),
                (now - START_NANOS) / 1_000, n, expected.remaining);
          } else if (DEBUG_ALL) {
            System.err.printf("false denial: key %s cost %d at +%d ms node %d: exact %d (prev %d); %s%n",
                r.key(), r.cost(), (now - w * window) / 1_000_000, n, ec[1], ec[2],
                CoreAccess.core(node).describeView(r.key(), now));
          }
          if (bucket ? expected.remaining >= limit.capacity() / 2.0 : exactEstimate + r.cost() <= limit.capacity() / 2.0) {
            belowHalf++;
            if (DEBUG) {
              System.err.printf("below half: key %s cost %d at +%d ms node %d: exact %d (prev %d); %s;"
                  + " breaker %s asks %s fallbacks %d failures %d%n", r.key(), r.cost(), (now - w * window) / 1_000_000, n,
                  ec[1], ec[2], CoreAccess.core(node).describeView(r.key(), now), node.storeBreaker().state(),
                  CoreAccess.core(node).claimsAsked(), node.fallbackDecisions(), node.storeFailures());
            }
          }
        }
        long[] nc = roll(nodeCounts.computeIfAbsent(r.key(), k -> new long[] {w, 0, 0}), w);
        if (nodeAllowed) {
          nc[1] += r.cost();
          nodesAdmitted += r.cost();
          admittedByKey.computeIfAbsent(r.key(), k -> new HashMap<>()).computeIfAbsent(w, x -> new long[1])[0] += r.cost();
          if (!exactAllowed) {
            extra++;
            if (DEBUG_ALL && !bucket) {
              System.err.printf("admitted beyond exact: key %s cost %d at +%d ms node %d: exact %d (prev %d); %s%n",
                  r.key(), r.cost(), (now - w * window) / 1_000_000, n, ec[1], ec[2],
                  CoreAccess.core(node).describeView(r.key(), now));
            }
          }
          double over;
          if (bucket) {
            long at = now / 1_000 * 1_000; // (the stores' resolution, as for the exact algorithm)
            double[] d = debts.computeIfAbsent(r.key(), k -> new double[] {0, at});
            d[0] = Math.max(0, d[0] - (at - d[1]) * refillPerNano) + r.cost();
            d[1] = at;
            over = d[0] - limit.capacity();
          } else {
            over = nc[2] * prevWeight + nc[1] - limit.capacity();
          }
          double[] wk = worst.get(r.key());
          if (wk == null || wk[0] != w) {
            if (wk != null && wk[1] > bound + 1e-9) {
              overBound++;
            }
            keyWindows++;
            wk = new double[] {w, 0};
            worst.put(r.key(), wk);
          }
          wk[1] = Math.max(wk[1], over);
          if (DEBUG && over > bound + 1e-9) {
            StringBuilder views = new StringBuilder();
            for (SyncedLimiter each : nodes) {
              views.append(" [").append(CoreAccess.core(each).describeView(r.key(), now)).append(']');
            }
            System.err.printf("over: key %s window %d at +%d ms node %d: nodes %d (prev %d) exact %d; store %d claims %d%s%n",
                r.key(), w, (now - w * window) / 1_000_000, n, nc[1], nc[2], ec[1],
                store instanceof MemoryStore ? ((MemoryStore) store).count(limit.name(), r.key(), w) : -1,
                store instanceof MemoryStore ? ((MemoryStore) store).claims(limit.name(), r.key(), w) : -1, views);
          }
          if (bucket && over < 1e-6 * limit.capacity()) {
            over = 0; // (the replay's floating point: not a permit)
          }
          worstOver = Math.max(worstOver, over);
        }
      }
      for (long[] sw : swaps.values()) {
        net += Math.max(0, sw[1] - sw[2]);
      }
      for (double[] wk : worst.values()) {
        if (wk[1] > bound + 1e-9) {
          overBound++;
        }
      }
      long storeCalls = 0;
      long waited = 0;
      for (SyncedLimiter node : nodes) {
        storeCalls += node.storeCalls();
        waited += node.waitedDecisions();
      }
      long keyUpdates = store instanceof MemoryStore ? ((MemoryStore) store).keyUpdates() : -1;
      // the ledger, once the nodes have closed (a node's close sends what it has not sent): per key and
      // window (per key where the nodes' clocks are apart: a permit counts in its node's window), permits
      // the nodes admitted that the store never counted, and permits it counted beyond them, keys that
      // no node admitted on included
      long lost = -1;
      long countedBeyond = -1;
      if (store instanceof MemoryStore && !bucket && limit.algorithm() != Algorithm.SLIDING_WINDOW_LOG) {
        sim.close();
        MemoryStore memory = (MemoryStore) store;
        boolean inStep = setup.clockStep().isZero();
        lost = 0;
        countedBeyond = memory.countedInAll();
        for (Map.Entry<String, Map<Long, long[]>> e : admittedByKey.entrySet()) {
          long keyAdmitted = 0;
          for (Map.Entry<Long, long[]> byWindow : e.getValue().entrySet()) {
            keyAdmitted += byWindow.getValue()[0];
            if (inStep) {
              long gap = memory.counted(limit.name(), e.getKey(), byWindow.getKey()) - byWindow.getValue()[0];
              lost += Math.max(0, -gap);
            }
          }
          long keyCounted = memory.counted(limit.name(), e.getKey());
          if (!inStep) {
            lost += Math.max(0, keyAdmitted - keyCounted);
          }
          countedBeyond -= Math.min(keyCounted, keyAdmitted);
        }
        // (countedBeyond now holds what the store counted beyond the admissions, per key; per window, a
        // permit counted in another window than its own shows as lost there)
      }
      return new Report(traffic.name(), setup.toString(), traffic.seed(), traffic.requests().size(), exactAdmitted,
          nodesAdmitted, falseDenials, net, belowHalf, extra, Math.max(0, worstOver),
          100.0 * Math.max(0, worstOver) / limit.capacity(), overBound, keyWindows, storeCalls, keyUpdates, waited,
          limit.capacity(), percentile(waits, 0.50) / 1e3, percentile(waits, 0.99) / 1e3, lost, countedBeyond);
    } finally {
      sim.close();
    }
  }

  private static double percentile(List<Long> values, double p) {
    if (values.isEmpty()) {
      return 0;
    }
    long[] sorted = values.stream().mapToLong(Long::longValue).sorted().toArray();
    return sorted[Math.min(sorted.length - 1, (int) Math.floor(p * sorted.length))];
  }

  /** {window, count, previous count} moved to window w. */
  private static long[] roll(long[] c, long w) {
    if (c[0] == w) {
      return c;
    }
    c[2] = c[0] == w - 1 ? c[1] : 0;
    c[1] = 0;
    c[0] = w;
    return c;
  }

  // ------------------------------------------------------------------ traffic

  /** Builds requests from a seed; every generator adds to one list, sorted at the end. */
  static final class TrafficBuilder {
    private final String name;
    private final Limit limit;
    private final long seed;
    private final SplittableRandom random;
    private final List<Request> requests = new ArrayList<>();

    TrafficBuilder(String name, Limit limit, long seed) {
      this.name = name;
      this.limit = limit;
      this.seed = seed;
      this.random = new SplittableRandom(seed);
    }

    SplittableRandom random() {
      return random;
    }

    /** A Poisson stream of one key at {@code ratePerSecond} from {@code from} for {@code duration}. */
    TrafficBuilder poisson(String key, double ratePerSecond, Duration from, Duration duration, long cost) {
      long t = START_NANOS + from.toNanos();
      long end = t + duration.toNanos();
      while (true) {
        t += (long) (-Math.log(1 - random.nextDouble()) / ratePerSecond * 1e9);
        if (t >= end) {
          return this;
        }
        requests.add(new Request(t, key, cost));
      }
    }

    /** One request every {@code every}, from {@code from}, {@code count} times. */
    TrafficBuilder paced(String key, Duration from, Duration every, int count, long cost) {
      for (int i = 0; i < count; i++) {
        requests.add(new Request(START_NANOS + from.toNanos() + i * every.toNanos(), key, cost));
      }
      return this;
    }

    TrafficBuilder add(long offsetNanos, String key, long cost) {
      requests.add(new Request(START_NANOS + offsetNanos, key, cost));
      return this;
    }

    Traffic build() {
      requests.sort((a, b) -> Long.compare(a.atNanos(), b.atNanos()));
      return new Traffic(name, limit, List.copyOf(requests), seed);
    }
  }

  /**
   * The profile's limit: a window of {@code limit} per {@code window}, or for a token bucket one of
   * capacity {@code limit} refilled at {@code limit} per {@code window} (the same rate, its burst the
   * window's budget).
   */
  private static Limit window(Algorithm algorithm, String name, long limit, Duration window) {
    if (algorithm == Algorithm.TOKEN_BUCKET) {
      return Limit.tokenBucket(name).capacity(limit).refill(limit, window).build();
    }
    if (algorithm == Algorithm.LEAKY_BUCKET) {
      return Limit.leakyBucket(name).capacity(limit).leakRate(limit, window).build();
    }
    return (algorithm == Algorithm.FIXED_WINDOW ? Limit.fixedWindow(name) : Limit.slidingWindowCounter(name))
        .limit(limit).window(window).build();
  }

  /** The profiles every mode and node count is measured on (DESIGN.md: the whole traffic space). */
  enum Profile {
    /** Sparse keys: Poisson, mean gaps log-uniform from 10 ms to 10 s, keys first seen anywhere. */
    SPARSE {
      @Override
      Traffic traffic(Algorithm a, long seed) {
        TrafficBuilder t = new TrafficBuilder(label(a), window(a, "sparse", 100, Duration.ofSeconds(1)), seed);
        for (int k = 0; k < 300; k++) {
          double gap = Math.pow(10, -2 + 3 * t.random().nextDouble());
          double start = t.random().nextDouble() * 10;
          t.poisson("s" + k, 1 / gap, Duration.ofMillis((long) (start * 1000)), Duration.ofSeconds(20), 1);
        }
        return t.build();
      }
    },
    /** Per-key rates spread log-uniformly from 0.01x to 3x the limit over 2,000 keys. */
    SPREAD {
      @Override
      Traffic traffic(Algorithm a, long seed) {
        TrafficBuilder t = new TrafficBuilder(label(a), window(a, "spread", 20, Duration.ofSeconds(1)), seed);
        for (int k = 0; k < 2_000; k++) {
          double rate = 20 * Math.pow(10, -2 + Math.log10(300) * t.random().nextDouble());
          t.poisson("r" + k, rate, Duration.ofMillis(t.random().nextInt(2_000)), Duration.ofSeconds(4), 1);
        }
        return t.build();
      }
    },
    /** Small limits: 1, 5 and 10 per window, keys below, at and above them, costs up to the limit. */
    SMALL_LIMITS {
      @Override
      Traffic traffic(Algorithm a, long seed) {
        long[] limits = {1, 5, 10};
        long limit = limits[(int) Math.floorMod(seed, 3)];
        TrafficBuilder t = new TrafficBuilder(label(a) + " limit " + limit,
            window(a, "small" + limit, limit, Duration.ofSeconds(1)), seed);
        for (int k = 0; k < 400; k++) {
          double rate = limit * Math.pow(10, -1.5 + 2 * t.random().nextDouble());
          long cost = t.random().nextInt(8) == 0 ? 1 + t.random().nextLong(limit) : 1;
          t.poisson("m" + k, rate, Duration.ofMillis(t.random().nextInt(3_000)), Duration.ofSeconds(6), cost);
        }
        return t.build();
      }
    },
    /** Zipf over 100,000 keys (s = 1.1): a few hot keys at several times their limit, most keys seen once. */
    ZIPF {
      @Override
      Traffic traffic(Algorithm a, long seed) {
        TrafficBuilder t = new TrafficBuilder(label(a), window(a, "zipf", 200, Duration.ofSeconds(1)), seed);
        double[] cdf = zipf(100_000);
        long time = 0;
        for (int i = 0; i < 30_000; i++) {
          time += (long) (-Math.log(1 - t.random().nextDouble()) / 10_000 * 1e9); // 10,000 requests/s
          t.add(time, "z" + draw(cdf, t.random()), 1);
        }
        return t.build();
      }
    },
    /**
     * Zipf over 1,000 keys (s = 1.1), the hottest at twice its limit, most far below it (the traffic
     * of the issue that found cold keys denied: 10 s, about 10,500 requests).
     */
    ZIPF_1K {
      @Override
      Traffic traffic(Algorithm a, long seed) {
        TrafficBuilder t = new TrafficBuilder(label(a), window(a, "zipf1k", 100, Duration.ofSeconds(1)), seed);
        double[] cdf = zipf(1_000);
        double rate = 200 * cdf[cdf.length - 1]; // the hottest key's share is 1 / sum: 200 per second, twice its limit
        // (-Dsluice.kit.zipf1kSeconds=N runs it longer: a measurement of steady state, where keys
        // have been seen for a while, beside the kit's ten seconds from a cold start)
        long end = Long.getLong("sluice.kit.zipf1kSeconds", 10) * 1_000_000_000L;
        for (long time = 0; ; ) {
          time += (long) (-Math.log(1 - t.random().nextDouble()) / rate * 1e9);
          if (time >= end) {
            break;
          }
          t.add(time, "y" + draw(cdf, t.random()), 1);
        }
        return t.build();
      }
    },
    /** One hot key at twice its limit, a step from half to three times it, on/off bursts, a ramp. */
    SHAPES {
      @Override
      Traffic traffic(Algorithm a, long seed) {
        TrafficBuilder t = new TrafficBuilder(label(a), window(a, "shapes", 500, Duration.ofSeconds(1)), seed);
        t.poisson("hot", 1_000, Duration.ZERO, Duration.ofSeconds(4), 1);
        t.poisson("step", 250, Duration.ZERO, Duration.ofSeconds(2), 1);
        t.poisson("step", 1_500, Duration.ofSeconds(2), Duration.ofSeconds(2), 1);
        for (int b = 0; b < 4; b++) { // 300 ms at 3x the limit every second, silent between
          t.poisson("burst", 1_500, Duration.ofMillis(1_000L * b + 350), Duration.ofMillis(300), 1);
        }
        for (int s = 0; s < 40; s++) { // a ramp from 0.1x to 1.5x the limit over 4 s
          t.poisson("ramp", 50 + 650 * s / 40.0, Duration.ofMillis(100L * s), Duration.ofMillis(100), 1);
        }
        return t.build();
      }
    },
    /** A large limit (10^6 per window) at costs of 1 to 2,000, reached and passed in every window. */
    LARGE_LIMIT {
      @Override
      Traffic traffic(Algorithm a, long seed) {
        TrafficBuilder t = new TrafficBuilder(label(a), window(a, "large", 1_000_000, Duration.ofSeconds(1)), seed);
        long time = 0;
        for (int i = 0; i < 6_000; i++) { // ~1.5 M permits per second over 4 s, on two keys
          time += (long) (-Math.log(1 - t.random().nextDouble()) / 1_500 * 1e9);
          t.add(time, i % 5 == 0 ? "other" : "big", 1 + t.random().nextLong(1_999));
        }
        return t.build();
      }
    },
    /**
     * Many keys on a large limit (10,000 per window, where a node's allowance is many permits: 50, 16 and 6
     * on 1, 3 and 8 nodes): 490 keys far below it (0.1 to 20 requests a second, costs 1 to 5), nine at half
     * of it and one at twice it (costs of 25), for 4 s. Where a key's allowance pays by credit and its
     * permits wait for the window's last sync within the reserve.
     */
    LARGE_MANY {
      @Override
      Traffic traffic(Algorithm a, long seed) {
        TrafficBuilder t = new TrafficBuilder(label(a), window(a, "largemany", 10_000, Duration.ofSeconds(1)), seed);
        for (int k = 0; k < 490; k++) {
          double rate = Math.pow(10, -1 + Math.log10(200) * t.random().nextDouble());
          t.poisson("c" + k, rate, Duration.ofMillis(t.random().nextInt(1_000)), Duration.ofSeconds(4), 1 + t.random().nextInt(5));
        }
        for (int k = 0; k < 9; k++) {
          t.poisson("w" + k, 200, Duration.ZERO, Duration.ofSeconds(4), 25);
        }
        t.poisson("hot", 800, Duration.ZERO, Duration.ofSeconds(4), 25);
        return t.build();
      }
    };

    abstract Traffic traffic(Algorithm algorithm, long seed);

    /** The cumulative weights of Zipf (s = 1.1) over {@code keys} keys, unnormalised: the last is the sum. */
    static double[] zipf(int keys) {
      double[] cdf = new double[keys];
      double sum = 0;
      for (int k = 0; k < keys; k++) {
        sum += 1 / Math.pow(k + 1, 1.1);
        cdf[k] = sum;
      }
      return cdf;
    }

    /** A key drawn from cumulative weights. */
    static int draw(double[] cdf, SplittableRandom random) {
      double u = random.nextDouble() * cdf[cdf.length - 1];
      int lo = 0;
      int hi = cdf.length - 1;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (cdf[mid] < u) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    }

    String label(Algorithm a) {
      return name().toLowerCase(Locale.ROOT).replace('_', '-') + " (" + (a == Algorithm.FIXED_WINDOW ? "fixed"
          : a == Algorithm.TOKEN_BUCKET ? "bucket" : a == Algorithm.LEAKY_BUCKET ? "leaky meter" : "sliding") + ")";
    }
  }

  /** Runs {@code action} and prints how to replay when it fails. */
  static <T> T replayable(Traffic traffic, Setup setup, Supplier<T> action) {
    try {
      return action.get();
    } catch (RuntimeException | AssertionError e) {
      System.err.println("accuracy kit: failed on " + traffic.name() + " | " + setup + " | seed " + traffic.seed()
          + " (replay: -Dsluice.kit.seed=" + traffic.seed() + ")");
      throw e;
    }
  }

  /**
   * The seed of a run: {@code -Dsluice.kit.seed} replays one, else a fixed seed per case, moved by
   * {@code -Dsluice.kit.seedOffset} (every case on other traffic than the one its figures were read
   * from: the same bounds must hold there).
   */
  static long seed(long fixed) {
    String s = System.getProperty("sluice.kit.seed");
    return s == null || s.isBlank() ? fixed + seedOffset() : Long.parseLong(s.trim());
  }

  /** {@code -Dsluice.kit.seedOffset}: how far every case's seed moves (0: the seeds its figures were read from). */
  static long seedOffset() {
    return Long.getLong("sluice.kit.seedOffset", 0L);
  }
}
