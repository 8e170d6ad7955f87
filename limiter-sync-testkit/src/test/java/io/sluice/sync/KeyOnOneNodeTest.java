package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.sync.AccuracyKit.Mode;
import io.sluice.sync.AccuracyKit.Report;
import io.sluice.sync.AccuracyKit.Setup;
import io.sluice.sync.AccuracyKit.Traffic;
import io.sluice.sync.AccuracyKit.TrafficBuilder;
import io.sluice.sync.sim.SimulatedNodes;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Keys whose requests all reach one node of three (a load balancer's session affinity, keys hashed to
 * instances), on a sliding window: the node is alone on each key, though the registry counts three.
 * Taken for one of three, such a key was asked at three times its node's rate (a whole sync interval's
 * back-off after a fruitless ask at each window's start, where the fading frees a permit every few
 * milliseconds), held a third of the fading, and counted on the other nodes' allowances the store
 * keeps in reserve (a store call per request at the limit). See ClaimSizing#keyNodes and
 * WindowClaims#decidingCapacity.
 */
class KeyOnOneNodeTest {

  /**
   * Twenty keys near a sliding window's limit (90 to 109 requests a second on 100), each on one node of
   * three. What is left between them and one node alone is the store's reserve for the other two nodes'
   * cold-key allowances (Allowances): two permits of the limit the store grants nobody until a sync
   * interval before the window's end, which the nodes that never see the key never use; without the
   * allowances the keys are decided as one node decides them.
   */
  @Test
  void keysNearTheirLimitOnOneNodeEachAreDecidedAsOneNodeAloneDecidesThem() {
    Limit limit = Limit.slidingWindowCounter("near").limit(100).window(Duration.ofSeconds(1)).build();
    TrafficBuilder t = new TrafficBuilder("near (sliding)", limit, 11);
    for (int k = 0; k < 20; k++) {
      t.poisson("k" + k, 90 + k, Duration.ZERO, Duration.ofSeconds(10), 1);
    }
    Traffic traffic = t.build();
    Setup onOneNode = Setup.eachKeyOnOneNode(3, Mode.APPROXIMATE);
    Report spread = AccuracyKit.run(traffic, onOneNode, MemoryStore::new);
    Report withoutAllowances = AccuracyKit.run(traffic, onOneNode.withoutColdKeyAllowance(), MemoryStore::new);
    Report alone = AccuracyKit.run(traffic, Setup.of(1, Mode.APPROXIMATE), MemoryStore::new);
    assertThat(alone.netFalseDenialPercent()).as("one node alone: %s", alone).isLessThanOrEqualTo(0.01);
    assertThat(withoutAllowances.netFalseDenialPercent()).as("without allowances: %s", withoutAllowances)
        .isLessThanOrEqualTo(Math.max(0.01, alone.netFalseDenialPercent()));
    assertThat(withoutAllowances.falseDenialPercent()).as("without allowances: %s", withoutAllowances)
        .isLessThanOrEqualTo(Math.max(0.05, 2 * alone.falseDenialPercent()));
    // (with the allowances, 2026-12-06: 99.10% of the exact algorithm's admissions, 0.84% of requests not
    // made up in their windows, 2.15% denied that it admitted; on the code before keyNodes, 96.75%, 3.04%
    // and 7.10%)
    assertThat(spread.netFalseDenialPercent()).as("not made up, each key on one of three nodes: %s", spread)
        .isLessThanOrEqualTo(1.0);
    assertThat(spread.falseDenialPercent()).as("false denials, each key on one of three nodes: %s", spread)
        .isLessThanOrEqualTo(2.5);
    assertThat(spread.worstOverPermits()).as("over-admission: %s", spread).isLessThanOrEqualTo(1);
  }

