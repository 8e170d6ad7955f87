package io.sluice.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import eu.rekawek.toxiproxy.Proxy;
import eu.rekawek.toxiproxy.model.ToxicDirection;
import io.sluice.sync.StoreFailurePolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Real network faults between limiter nodes and a real Redis (Toxiproxy), and what the limiter still
 * promises under each (DESIGN: "Nothing lost", "Store failure"). Every scenario runs the three fallback
 * policies side by side (a group of {@value #NODES} nodes each) and writes a row per policy into the
 * chaos report (see {@link ChaosReport}).
 *
 * <p>What every scenario asserts, for every policy:
 * <ul>
 *   <li>no ledger hit lost or counted twice once the fault heals and the nodes close (the store's count
 *       of each key equals what the nodes admitted; after Redis lost its data, what they admitted less
 *       what the store had acknowledged before losing it);</li>
 *   <li>every breaker is closed again and the backlog flushed within {@link ChaosRun#RECOVERY_LIMIT};</li>
 *   <li>no decision waited on Redis: at most a handful of decisions (a scheduling stall of the whole
 *       machine touches one per load thread) took {@link ChaosNode#SLOW_DECISION_NANOS} or more, where
 *       a decision that waited on a faulty call would take at least that on every flush;</li>
 *   <li>over-admission within what the policy promises: FAIL_CLOSED passes the limit only by what a cut
 *       node had admitted and could not flush (its allowance, at most remaining / (2N - 1)), and not at
 *       all when every node is cut at once; LOCAL_SHARE passes it by at most the cut nodes' shares (while
 *       recovering, by the shares of the nodes still on theirs), and by no more than the error budget (0.5% of
 *       the limit, or two permits per node) when every node is cut together and Redis keeps its counts;
 *       FAIL_OPEN promises nothing and is only reported.</li>
 * </ul>
 * Latency figures (p99 during the fault against the baseline) are reported, not asserted.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ChaosIT {
  static final int NODES = 3;
  static final long RATE_LIMIT = 600;
  /** The approximate mode's error and window-edge noise allowed above a policy's bound, of the limit. */
  static final double TOLERANCE = 0.10;

  static ChaosRig rig;
  static ChaosReport report;
  static final Map<StoreFailurePolicy, List<ChaosRig.Link>> links = new EnumMap<>(StoreFailurePolicy.class);

  @BeforeAll
  static void startRig() throws IOException {
    rig = ChaosRig.start();
    report = new ChaosReport(rig.backend());
    for (StoreFailurePolicy p : StoreFailurePolicy.values()) {
      List<ChaosRig.Link> group = new ArrayList<>();
      for (int i = 0; i < NODES; i++) {
        group.add(rig.link(p.name().toLowerCase(java.util.Locale.ROOT) + "-n" + i));
      }
      links.put(p, group);
    }
  }

  @AfterAll
  static void writeReport() throws IOException {
    try {
      if (report != null) {
        report.write();
      }
    } finally {
      if (rig != null) {
        rig.close();
      }
    }
  }

  @BeforeEach
  void noFaults() throws IOException {
    rig.resetFaults();
  }

  // ------------------------------------------------------------------ scenarios

  @Test
  @Order(1)
  void partitionOfOneNode() throws Exception {
    Map<StoreFailurePolicy, GroupResult> results;
    try (ChaosRun run = run("partition-one")) {
      run.baseline();
      run.faultStarts();
      List<Proxy> cut = proxies(1);
      for (Proxy p : cut) {
        p.disable();
      }
      run.hold(Duration.ofSeconds(10));
      for (Proxy p : cut) {
        p.enable();
      }
      run.healed();
      results = run.finish();
    }
    check(1, "one node of 3 cut off (proxy down) for 10 s", results, 1, 1, true, false);
  }

  @Test
  @Order(2)
  void partitionOfAllNodes() throws Exception {
    Map<StoreFailurePolicy, GroupResult> results;
    try (ChaosRun run = run("partition-all")) {
      run.baseline();
      run.faultStarts();
      for (Proxy p : proxies(NODES)) {
        p.disable();
      }
      run.hold(Duration.ofSeconds(6));
      rig.resetFaults();
      run.healed();
      results = run.finish();
    }
    check(2, "every node cut off for 6 s", results, NODES, NODES, true, false);
  }

  @Test
  @Order(3)
  void slowRedis() throws Exception {
    Map<StoreFailurePolicy, GroupResult> results;
    try (ChaosRun run = run("latency")) {
      run.baseline();
      run.faultStarts();
      for (Proxy p : proxies(NODES)) {
        p.toxics().latency("slow", ToxicDirection.DOWNSTREAM, 450).setJitter(50);
      }
      run.hold(Duration.ofSeconds(6));
      rig.resetFaults();
      run.healed();
      results = run.finish();
    }
    check(3, "latency 400–500 ms (450 ± 50) on every reply, 6 s", results, NODES, NODES - 1, true, false);
    // the breakers open (check above). Whether by the slow-call rate (calls over half the flush
    // timeout, under it) or by the failure rate is up to the machine: on 2 cores the 400-500 ms replies
    // queue behind one another on a node's connection and mostly run out of time, and runs of the
    // same build counted 0 to 3 openings by the slow-call rate (the report shows both); the slow-call
    // path is SlowStoreBreakerTest's
    assertThat(results.values().stream().mapToLong(r -> r.slowCallRateExceeded + r.failureRateExceeded).sum())
        .as("breakers opened by the slow-call or the failure rate").isPositive();
  }

  @Test
  @Order(4)
  void timeoutsAndResetsMidFlush() throws Exception {
    Map<StoreFailurePolicy, GroupResult> results;
    try (ChaosRun run = run("timeout-reset")) {
      run.baseline();
      run.faultStarts();
      // requests reach Redis and are applied, replies are dropped; the connection closes after 1 s
      for (Proxy p : proxies(NODES)) {
        p.toxics().timeout("blackhole", ToxicDirection.DOWNSTREAM, 1_000);
      }
      run.hold(Duration.ofSeconds(3));
      rig.resetFaults();
      // then every connection is reset 300 ms after it opens, whatever is in flight
      for (Proxy p : proxies(NODES)) {
        p.toxics().resetPeer("reset", ToxicDirection.DOWNSTREAM, 300);
      }
      run.hold(Duration.ofSeconds(3));
      rig.resetFaults();
      run.healed();
      results = run.finish();
    }
    check(4, "replies dropped (timeout toxic, closed after 1 s) 3 s, then connections reset after 300 ms (reset_peer) 3 s",
        results, NODES, NODES - 1, true, false);
    // flushes were applied while their answers were lost, and their retries were refused as replays
    assertThat(results.values().stream().mapToLong(r -> r.replays).sum())
        .as("flushes applied whose answer was lost, retried and refused as replays").isPositive();
  }

  @Test
  @Order(5)
  void narrowAndSlicedLink() throws Exception {
    Map<StoreFailurePolicy, GroupResult> results;
    try (ChaosRun run = run("bandwidth-slicer")) {
      run.baseline();
      run.faultStarts();
      for (Proxy p : proxies(NODES)) {
        p.toxics().bandwidth("narrow", ToxicDirection.UPSTREAM, 1); // 1 KB/s towards Redis
      }
      run.hold(Duration.ofSeconds(3));
      rig.resetFaults();
      for (Proxy p : proxies(NODES)) {
        // every write cut into pieces of 4–12 bytes, 1 ms apart: partial commands and replies
        p.toxics().slicer("sliced-up", ToxicDirection.UPSTREAM, 8, 1_000).setSizeVariation(4);
        p.toxics().slicer("sliced-down", ToxicDirection.DOWNSTREAM, 8, 1_000).setSizeVariation(4);
      }
      run.hold(Duration.ofSeconds(3));
      rig.resetFaults();
      run.healed();
      results = run.finish();
    }
    check(5, "bandwidth 1 KB/s towards Redis 3 s, then slicer (8 ± 4 bytes every 1 ms, both ways) 3 s",
        results, NODES, NODES - 1, false, false);
  }

  @Test
  @Order(6)
  void flappingLink() throws Exception {
    Map<StoreFailurePolicy, GroupResult> results;
    try (ChaosRun run = run("flapping")) {
      run.baseline();
      run.faultStarts();
      List<Proxy> all = proxies(NODES);
      for (int cycle = 0; cycle < 4; cycle++) {
        for (Proxy p : all) {
          p.disable();
        }
        run.hold(Duration.ofSeconds(1));
        for (Proxy p : all) {
          p.enable();
        }
        run.hold(Duration.ofSeconds(1));
      }
      run.healed();
      results = run.finish();
    }
    check(6, "every link down 1 s, up 1 s, four times", results, NODES, NODES - 1, true, false);
  }

  /**
   * Redis stops and starts again empty (no persistence). Each node finds the loss in the answer of its
   * first flush after the restart (the store no longer knows its sequence) and sends again what it had
   * admitted in the windows that still weigh, so "nothing lost" holds as in every other scenario: the
   * ledger's one-hour window is whole again, every hit counted once. The nodes' own figures say how much
   * the store had acknowledged when it died (while Redis is down nothing can be, so with the load paused
   * for a moment each node's admitted minus its pending permits is that): reported beside what they sent
   * again.
   */
  @Test
  @Order(7)
  void redisRestartLosingItsData() throws Exception {
    Map<StoreFailurePolicy, GroupResult> results;
    try (ChaosRun run = run("redis-restart")) {
      run.baseline();
      restartRedisEmpty(run);
      run.healed();
      results = run.finish();
    }
    check(7, "Redis stopped 3 s and started again empty (its data and scripts lost)", results, NODES, NODES, true, true);
  }

  /**
   * Scenario 7 with windows of 10 s (limit 6,000 per window, demand twice that): Redis dies 1 s into a
   * window and comes back empty 3 s later, with most of the window still to run. Without the refill the
   * nodes would start the window over (+48% and +20% were measured before it); with it, the window
   * keeps its limit.
   */
  @Test
  @Order(10)
  void redisRestartLosingItsDataWithLongWindows() throws Exception {
    Duration window = Duration.ofSeconds(10);
    Map<StoreFailurePolicy, GroupResult> results;
    try (ChaosRun run = new ChaosRun(rig, links, "redis-restart-10s", RATE_LIMIT * 10, window, 1_000_000, 0)) {
      run.baseline();
      run.holdUntilIntoWindow(Duration.ofSeconds(1));
      restartRedisEmpty(run);
      run.healed();
      run.holdUntilIntoWindow(Duration.ofMillis(300)); // the window of the restart is over
      results = run.finish();
    }
    check(10, "Redis stopped 3 s and started again empty, 10 s windows (limit " + RATE_LIMIT * 10 + ")", results,
        NODES, NODES, true, true);
  }

  /**
   * Every node cut off, then the links come back one node at a time, 1 s apart, in the middle of a
   * window of 10 s (limit 6,000, demand twice that): the nodes back first must not spend the budget that
   * the nodes still on their LOCAL_SHARE shares admitted and could not flush yet.
   */
  @Test
  @Order(11)
  void staggeredRecovery() throws Exception {
    Duration window = Duration.ofSeconds(10);
    Map<StoreFailurePolicy, GroupResult> results;
    try (ChaosRun run = new ChaosRun(rig, links, "staggered", RATE_LIMIT * 10, window, 1_000_000, 0)) {
      run.baseline();
      run.holdUntilIntoWindow(Duration.ofSeconds(1));
      run.faultStarts();
      for (Proxy p : proxies(NODES)) {
        p.disable();
      }
      run.hold(Duration.ofSeconds(2));
      for (int i = 0; i < NODES; i++) {
        for (List<ChaosRig.Link> group : links.values()) {
          group.get(i).proxy().enable();
        }
        run.hold(Duration.ofSeconds(1));
      }
      rig.resetFaults();
      run.healed();
      run.holdUntilIntoWindow(Duration.ofMillis(300));
      results = run.finish();
    }
    check(11, "every node cut off 2 s, back one by one 1 s apart, 10 s windows (limit " + RATE_LIMIT * 10 + ")",
        results, NODES, NODES, true, false);
  }

  /** Stops Redis for 3 s (measuring what it had acknowledged) and starts it again empty. */
  private static void restartRedisEmpty(ChaosRun run) throws Exception {
    run.faultStarts();
    rig.stopRedis();
    run.hold(Duration.ofMillis(1_500)); // flushes in flight fail; breakers open
    List<ChaosNode> nodes = run.allNodes();
    nodes.forEach(ChaosNode::pause);
    for (ChaosNode n : nodes) {
      n.ackedBeforeLoss = n.ledgerAdmittedTotal() - n.ledger.pending();
    }
    nodes.forEach(ChaosNode::resume);
    run.hold(Duration.ofMillis(1_500));
    rig.startRedis();
  }

  @Test
  @Order(8)
  void keyFloodDuringPartition() throws Exception {
    int maxKeys = 2_000;
    Map<StoreFailurePolicy, GroupResult> results;
    try (ChaosRun run = new ChaosRun(rig, links, "key-flood", RATE_LIMIT, maxKeys, 3_000)) {
      run.baseline();
      run.faultStarts();
      for (Proxy p : proxies(NODES)) {
        p.disable();
      }
      run.allNodes().forEach(n -> n.flooding = true);
      run.hold(Duration.ofSeconds(6));
      run.allNodes().forEach(n -> n.flooding = false);
      rig.resetFaults();
      run.healed();
      results = run.finish();
    }
    check(8, "every node cut off 6 s while each asks for 3,000 new keys a second (key table of " + maxKeys + ")",
        results, NODES, NODES, true, false);
    for (GroupResult r : results.values()) {
      assertThat(r.maxKeys).as(r.policy + ": ledger key table, at most its bound and the shared overflow key")
          .isLessThanOrEqualTo(maxKeys + 1);
      assertThat(r.overflowed).as(r.policy + ": new keys charged to the overflow budget").isPositive();
      assertThat(r.floodStored).as(r.policy + ": flood hits in the store (their own keys and the overflow key)")
          .isEqualTo(r.floodAdmitted);
    }
  }

  /**
   * Redis hangs (SIGSTOP, a paused container) with its connections open: every call waits its full
   * timeout instead of failing fast. The nodes must go on deciding by their policies within a call
   * timeout (the claim timeout for a decision that asks), not deny while the breaker counts timeouts.
   */
  @Test
  @Order(9)
  void redisFrozen() throws Exception {
    Map<StoreFailurePolicy, GroupResult> results;
    try (ChaosRun run = run("redis-freeze")) {
      run.baseline();
      run.faultStarts();
      rig.freezeRedis();
      try {
        run.hold(Duration.ofSeconds(5));
      } finally {
        rig.thawRedis();
      }
      run.healed();
      results = run.finish();
    }
    check(9, "Redis frozen (SIGSTOP) 5 s, connections open", results, NODES, NODES, true, false);
  }

  // ------------------------------------------------------------------ helpers

  private static ChaosRun run(String scenario) {
    return new ChaosRun(rig, links, scenario, RATE_LIMIT, 1_000_000, 0);
  }

  /** The proxies of the first {@code k} nodes of every group. */
  private static List<Proxy> proxies(int k) {
    List<Proxy> out = new ArrayList<>();
    for (List<ChaosRig.Link> group : links.values()) {
      for (int i = 0; i < k; i++) {
        out.add(group.get(i).proxy());
      }
    }
    return out;
  }

  /**
   * Records the rows, then asserts what every scenario must keep (see the class doc). {@code cut}: how
   * many nodes of each group lost Redis; {@code onShare}: how many may be on their LOCAL_SHARE share at
   * once while the others use the store ({@code cut} for a clean cut; all but one where breakers open
   * and close on their own while a link is slow or flapping); {@code opens}: whether their breakers
   * must have opened;
   * {@code dataLost}: Redis lost its counts, which every node must have found (and sent its own again:
   * the window keeps its limit, the ledger its count).
   */
  private static void check(int number, String fault, Map<StoreFailurePolicy, GroupResult> results, int cut,
      int onShare, boolean opens, boolean dataLost) {
    results.values().forEach(r -> report.add(number, fault, r));
    results.values().forEach(r -> System.out.println("chaos " + number + " " + r));
    for (GroupResult r : results.values()) {
      String who = "scenario " + number + ", " + r.policy + ": ";
      assertThat(r.ledgerAdmitted).as(who + "ledger hits admitted").isPositive();
      assertThat(r.lost).as(who + "hits lost").isZero();
      assertThat(r.doubled).as(who + "hits counted twice").isZero();
      assertThat(r.ledgerStored).as(who + "ledger count in Redis").isEqualTo(r.ledgerAdmitted);
      if (r.policy != StoreFailurePolicy.FAIL_CLOSED) {
        // the ledger's limit is never reached: a denial is the store's fault, which these policies
        // must not pass on (a decision that asks waits at most the claim timeout, then the policy decides)
        assertThat(r.longestLedgerDenialRunNanos).as(who + "longest run of ledger requests denied, ns")
            .isLessThan(Duration.ofSeconds(1).toNanos());
      }
      if (dataLost) {
        assertThat(r.storeLosses).as(who + "limiters that found the store had lost its data")
            .isGreaterThanOrEqualTo(r.nodes);
      }
      assertThat(r.recoveryNanos).as(who + "recovered (breakers closed, backlog flushed) within "
          + ChaosRun.RECOVERY_LIMIT).isNotNegative();
      assertThat(r.closedAtEnd).as(who + "breakers closed at the end").isTrue();
      assertThat(r.slowFaultDecisions).as(who + "decisions of 300 ms or more (a decision waiting on Redis)")
          .isLessThanOrEqualTo(3L * r.nodes + r.faultDecisions / 1_000);
      if (opens) {
        assertThat(r.nodesOpened).as(who + "nodes whose breaker opened").isGreaterThanOrEqualTo(cut);
        assertThat(r.fallbackDecisions).as(who + "decisions by the fallback policy").isPositive();
      }
      long limit = r.rateLimit;
      long share = (limit + r.nodes - 1) / r.nodes;
      long slack = (long) Math.ceil(limit * TOLERANCE);
      switch (r.policy) {
        case FAIL_CLOSED:
          // a node cut off while the others go on holds permits it admitted and could not flush (at most
          // its allowance, remaining / (2N - 1)): the others, not seeing them, spend that budget again
          long unseen = (limit + 2L * r.nodes - 2) / (2L * r.nodes - 1);
          long closedBound = limit + (onShare < r.nodes ? onShare * unseen : 0);
          assertThat(r.worstFaultWindow).as(who + "most admitted in a window during the fault, limit " + limit)
              .isLessThanOrEqualTo(closedBound + slack);
          assertThat(r.worstRecoveryWindow).as(who + "most admitted in a window while recovering, limit " + limit)
              .isLessThanOrEqualTo(limit + Math.min(cut, r.nodes - 1) * unseen + slack);
          break;
        case LOCAL_SHARE:
          if (onShare == r.nodes && !dataLost) {
            // every node cut off together, the store's counts kept: the nodes' parts add up to what was
            // free, and a node back before the others keeps to its part (and claims nothing beyond it)
            // until they can be back too, so the limit holds within the error budget, or a couple of
            // permits per node on a small limit (the nodes' last answers are up to a sync interval apart:
            // 601 of 600 once in scenario 9). Scenario 11 read 6,028-6,127 of 6,000 before a node back
            // first stopped holding claims beyond its part (2026-12-06).
            long budget = limit + Math.max(limit / 200, 2L * r.nodes);
            assertThat(r.worstFaultWindow).as(who + "most admitted in a window during the fault, limit " + limit
                + ", every node cut off").isLessThanOrEqualTo(budget);
            assertThat(r.worstRecoveryWindow).as(who + "most admitted in a window while recovering, limit " + limit
                + ", every node cut off").isLessThanOrEqualTo(budget);
            break;
          }
          long bound = onShare < r.nodes ? limit + onShare * share : limit;
          assertThat(r.worstFaultWindow).as(who + "most admitted in a window during the fault, limit " + limit + " ("
              + onShare + " node(s) on a share of " + share + ")").isLessThanOrEqualTo(bound + slack);
          // while recovering, nodes whose breaker closed again do not see what the nodes still on their
          // share admitted: at worst all but one node are still on theirs
          long recovering = limit + Math.min(cut, r.nodes - 1) * share;
          assertThat(r.worstRecoveryWindow).as(who + "most admitted in a window while recovering, limit " + limit)
              .isLessThanOrEqualTo(recovering + slack);
          break;
        default:
          break; // FAIL_OPEN admits everything while the breaker is open: reported only
      }
    }
  }
}
