package io.sluice.chaos;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.sluice.chaos.ChaosNode.Phase;
import io.sluice.node.Ticker;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.spi.StoreKeys;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * One scenario: a group of nodes per fallback policy, all under the same fault at once (each group
 * has its own keys and node registry in Redis, so they do not see each other), through phases:
 * warm-up, baseline, fault, recovery (from healing until every breaker is closed and the backlog is
 * flushed), a little after; then the nodes close (flushing what is left) and the counts are read back.
 */
final class ChaosRun implements AutoCloseable {
  static final Duration WARMUP = Duration.ofSeconds(1);
  static final Duration BASELINE = Duration.ofSeconds(3);
  static final Duration AFTER = Duration.ofSeconds(1);
  static final Duration RECOVERY_LIMIT = Duration.ofSeconds(30);

  final String scenario;
  final ChaosRig rig;
  final long rateLimit;
  final int ledgerMaxKeys;
  final Map<StoreFailurePolicy, List<ChaosNode>> groups = new EnumMap<>(StoreFailurePolicy.class);
  private volatile Phase phase = Phase.WARMUP;
  private final Map<ChaosNode, Long> baselinePending = new HashMap<>();
  final Map<ChaosNode, Integer> maxKeys = new HashMap<>();
  long baselineStart;
  long faultStart;
  long healedAt;
  /** Per policy: when its nodes had recovered (every breaker closed, backlog flushed). */
  final Map<StoreFailurePolicy, Long> recoveredAt = new EnumMap<>(StoreFailurePolicy.class);
  private boolean finished;
  final Duration rateWindow;

  ChaosRun(ChaosRig rig, Map<StoreFailurePolicy, List<ChaosRig.Link>> links, String scenario, long rateLimit,
      int ledgerMaxKeys, int floodPerSecond) {
    this(rig, links, scenario, rateLimit, Duration.ofSeconds(1), ledgerMaxKeys, floodPerSecond);
  }

  /** A run whose rate limit has windows of {@code rateWindow} (rateLimit per window, demand twice that). */
  ChaosRun(ChaosRig rig, Map<StoreFailurePolicy, List<ChaosRig.Link>> links, String scenario, long rateLimit,
      Duration rateWindow, int ledgerMaxKeys, int floodPerSecond) {
    this.rateWindow = rateWindow;
    this.scenario = scenario;
    this.rig = rig;
    this.rateLimit = rateLimit;
    this.ledgerMaxKeys = ledgerMaxKeys;
    for (Map.Entry<StoreFailurePolicy, List<ChaosRig.Link>> e : links.entrySet()) {
      List<ChaosNode> nodes = new ArrayList<>();
      List<ChaosRig.Link> groupLinks = e.getValue();
      for (int i = 0; i < groupLinks.size(); i++) {
        nodes.add(new ChaosNode(this, e.getKey(), i, groupLinks.size(), groupLinks.get(i), prefix(e.getKey()),
            rateLimit, ledgerMaxKeys, floodPerSecond));
      }
      groups.put(e.getKey(), nodes);
    }
  }

  String prefix(StoreFailurePolicy policy) {
    return "chaos-" + scenario + "-" + policy.name().toLowerCase(java.util.Locale.ROOT);
  }

  Phase phase() {
    return phase;
  }

  List<ChaosNode> allNodes() {
    List<ChaosNode> all = new ArrayList<>();
    groups.values().forEach(all::addAll);
    return all;
  }

  /** Starts the load, warms up, and runs the baseline (no fault). */
  void baseline() {
    allNodes().forEach(ChaosNode::start);
    hold(WARMUP);
    phase = Phase.BASELINE;
    baselineStart = now();
    hold(BASELINE, n -> baselinePending.merge(n, n.pending(), Math::max));
  }

  /** The fault begins now (the caller injects it right after). */
  void faultStarts() {
    faultStart = now();
    phase = Phase.FAULT;
  }

  /** Keeps the load going until {@code into} after the start of a rate window (the next one, if past that). */
  void holdUntilIntoWindow(Duration into) {
    long w = rateWindow.toNanos();
    long now = now();
    long target = Math.floorDiv(now, w) * w + into.toNanos();
    if (target <= now) {
      target += w;
    }
    hold(Duration.ofNanos(target - now));
  }

  /** Keeps the load going for {@code d}, sampling the nodes every 20 ms. */
  void hold(Duration d) {
    hold(d, n -> { });
  }

  private void hold(Duration d, Consumer<ChaosNode> sample) {
    long until = System.nanoTime() + d.toNanos();
    while (System.nanoTime() < until) {
      for (ChaosNode n : allNodes()) {
        sample.accept(n);
        maxKeys.merge(n, n.ledger.keys(), Math::max);
      }
      LockSupport.parkNanos(20_000_000L);
    }
  }