  /** One key at twice a sliding window's limit, on one node of three: no store call per request. */
  @Test
  void aHotKeyOnOneNodeDoesNotAskTheStoreForEachRequestAtItsLimit() {
    Limit limit = Limit.slidingWindowCounter("hot").limit(500).window(Duration.ofSeconds(1)).build();
    Traffic traffic = new TrafficBuilder("hot (sliding)", limit, 5)
        .poisson("hot", 1_000, Duration.ZERO, Duration.ofSeconds(6), 1).build();
    Report spread = AccuracyKit.run(traffic, Setup.eachKeyOnOneNode(3, Mode.APPROXIMATE), MemoryStore::new);
    Report alone = AccuracyKit.run(traffic, Setup.of(1, Mode.APPROXIMATE), MemoryStore::new);
    double spreadCalls = 1000.0 * spread.storeCalls() / spread.requests();
    double aloneCalls = 1000.0 * alone.storeCalls() / alone.requests();
    // (on the code before: 410 store calls per 1,000 decisions and 9.6% of requests swapped; one node
    // alone 17 and none)
    assertThat(spreadCalls).as("store calls per 1,000 decisions on one node of three: %s (alone: %s)", spread, alone)
        .isLessThan(Math.max(100, 4 * aloneCalls));
    assertThat(spread.falseDenialPercent()).as("false denials: %s", spread).isLessThan(1.5);
    assertThat(spread.netFalseDenialPercent()).as("not made up: %s", spread).isLessThanOrEqualTo(0.1);
  }

  /**
   * A key that one node of three alone has decided for seconds, at twice a sliding window's limit, whose
   * requests then reach a second node too (a fifth of them): that node is not shut out while the first
   * holds all of what fades. With the allowances its first request in a window is admitted without a
   * store call and counted; without them its takes find what the first node's flushes near the limit
   * leave to be granted anew, and once the store counts any of its permits the key is shared again at
   * the first node's next answer. (Measured, seeds 3 and 5: the second node's requests admitted 53%
   * with the allowances and 60% without, the first node's 46% and 44%.)
   */
  @Test
  void aSecondNodeThatJoinsAKeyGetsItsShareOfIt() {
    for (boolean allowances : new boolean[] {true, false}) {
      long[][] counts = joined(allowances);
      long[] admittedBy = counts[0];
      long[] askedOf = counts[1];
      double share0 = (double) admittedBy[0] / askedOf[0];
      double share1 = (double) admittedBy[1] / askedOf[1];
      assertThat(admittedBy[0] + admittedBy[1]).as("four windows at the limit, allowances %s", allowances)
          .isBetween(395L, 400L);
      assertThat(share1).as("the second node's requests admitted, against the first's %.3f, allowances %s", share0,
          allowances).isGreaterThan(share0 / 2);
    }
  }

  /** {admitted by node 0 and 1, asked of node 0 and 1} over the four seconds after node 1 joined. */
  private static long[][] joined(boolean allowances) {
    Limit limit = Limit.slidingWindowCounter("joined").limit(100).window(Duration.ofSeconds(1)).build();
    MemoryStore store = new MemoryStore();
    long start = AccuracyKit.START_NANOS;
    SplittableRandom random = new SplittableRandom(3);
    long[] admittedBy = new long[2];
    long[] askedOf = new long[2];
    try (SimulatedNodes sim = new SimulatedNodes(3, Duration.ofMillis(100), Duration.ofMillis(1), start,
        new SplittableRandom(5), i -> store,
        (i, s) -> SyncedLimiter.builder(limit, s).nodeId("n" + i).coldKeyAllowance(allowances))) {
      for (long at = start; at < start + Duration.ofSeconds(8).toNanos();
          at += (long) (-Math.log(1 - random.nextDouble()) / 200 * 1e9)) {
        sim.advanceTo(at);
        boolean joined = at >= start + Duration.ofSeconds(4).toNanos();
        int node = joined && random.nextInt(5) == 0 ? 1 : 0;
        boolean allowed = sim.decide(node, "k", 1).allowed();
        if (joined) {
          askedOf[node]++;
          admittedBy[node] += allowed ? 1 : 0;
        }
      }
    }
    return new long[][] {admittedBy, askedOf};
  }

