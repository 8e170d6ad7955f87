package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Algorithm;
import io.sluice.sync.AccuracyKit.Mode;
import io.sluice.sync.AccuracyKit.Profile;
import io.sluice.sync.AccuracyKit.Report;
import io.sluice.sync.AccuracyKit.Setup;
import io.sluice.sync.AccuracyKit.Traffic;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The accuracy net, on a simulated clock with the in-memory store that keeps claims as the scripts
 * do: every profile of {@link Profile}, fixed and sliding windows, 1, 3 and 8 nodes, every mode,
 * against the exact algorithm deciding the same requests at the same moments. The bounds are
 * DESIGN.md's: over-admission at most 0.5% of the limit or 1 permit in every key-window (none in
 * reservation and exact modes), false denials at most 0.1% of the requests, with swaps and without
 * (those not made up in their key-window), and none on a key below half its limit; where a bound is
 * not reached yet, what is ({@link #falseDenialGap}, {@link #notMadeUpGap}). The same kit runs against
 * real Redis and Hazelcast in {@code AccuracyKitIT}.
 */
class AccuracyKitTest {

  /** The seed of a case: its profile, algorithm, node count and mode in the order the kit lists them. */
  private interface SeedOf {
    long next(Algorithm algorithm, Mode mode);
  }

  /**
   * Every profile and algorithm at {@code nodeCounts} and {@code modes}, each with its seed;
   * -Dsluice.kit.case="SPREAD FIXED_WINDOW 3 APPROXIMATE" keeps the cases whose description (with
   * {@code suffix}) contains it.
   */
  private static Stream<Arguments> casesOf(int[] nodeCounts, Mode[] modes, String suffix, SeedOf seedOf) {
    List<Arguments> cases = new ArrayList<>();
    String only = System.getProperty("sluice.kit.case", "");
    for (Profile p : Profile.values()) {
      for (Algorithm a : new Algorithm[] {Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER,
          Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET}) {
        for (int nodes : nodeCounts) {
          for (Mode m : modes) {
            long caseSeed = AccuracyKit.seed(seedOf.next(a, m));
            if ((p + " " + a + " " + nodes + " " + m + suffix).contains(only)) {
              cases.add(Arguments.of(p, a, nodes, m, caseSeed));
            }
          }
        }
      }
    }
    return cases.stream();
  }

  static Stream<Arguments> cases() {
    long[] seeds = {
        1, // window limits
        1_001, // token buckets (a range of its own: the window cases keep the seeds of their published figures)
        2_001, // token buckets in reservation mode (and one more: the bucket cases keep theirs)
        3_001, // leaky bucket meters: ranges of their own too
        4_001}; // and in reservation mode
    // (a bucket's reservations are its token claims, as in the approximate mode, at the batch size)
    return casesOf(new int[] {1, 3, 8}, Mode.values(), "", (a, m) -> a == Algorithm.LEAKY_BUCKET
        ? (m == Mode.RESERVATION ? seeds[4]++ : seeds[3]++)
        : a != Algorithm.TOKEN_BUCKET ? seeds[0]++
        : m == Mode.RESERVATION ? seeds[2]++ : seeds[1]++);
  }

  @ParameterizedTest(name = "{0} {1} {2} nodes {3} seed {4}")
  @MethodSource("cases")
  void everyKeyIsDecidedWithinTheBounds(Profile profile, Algorithm algorithm, int nodes, Mode mode, long seed) {
    run(profile, algorithm, mode, seed, Setup.of(nodes, mode));
  }

  /**
   * The approximate mode's cases with every decision made through {@code tryAcquire}, as most callers make
   * them: a decision the key's credit pays takes it without the view's monitor, and the flusher leaves a
   * credit to the decisions while it keeps the view for a later sync ({@code KeyView#harvestCredit}).
   * Every other case decides through {@code acquire}, which judges every decision under the monitor: until
   * 2026-12-07 the kit never took a credit.
   */
  static Stream<Arguments> tryAcquireCases() {
    return cases().filter(a -> a.get()[3] == Mode.APPROXIMATE);
  }

  @ParameterizedTest(name = "{0} {1} {2} nodes {3} seed {4}, tryAcquire")
  @MethodSource("tryAcquireCases")
  void everyKeyDecidedThroughTryAcquireIsWithinTheBounds(Profile profile, Algorithm algorithm, int nodes, Mode mode,
      long seed) {
    run(profile, algorithm, mode, seed, Setup.of(nodes, mode).viaTryAcquire());
  }

  /**
   * The same profiles with every request of a key sent to one node (a load balancer's session affinity,
   * keys hashed to instances), the batched modes on 3 and 8 nodes: a key then lives on one node of
   * several, whose registry counts them all. Before a node told a key it alone admits on from one the
   * others share (ClaimSizing#keyNodes), sliding windows lost 0.49-0.58% of requests not made up in their
   * windows here, and swapped 9.9-11.6% on the shapes profile, where one node has none.
   */
  static Stream<Arguments> eachKeyOnOneNodeCases() {
    long[] seed = {5_001}; // (a range of its own)
    return casesOf(new int[] {3, 8}, new Mode[] {Mode.APPROXIMATE, Mode.RESERVATION}, " each key on one node",
        (a, m) -> seed[0]++);
  }

  @ParameterizedTest(name = "{0} {1} {2} nodes {3} seed {4}, each key on one node")
  @MethodSource("eachKeyOnOneNodeCases")
  void everyKeyOnOneNodeIsDecidedWithinTheBounds(Profile profile, Algorithm algorithm, int nodes, Mode mode, long seed) {
    run(profile, algorithm, mode, seed, Setup.eachKeyOnOneNode(nodes, mode));
  }

  /**
   * Nodes whose clocks are apart, each set to the store's clock ({@code alignClockToStore}, the default
   * on the wall clock): neighbouring nodes 1 ms apart (8 nodes span 7 ms) decide every request as nodes
   * in step do, the store being the simulation's clock and its round trip 0 (a real one leaves up to
   * half a round trip). Without it, with the clocks 1 ms apart, 148 of the kit's 364 runs went past a
   * bound, exact mode included ({@code -Dsluice.kit.alignClocks=false}; the README's "Nodes' clocks").
   */
  static Stream<Arguments> clocksApartCases() {
    return cases().filter(a -> (int) a.get()[2] > 1 && a.get()[3] != Mode.RESERVATION
        && EnumSet.of(Profile.SMALL_LIMITS, Profile.ZIPF_1K, Profile.SHAPES).contains((Profile) a.get()[0]));
  }

  @ParameterizedTest(name = "{0} {1} {2} nodes {3} seed {4}, clocks 1 ms apart")
  @MethodSource("clocksApartCases")
  void nodesWhoseClocksAreApartDecideAsNodesInStepOnceAlignedToTheStore(Profile profile, Algorithm algorithm,
      int nodes, Mode mode, long seed) {
    Traffic traffic = profile.traffic(algorithm, seed);
    Setup inStep = Setup.of(nodes, mode);
    Setup apart = inStep.withClockStep(Duration.ofMillis(1));
    Report expected = AccuracyKit.run(traffic, inStep, MemoryStore::new);
    Report r = AccuracyKit.replayable(traffic, apart, () -> AccuracyKit.run(traffic, apart, MemoryStore::new));
    assertBounds(r, mode, profile, algorithm, apart);
    assertThat(List.of(r.nodesAdmitted(), r.falseDenials(), r.netFalseDenials(), r.extraAdmissions()))
        .as("admitted, false denials, not made up, extra admissions: %s against %s", r, expected)
        .isEqualTo(List.of(expected.nodesAdmitted(), expected.falseDenials(), expected.netFalseDenials(),
            expected.extraAdmissions()));
    assertThat(r.worstOverPermits()).isEqualTo(expected.worstOverPermits());
  }

  /**
   * {@code -Dsluice.kit.clockStepMs=N}: every case with neighbouring nodes' clocks N ms apart, set to
   * the store's unless {@code -Dsluice.kit.alignClocks=false} (a measurement: see the README's "Nodes'
   * clocks").
   */
  private static final Duration CLOCK_STEP = Duration.ofNanos(
      (long) (1e6 * Double.parseDouble(System.getProperty("sluice.kit.clockStepMs", "0"))));

  private static void run(Profile profile, Algorithm algorithm, Mode mode, long seed, Setup given) {
    Setup setup = given.withClockStep(CLOCK_STEP);
    Traffic traffic = profile.traffic(algorithm, seed);
    Report r = AccuracyKit.replayable(traffic, setup, () -> {
      Report report = AccuracyKit.run(traffic, setup, MemoryStore::new);
      System.out.println("accuracy kit: " + report);
      assertBounds(report, mode, profile, algorithm, setup);
      return report;
    });
    assertThat(r.requests()).isPositive();
  }

  static void assertBounds(Report r, Mode mode, Profile profile, Algorithm algorithm, int nodes) {
    assertBounds(r, mode, profile, algorithm, Setup.of(nodes, mode));
  }

  static void assertBounds(Report r, Mode mode, Profile profile, Algorithm algorithm, Setup setup) {
    int nodes = setup.nodes();
    assertThat(r.keyWindowsOverBound()).as("key-windows over the bound: %s", r).isZero();
    if (mode != Mode.APPROXIMATE || algorithm == Algorithm.TOKEN_BUCKET || algorithm == Algorithm.LEAKY_BUCKET) {
      // (token claims take every token from the store's bucket before it is used: none over, ever)
      assertThat(r.worstOverPermits()).as("over-admission in %s mode: %s", mode, r).isLessThanOrEqualTo(1e-9);
    }
    assertThat(r.falseDenialsBelowHalf()).as("false denials below half the limit: %s", r).isZero();
    if (r.ledgerRead()) {
      // DESIGN's "nothing lost, nothing counted twice", once the nodes have closed: every permit admitted
      // counted once (reservation mode counts what it was granted: see Report#ledgerExtraIn)
      assertThat(r.ledgerLost()).as("admitted permits the store never counted in their window: %s", r).isZero();
      assertThat(r.ledgerExtraIn(mode)).as("permits the store counted beyond those admitted: %s", r).isZero();
    }
    double gap = setup.eachKeyOnOneNode() ? eachKeyOnOneNodeFalseDenialGap(mode, algorithm)
        : profile == Profile.LARGE_MANY ? largeManyFalseDenialGap(mode, algorithm, nodes) : falseDenialGap(mode, algorithm, nodes);
    assertThat(r.falseDenialPercent()).as("false denials (bound %.1f%%, reached so far %.1f%%): %s",
        FALSE_DENIAL_BOUND, gap, r).isLessThanOrEqualTo(Math.max(FALSE_DENIAL_BOUND, gap));
    double notMadeUp = notMadeUpGap(mode, algorithm, nodes);
    assertThat(r.netFalseDenialPercent()).as("false denials not made up in their key-window (bound %.1f%%, reached"
        + " so far %.2f%%): %s", FALSE_DENIAL_BOUND, notMadeUp, r)
        .isLessThanOrEqualTo(Math.max(FALSE_DENIAL_BOUND, notMadeUp));
  }

  /**
   * What is reached of the false-denial bound once swaps are left out (requests denied and not made up
   * by another of the same key-window admitted instead; {@link Report#netFalseDenialPercent}), where it
   * is not, with some room: the worst case of the kit's run of 2026-12-03 22:40 UTC. The figure a user
   * feels as admissions short of the exact algorithm's, held so that it cannot grow unseen. 0 where every
   * profile keeps the bound (fixed windows: at most 0.017% in every mode).
   * <ul>
   *   <li>approximate, sliding windows, 2+ nodes: 0.10% on the kit's seeds (large-limit, 3 nodes), 0.22% at most
   *       on three other sets of them (small limits at 8 nodes, large-limit at 3); 0.37% (large-limit, 8 nodes)
   *       until claimants strand about a request's cost, not half a permit, where requests cost more than 1
   *       (ClaimSizing#strandFits, 2026-12-05 11:55 UTC: 0.37-0.50% -> 0.07-0.08% on the four sets);
   *       0.62% before a flush near
   *       the limit, by the weighted estimate, kept only what its node admits before the answer on sliding
   *       windows too, 2026-12-04 21:50 UTC; 3 nodes 0.117% -> 0.100%; 0.50% before a node that
   *       counts itself alone on the registry's first answer held no part of the fading until its second,
   *       2026-12-04: 37 requests not made up against 30, most in the first windows, where that node's
   *       part went to takes; the same change took tune --simulate at 256 nodes from a window 16.8% of the
   *       limit short to 0.1%, see UnheardNodeClaimTest; shapes 0.075% on 3 nodes (0.14% before claimants
   *       took a permit once their part of the fading was half-way to it), 0.02% on 8 (0.32% before
   *       claimants stranding more than the error budget held no part of the fading); every other
   *       profile within 0.1%, the worst small limits at 8 nodes, 0.07%. 0.58% before a node at the limit
   *       asked again as the fading freed its need, in a window's last two sync intervals or on a key asked
   *       at most 1.75 times its limit, and claims held no part of the fading where it would be a few permits,
   *       2026-12-04: spread at 3 nodes 0.22% -> 0.007%, Zipf over 1,000 keys at 8 nodes 0.32% -> 0.01%;
   *       0.59% before a take at the limit left a few fading permits with the store);</li>
   *   <li>reservation, sliding windows, 2+ nodes: within the bound since 2026-12-07 23:40 UTC (0 on the kit's
   *       seeds and five other sets; 0.12% before, large-limit at 3 nodes);</li>
   *   <li>token buckets and leaky-bucket meters with claims: 1 node within the bound, 0.062% at most on the
   *       kit's seeds and three other sets of them (small limits; 0.10% before a node's own bucket stopped
   *       charging tokens held from an earlier grant a second time, 2026-12-05 11:45 UTC; 0.18% here and
   *       0.38% on other seeds before a node gave back what the store's bucket held beyond its own
   *       admissions, 2026-12-05), 2+ nodes
   *       0.73% (shapes, 8 nodes; spread at 3 nodes 0.53%, 1.34% before a node at the limit claimed no
   *       few tokens of the refill to come).</li>
   * </ul>
   */
  static double notMadeUpGap(Mode mode, Algorithm algorithm, int nodes) {
    if (mode == Mode.EXACT || algorithm == Algorithm.FIXED_WINDOW) {
      return 0;
    }
    if (algorithm == Algorithm.TOKEN_BUCKET || algorithm == Algorithm.LEAKY_BUCKET) {
      // (reservation mode within the bound since 2026-12-07: 0.055% at most on eleven sets of seeds)
      return nodes > 1 && mode == Mode.APPROXIMATE ? 0.85 : 0;
    }
    // (reservation mode's sliding windows within the bound since 2026-12-07 23:40 UTC: see falseDenialGap)
    return nodes == 1 || mode == Mode.RESERVATION ? 0 : 0.25;
  }

  /**
   * {@link #falseDenialGap} where each key's requests all reach one node, what is reached where the bound
   * is not (the kit's seeds, 2026-12-06): the multi-node gaps, and on fixed windows in the approximate
   * mode 0.33% at 8 nodes (shapes; Zipf 0.29%), all made up in their windows. A key at its limit on one
   * node of eight finds seven permits of the limit in the store's reserve for the other nodes'
   * allowances ({@code Allowances}), which they never use on it; they come back a sync interval before
   * the window's end, where the node admits them. Reservation mode and buckets: within 0.05%.
   */
  static double eachKeyOnOneNodeFalseDenialGap(Mode mode, Algorithm algorithm) {
    if (mode == Mode.APPROXIMATE && algorithm == Algorithm.FIXED_WINDOW) {
      return 0.4;
    }
    return falseDenialGap(mode, algorithm, 2);
  }

  /** DESIGN.md's bound on false denials, in % of the requests of a profile. */
  static final double FALSE_DENIAL_BOUND = 0.1;

  /**
   * Where the bound is not reached yet, what is (token buckets with claims: see the method body) (false denials in % of requests, the worst profile of
   * the kit with some room): the gaps the README's accuracy table and the closing note of the issue
   * show. 0 where every profile keeps the bound. The gaps are all at a limit, where which request gets
   * through depends on timing: the nodes admit 94-100% of what the exact algorithm admits there.
   * <ul>
   *   <li>approximate, fixed window, 2+ nodes: 0.18% at 8 nodes (large-limit; 0.15% before a claim
   *       ahead covered two requests at their mean cost), 0.08% at 3 (a hot key's last permits
   *       are claimed by the node a request did not go to, until it uses or gives them up; 0.21% before
   *       flushes near the limit kept only what their node admits before the answer, 0.18% before keys
   *       new to a node were sized for the rest of their window, 0.20% before claims between far below
   *       and near the limit lasted an eighth of what is free);</li>
   *   <li>approximate, sliding window: 1 node within the bound since 2026-12-05 (0.010% at most on the
   *       kit's seeds and on the sets at offsets 7000-9000, since a claim call trims the node's claim on the
   *       window gone by, PreviousClaimTrimTest: 0.035% before on the kit's seeds, 0.072% on three other
   *       sets, and 0.167% and 0.767% on seeds 7118 and 8118, large limit; 0.47% on the shapes profile before a node that
   *       counts itself alone unconfirmed asked again as the fading freed its need, see
   *       SlidingBackoffTest#aLoneNodeBeforeItsCountIsConfirmedAsksAgainAsTheFadingFreesItsNeed; 3.6% on
   *       small limits before a cold key's claim call counted its permit), 2+ nodes 12.8%: the budget a
   *       sliding window frees as the previous one fades is split between the claimants evenly, and a
   *       request that comes to a node whose part has not grown enough is denied while another node's
   *       part waits;</li>
   *   <li>reservation: fixed windows within the bound since 2026-12-05 (0.035% at most on the kit's seeds,
   *       0.074% at most on fifteen other sets but one run, shapes at 8 nodes, seed 15098, 0.103%, all made up in
   *       their windows; 0.15% on large limits before a node took nothing ahead that pays for
   *       less than one of the key's requests, ReservationAheadTest#aNodeTakesNothingAheadThatPaysForLessThanOneRequest),
   *       sliding 2+ nodes within it since 2026-12-07 23:40 UTC (0.027% at most on the kit's seeds, 0.033% on
   *       five other sets, offsets 93000-97000), when a node's grants were sized by what the store's answer
   *       leaves of the limit with the previous window at its weight (WindowLeases#remainingAt,
   *       ReservationSlidingNodesTest): before, it read the limit less the window's own count, asked for
   *       grants ahead of its requests at a window's start where a permit or two had faded, and held each
   *       for its own next request (shapes 0.76% / 1.12% at 3 / 8 nodes, large-many 1.22% / 1.64%, all made
   *       up in their windows); 1.23% before that (a large limit at costs up to 2,000, which reach the limit
   *       a request at a time; 1.5-2.1% on every seed set before that rule, 0-1.75% after it). 0.53% and 2.3% (shapes) before a node with others asked for an eighth of its even
   *       share of what was left at once, not half of it. Sliding was 9.0% at every
   *       node count before a node asked for a grant as soon as the fading had freed one by its last
   *       answer's counts, and gave a grant left unused at its window's end back
   *       (ReservationSlidingTest); fixed 2.3% and sliding 3.8% at 8 nodes before a node whose part of
   *       what is left is a permit took nothing ahead of its requests (ReservationAheadTest).</li>
   * </ul>
   */
  /**
   * {@link #falseDenialGap} on the many keys of a large limit (Profile#LARGE_MANY, added 2026-12-07): the
   * same but for reservation mode's buckets on 2+ nodes (3%, see the method body). (Reservation mode's
   * sliding window on 2+ nodes had 1.664% at 8 nodes on the kit's seed, 1.38-1.97% on other seeds, until
   * its grants were sized by the weighted remainder: see falseDenialGap.)
   */
  static double largeManyFalseDenialGap(Mode mode, Algorithm algorithm, int nodes) {
    if (mode == Mode.RESERVATION && nodes > 1 && (algorithm == Algorithm.TOKEN_BUCKET || algorithm == Algorithm.LEAKY_BUCKET)) {
      // (2.31% at 8 nodes on the kit's seeds, 2.63% at most on five other sets, 2.8-3.4% before the
      // changes of 2026-12-07 evening; the keys at large costs near their limits; not traced further)
      return 3.0;
    }
    return falseDenialGap(mode, algorithm, nodes);
  }

  static double falseDenialGap(Mode mode, Algorithm algorithm, int nodes) {
    boolean sliding = algorithm == Algorithm.SLIDING_WINDOW_COUNTER;
    if ((algorithm == Algorithm.TOKEN_BUCKET || algorithm == Algorithm.LEAKY_BUCKET) && mode != Mode.EXACT) {
      // token claims: 1 node 0.101% at most on the kit's seeds and three other sets (small limits; 0.157%
      // before a node alone let its due tokens go with tokens still to come, 0.25% before a node's own
      // bucket stopped charging tokens held from an earlier grant a second time, 2026-12-05,
      // BucketFractionTest); before a node gave back what the store's bucket held beyond its own
      // admissions (expired tokens, the part of one left, tokens still to come), its due times lagged
      // the exact bucket's by that much at the limit: 2.3% (shapes) on buckets and 4.1% / 7.0% on
      // meters, up to 7.0% on other seeds. 2+ nodes 11.4% (which node a refilled token's request
      // reaches, as for sliding windows); meters, the same claims over the same GCRA state, 11.5-12.1%.
      // Reservation mode, 2+ nodes: 0.07% on the kit's seeds, 0.603% at most on eleven other sets (offsets
      // 80000-84000 and 87000-92000; Zipf at 3 nodes, seed 91011, 3.17% on the build before both changes below; shapes
      // 0.438% at seed 93017), the large-many profile apart (largeManyFalseDenialGap); 11.5-12.3%
      // (shapes) before a key that other nodes claim on took none of the refill ahead at its limit
      // (TokenClaimsTest#inReservationModeTheRefillAtTheLimitGoesToWhicheverNodeAsksFirst), then 3.0-4.5%
      // until it claimed ahead below the limit only what it uses before the bucket refills past it
      // (TokenClaimsTest#inReservationModeASharedKeyClaimsAheadOnlyWhatItUsesBeforeTheBucketRefillsPastIt)
      if (nodes == 1) {
        return 0.15;
      }
      return mode == Mode.RESERVATION ? 0.8 : 14.0;
    }
    switch (mode) {
      case APPROXIMATE:
        return sliding ? (nodes == 1 ? 0 : 14.0) : (nodes == 1 ? 0 : 0.25);
      case RESERVATION:
        return 0;
      default:
        return 0;
    }
  }
}