  /**
   * The fault was removed: waits until every node's breakers are closed and its unacknowledged
   * permits are back to what they were without a fault, at most {@link #RECOVERY_LIMIT}.
   */
  void healed() {
    healedAt = now();
    phase = Phase.RECOVERY;
    long deadline = System.nanoTime() + RECOVERY_LIMIT.toNanos();
    while (System.nanoTime() < deadline && recoveredAt.size() < groups.size()) {
      for (Map.Entry<StoreFailurePolicy, List<ChaosNode>> e : groups.entrySet()) {
        boolean all = true;
        for (ChaosNode n : e.getValue()) {
          maxKeys.merge(n, n.ledger.keys(), Math::max);
          long threshold = 2 * baselinePending.getOrDefault(n, 0L) + 200;
          if (!n.breakersClosed() || n.pending() > threshold) {
            all = false;
          }
        }
        if (all) {
          recoveredAt.putIfAbsent(e.getKey(), now());
        }
      }
      LockSupport.parkNanos(10_000_000L);
    }
    phase = Phase.AFTER;
    hold(AFTER);
  }

  /** Stops the load, closes the nodes (flushing what is left) and reads the counts back, per policy. */
  Map<StoreFailurePolicy, GroupResult> finish() throws InterruptedException {
    for (ChaosNode n : allNodes()) {
      n.stopLoad();
    }
    for (ChaosNode n : allNodes()) {
      n.close();
    }
    finished = true;
    Map<StoreFailurePolicy, GroupResult> results = new EnumMap<>(StoreFailurePolicy.class);
    RedisClient client = RedisClient.create(rig.redisUri());
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      for (Map.Entry<StoreFailurePolicy, List<ChaosNode>> e : groups.entrySet()) {
        results.put(e.getKey(), result(e.getKey(), e.getValue(), c.sync()));
      }
    } finally {
      client.shutdown();
    }
    return results;
  }

  private GroupResult result(StoreFailurePolicy policy, List<ChaosNode> nodes, RedisCommands<String, String> redis) {
    GroupResult r = new GroupResult(scenario, policy, nodes.size(), rateLimit);
    String prefix = prefix(policy);
    for (ChaosNode n : nodes) {
      if (n.ackedBeforeLoss >= 0) {
        r.ackedBeforeLoss += n.ackedBeforeLoss;
        r.dataLost = true;
      }
    }
    // hits: what the nodes admitted against what the store holds, key by key (after a data loss too:
    // the nodes send what the store had acknowledged again when they find it lost)
    for (int j = 0; j < ChaosNode.LEDGER_KEYS; j++) {
      long admitted = 0;
      for (ChaosNode n : nodes) {
        admitted += n.ledgerAdmitted[j];
      }
      long stored = storedSum(redis, ledgerKey(prefix, ChaosNode.ledgerKey(j)));
      r.ledgerAdmitted += admitted;
      r.ledgerStored += stored;
      r.lost += Math.max(0, admitted - stored);
      r.doubled += Math.max(0, stored - admitted);
    }
    for (ChaosNode n : nodes) {
      r.storeLosses += n.rate.storeDataLosses() + n.ledger.storeDataLosses();
      r.ledgerRefilled += n.ledger.refilledPermits();
      r.floodAdmitted += n.floodAdmitted;
      r.floodAsked += n.floodAsked;
      r.maxKeys = Math.max(r.maxKeys, maxKeys.getOrDefault(n, 0));
      r.overflowed += n.ledger.overflowed();
    }
    if (r.floodAsked > 0) {
      long stored = storedSum(redis, ledgerKey(prefix, "\u0000overflow"));
      String flood = ledgerKey(prefix, "flood-"); // ends with the hash tag's '}': a pattern of the keys it starts
      ScanIterator<String> keys = ScanIterator.scan(redis,
          ScanArgs.Builder.matches(flood.substring(0, flood.length() - 1) + "*").limit(1000));
      while (keys.hasNext()) {
        stored += storedSum(redis, keys.next());
      }
      r.floodStored = stored;
      r.lost += Math.max(0, r.floodAdmitted - stored);
      r.doubled += Math.max(0, stored - r.floodAdmitted);
    }
    // over-admission: admitted per window and rate key, over the nodes
    Map<Long, long[]> perWindow = new HashMap<>();
    for (ChaosNode n : nodes) {
      n.rateAdmitted.forEach((w, counts) -> {
        long[] sum = perWindow.computeIfAbsent(w, x -> new long[counts.length]);
        for (int i = 0; i < counts.length; i++) {
          sum[i] += counts[i];
        }
      });
    }
    long windowNanos = rateWindow.toNanos();
    if (windowNanos > 1_000_000_000L) {
      // (the first second of the window the fault began in, and each after it to the window's end)
      long first = Math.floorDiv(faultStart, windowNanos) * windowNanos / 1_000_000_000L;
      for (ChaosNode n : nodes) {
        StringBuilder line = new StringBuilder();
        for (long s = first; s < first + windowNanos / 1_000_000_000L; s++) {
          long[] c = n.firstKeyPerSecond.getOrDefault(s, new long[2]);
          line.append(line.length() == 0 ? "" : " ").append(c[0]).append(c[1] > 0 ? "+" + c[1] + "f" : "");
        }
        r.faultWindowByNode.add(line.toString());
      }
    }
    long recovered = recoveredAt.getOrDefault(policy, -1L);
    long faultEnd = recovered > 0 ? recovered : healedAt;
    for (Map.Entry<Long, long[]> e : perWindow.entrySet()) {
      long start = e.getKey() * windowNanos;
      long end = start + windowNanos;
      long worst = 0;
      for (long c : e.getValue()) {
        worst = Math.max(worst, c);
      }
      if (start >= baselineStart && end <= faultStart) {
        r.worstBaselineWindow = Math.max(r.worstBaselineWindow, worst);
      } else if (end > healedAt && start <= faultEnd) {
        // the window in which the fault was removed, and those until the nodes had recovered
        r.worstRecoveryWindow = Math.max(r.worstRecoveryWindow, worst);
      } else if (end > faultStart && start < healedAt) {
        r.worstFaultWindow = Math.max(r.worstFaultWindow, worst);
      }
    }
    // decisions
    Histogram baseline = new Histogram(2);
    Histogram fault = new Histogram(2);
    for (ChaosNode n : nodes) {
      baseline.add(n.latency[Phase.BASELINE.ordinal()]);
      fault.add(n.latency[Phase.FAULT.ordinal()]);
      fault.add(n.latency[Phase.RECOVERY.ordinal()]);
      r.faultDecisions += n.decisions[Phase.FAULT.ordinal()] + n.decisions[Phase.RECOVERY.ordinal()];
      r.ledgerDeniedFault += n.ledgerDenied[Phase.FAULT.ordinal()] + n.ledgerDenied[Phase.RECOVERY.ordinal()];
      r.longestLedgerDenialRunNanos = Math.max(r.longestLedgerDenialRunNanos, Math.max(
          n.longestLedgerDenialRunNanos[Phase.FAULT.ordinal()], n.longestLedgerDenialRunNanos[Phase.RECOVERY.ordinal()]));
      r.slowFaultDecisions += n.slowDecisions[Phase.FAULT.ordinal()] + n.slowDecisions[Phase.RECOVERY.ordinal()];
      r.maxFaultDecisionNanos = Math.max(r.maxFaultDecisionNanos,
          Math.max(n.maxDecisionNanos[Phase.FAULT.ordinal()], n.maxDecisionNanos[Phase.RECOVERY.ordinal()]));
      r.breakerOpens += n.breakerOpens.sum();
      if (n.breakerOpens.sum() > 0) {
        r.nodesOpened++;
      }
      r.slowCallRateExceeded += n.slowCallRateExceeded.sum();
      r.failureRateExceeded += n.failureRateExceeded.sum();
      r.fallbackDecisions += n.rate.fallbackDecisions() + n.ledger.fallbackDecisions();
      r.replays += n.store.replays();
      r.transitions.addAll(n.transitions);
      r.closedAtEnd &= n.breakersClosed();
    }
    r.p99BaselineNanos = baseline.getValueAtPercentile(99);
    r.p99FaultNanos = fault.getValueAtPercentile(99);
    r.recoveryNanos = recovered > 0 ? recovered - healedAt : -1;
    r.faultNanos = healedAt - faultStart;
    return r;
  }

  /** The store key of a ledger key, as text (the ledger's keys are well-formed text). */
  private static String ledgerKey(String prefix, String key) {
    return new String(StoreKeys.counterKey(prefix, "ledger", key), StandardCharsets.UTF_8);
  }

  /** The key's window counts (fields named by a window index; the others are the nodes' claims). */
  private static long storedSum(RedisCommands<String, String> redis, String key) {
    long sum = 0;
    for (Map.Entry<String, String> e : redis.hgetall(key).entrySet()) {
      if (e.getKey().chars().allMatch(Character::isDigit)) {
        sum += Long.parseLong(e.getValue());
      }
    }
    return sum;
  }

  static long now() {
    return Ticker.system().read();
  }

  @Override
  public void close() {
    if (!finished) {
      for (ChaosNode n : allNodes()) {
        try {
          n.stopLoad();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        n.close();
      }
    }
  }
}