  /**
   * The node alone on a key holds all of what fades until its next answer; when it goes quiet, a node
   * that joins the key waits at most for that answer, where its idle claim (and its part of the fading)
   * is given up. Node 0 alone at 1.5 times a sliding window's limit for two windows, quiet from the
   * third; node 1 asked every 5 ms from then on: admitted 15 ms in (2026-12-06), where the exact
   * algorithm admits about 10 ms in, once a permit of the window before has faded.
   */
  @Test
  void aNodeThatJoinsAKeyItsOnlyNodeLeftIsAdmittedWithinTwoSyncIntervals() {
    Limit limit = Limit.slidingWindowCounter("left").limit(100).window(Duration.ofSeconds(1)).build();
    MemoryStore store = new MemoryStore();
    long start = AccuracyKit.START_NANOS;
    SplittableRandom random = new SplittableRandom(7);
    long joined = start + Duration.ofSeconds(2).toNanos();
    long firstAdmitted = -1;
    try (SimulatedNodes sim = new SimulatedNodes(3, Duration.ofMillis(100), Duration.ofMillis(1), start,
        new SplittableRandom(5), i -> store, (i, s) -> SyncedLimiter.builder(limit, s).nodeId("n" + i))) {
      for (long at = start; at < joined; at += (long) (-Math.log(1 - random.nextDouble()) / 150 * 1e9)) {
        sim.advanceTo(at);
        sim.decide(0, "k", 1);
      }
      for (long at = joined; at < joined + Duration.ofMillis(500).toNanos() && firstAdmitted < 0;
          at += Duration.ofMillis(5).toNanos()) {
        sim.advanceTo(at);
        if (sim.decide(1, "k", 1).allowed()) {
          firstAdmitted = at - joined;
        }
      }
    }
    assertThat(firstAdmitted).as("ns until node 1's first admission").isBetween(0L, Duration.ofMillis(200).toNanos());
  }

  /**
   * A fixed window's key on one node of three, at its limit before the window's last sync interval:
   * the node counts on the limit less the two other nodes' allowances the store keeps in reserve until
   * then, so its denial there is over what it counts on, not over the limit. It must say to retry when
   * the reserve comes back, not at the window's end, and admit the last two permits then. (Its denial
   * said the window's end: a client that honours Retry-After waited past them.)
   */
  @Test
  void aDenialOverTheOtherNodesReserveSaysToRetryWhenTheReserveComesBack() {
    Limit limit = Limit.fixedWindow("reserve").limit(64).window(Duration.ofSeconds(1)).build();
    MemoryStore store = new MemoryStore();
    long start = AccuracyKit.START_NANOS;
    long ms = Duration.ofMillis(1).toNanos();
    try (SimulatedNodes sim = new SimulatedNodes(3, Duration.ofMillis(100), Duration.ZERO, start,
        new SplittableRandom(5), i -> store, (i, s) -> SyncedLimiter.builder(limit, s).nodeId("r" + i))) {
      for (long at = start + 10 * ms; at < start + 1_000 * ms; at += 50 * ms) { // window 0: 20 permits, node 0 only
        sim.advanceTo(at);
        sim.decide(0, "k", 1);
      }
      long window = start + 1_000 * ms;
      long admitted = 0;
      io.sluice.node.Decision denied = null;
      long deniedAt = 0;
      for (long at = window + 10 * ms; at < window + 850 * ms; at += 5 * ms) {
        sim.advanceTo(at);
        io.sluice.node.Decision d = sim.decide(0, "k", 1);
        if (d.allowed()) {
          admitted++;
        } else if (denied == null) {
          denied = d;
          deniedAt = at;
        }
      }
      assertThat(admitted).as("admitted before the reserve comes back").isEqualTo(62);
      assertThat(denied).isNotNull();
      // the reserve comes back a sync interval before the window's end, 900 ms into it
      assertThat(deniedAt + denied.retryAfterNanos()).as("retry at").isLessThanOrEqualTo(window + 900 * ms);
      sim.advanceTo(window + 950 * ms);
      assertThat(sim.decide(0, "k", 1).allowed()).isTrue();
      assertThat(sim.decide(0, "k", 1).allowed()).isTrue();
      assertThat(sim.decide(0, "k", 1).allowed()).as("the limit").isFalse();
    }
  }
}
