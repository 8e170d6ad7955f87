package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * LOCAL_SHARE keeps its promise with every node cut off: in the window the fault begins (nodes that had
 * admitted unevenly before it) and in the window they come back in, together or one by one, the nodes
 * together stay within the limit and its error budget (plus one permit per node for rounding up their
 * parts). Three nodes, a
 * fixed window of 10 s at twice its limit, demand spread unevenly over the nodes (60/25/15%).
 */
class LocalShareTest {
  private static final long LIMIT = 1_000;
  private static final Duration WINDOW = Duration.ofSeconds(10);

  /**
   * @param cutAt when every node loses the store, in ms into the window
   * @param backAt when each node gets it back (ms into the window, ';'-separated, per node): within
   *     the time a node holds its share after its last use of it (here about 4 s: twice the breaker's
   *     1 ms wait and the 2 s flush timeout), which is what "cut off together" means
   */
  @ParameterizedTest(name = "cut at {0} ms, back at {1}")
  @CsvSource({
      "1000, 3000;3000;3000", // together
      "1000, 2000;3500;5000", // one by one, the busiest first
      "3000, 6500;4000;5000", // one by one, the busiest last
      "200, 12000;12000;12000", // over the window's end
  })
  void nodesCutOffTogetherStayWithinTheLimit(long cutAt, String backAt) {
    long[] back = java.util.Arrays.stream(backAt.split(";")).mapToLong(Long::parseLong).toArray();
    Limit limit = Limit.fixedWindow("share").limit(LIMIT).window(WINDOW).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    List<CutLink> stores = new ArrayList<>();
    // (the default flush timeout: the time a node holds its share after its last use depends on it)
    List<SyncedLimiter> nodes = threeNodes(limit, ticker, Duration.ofMillis(1), SyncConfig.DEFAULT_FLUSH_TIMEOUT, stores);
    SplittableRandom random = new SplittableRandom(cutAt);
    long start = ticker.read();
    long[] admitted = new long[2]; // the window of the fault, the next one
    // 2,000 requests per window (twice the limit) for two windows
    for (int i = 0; i < 3_999; i++) {
      ticker.advance(Duration.ofMillis(5));
      long at = (ticker.read() - start) / 1_000_000;
      for (int n = 0; n < 3; n++) {
        stores.get(n).cut = at >= cutAt && at < back[n];
      }
      double r = random.nextDouble();
      int node = r < 0.6 ? 0 : r < 0.85 ? 1 : 2;
      if (nodes.get(node).tryAcquire("key")) {
        admitted[(int) (at / WINDOW.toMillis())]++;
      }
      if (i % 20 == 19) {
        nodes.forEach(SyncedLimiter::syncNow); // a sync every 100 ms
      }
    }
    assertThat(nodes.stream().mapToLong(SyncedLimiter::fallbackDecisions).sum()).as("decided on the share")
        .isPositive();
    // the error budget (0.5%: the nodes' last answers are up to a sync interval apart, so each split a
    // slightly different free budget); parts are rounded down
    long bound = LIMIT + LIMIT / 200;
    assertThat(admitted[0]).as("window of the fault, limit %s", LIMIT).isBetween(LIMIT * 8 / 10, bound);
    assertThat(admitted[1]).as("the window after, limit %s", LIMIT).isBetween(LIMIT * 8 / 10, bound);
    nodes.forEach(SyncedLimiter::close);
  }

  /**
   * A small limit (10 per 10 s) on three nodes whose last answers differ (each saw the count at 2, 3 and
   * 4 when the store went away, as requests arrive round robin a few ms apart): together they stay
   * within 10 in the window of the fault. (Parts rounded up let them admit 12: each node's part of what
   * was free, and of the whole limit, gained up to a permit.)
   */
  @Test
  void aSmallLimitStaysWithinItWhenEveryNodeIsCutOff() {
    Limit limit = Limit.fixedWindow("small-share").limit(10).window(WINDOW).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    List<CutLink> stores = new ArrayList<>();
    // (a short flush timeout: closing nodes still cut off does not wait long)
    List<SyncedLimiter> nodes = threeNodes(limit, ticker, Duration.ofSeconds(60), Duration.ofMillis(100), stores);
    int admitted = roundRobin(nodes, ticker, 4); // each node synced after its request: views at 1..4
    stores.forEach(s -> s.cut = true);
    admitted += roundRobin(nodes, ticker, 30);
    assertThat(nodes.stream().mapToLong(SyncedLimiter::fallbackDecisions).sum()).as("decided on the share")
        .isPositive();
    assertThat(admitted).as("admitted in the window, limit 10").isBetween(6, 10);
    nodes.forEach(SyncedLimiter::close);
  }

  /**
   * A node back before the others holds no claim beyond its local share: cut off with the others, it
   * comes back first, at its share, while they still decide on theirs and their admissions are not in
   * the store. A claim the store granted it then (on counts without theirs) was budget they had spent:
   * held past its share, the node admitted on it once the share ran out, after they had flushed (the
   * chaos suite's staggered recovery, 10 s windows: 6,036-6,059 of a limit of 6,000, where the node's
   * view, with nothing to send, was not refreshed before it did). Here the claim the node holds while the
   * share caps it is read: 100 permits before, nothing beyond its uncounted permits now.
   */
  @Test
  void aNodeBackFirstHoldsNoClaimBeyondItsShare() {
    Limit limit = Limit.fixedWindow("first-back").limit(6_000).window(WINDOW).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    List<CutLink> stores = new ArrayList<>();
    List<SyncedLimiter> nodes = threeNodes(limit, ticker, Duration.ofMillis(1), SyncConfig.DEFAULT_FLUSH_TIMEOUT, stores);
    long start = ticker.read();
    long admitted = 0;
    long unusedClaimWhileCapped = -1;
    // 3,600 requests a second, a third to each node, for a window of 10 s: every node reaches its share
    // while cut off (an even third of what was free, 2,000 with what it had admitted)
    for (int i = 0; i < 35_999; i++) {
      ticker.advance(Duration.ofNanos(277_778));
      long at = (ticker.read() - start) / 1_000_000;
      stores.get(0).cut = at >= 1_000 && at < 2_000; // node 0 is back at 2 s
      stores.get(1).cut = at >= 1_000 && at < 5_000; // the others at 5 s
      stores.get(2).cut = at >= 1_000 && at < 5_000;
      int node = i % 3;
      admitted += nodes.get(node).tryAcquire("key") ? 1 : 0;
      if (i % 360 == 359) {
        nodes.forEach(SyncedLimiter::syncNow); // a sync every 100 ms
      }
      if (at == 4_500 && unusedClaimWhileCapped < 0) {
        unusedClaimWhileCapped = unusedClaim(nodes.get(0), ticker.read());
      }
    }
    assertThat(nodes.stream().mapToLong(SyncedLimiter::fallbackDecisions).sum()).as("decided on the share")
        .isPositive();
    assertThat(unusedClaimWhileCapped).as("node 0's claim beyond its uncounted permits, at its share, the others"
        + " still cut off").isZero();
    assertThat(admitted).as("admitted in the window, limit 6,000").isBetween(5_700L, 6_000L + 6_000 / 200);
    nodes.forEach(SyncedLimiter::close);
  }

  /**
   * Nodes started while the store is out of reach have never heard the registry and take themselves for
   * alone: three of them admitted 30 of a limit of 10 on LOCAL_SHARE (33 of a bucket of 10). Told the
   * fewest nodes the deployment runs ({@code minNodes}), each keeps to that part from the start (a
   * bucket's parts rounded down, as a window's are: rounded up, 12 of a bucket of 10).
   */
  @ParameterizedTest(name = "{0}, minNodes {1}")
  @CsvSource({"FIXED_WINDOW, 1, 30", "FIXED_WINDOW, 3, 9", "SLIDING_WINDOW_COUNTER, 1, 30",
      "SLIDING_WINDOW_COUNTER, 3, 9", "TOKEN_BUCKET, 1, 33", "TOKEN_BUCKET, 3, 9"})
  void nodesStartedCutOffKeepToTheFewestNodesTheyAreTold(io.sluice.node.Algorithm algorithm, int minNodes,
      int expected) {
    Limit limit = algorithm == io.sluice.node.Algorithm.TOKEN_BUCKET
        ? Limit.tokenBucket("unheard").capacity(10).refill(10, WINDOW).build()
        : Limit.builder("unheard", algorithm).limit(10).window(WINDOW).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    MemoryStore memory = new MemoryStore();
    List<SyncedLimiter> nodes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      // cut off from the first moment: every call fails, heartbeats included
      io.sluice.sync.spi.CounterStore link = algorithm == io.sluice.node.Algorithm.TOKEN_BUCKET
          ? new CutExactStore(memory) : new CutLink(memory);
      if (link instanceof CutLink l) {
        l.cut = true;
      }
      nodes.add(SyncedLimiter.builder(limit, link).nodeId("u" + i).ticker(ticker).autoSync(false).minNodes(minNodes)
          .flushTimeout(Duration.ofMillis(100)).onStoreFailure(StoreFailurePolicy.LOCAL_SHARE)
          .storeBreaker(StoreBreakerConfig.custom().slidingWindowSize(2).minimumNumberOfCalls(2)
              .waitInOpenState(Duration.ofSeconds(60)).build())
          .breakerClock(new TickerClock(ticker)).build());
    }
    int admitted = roundRobin(nodes, ticker, 60);
    assertThat(nodes.stream().mapToLong(SyncedLimiter::fallbackDecisions).sum()).as("decided on the share")
        .isPositive();
    assertThat(admitted).as("admitted by three nodes that never heard the registry, limit 10, minNodes %s", minNodes)
        .isEqualTo(expected);
    nodes.forEach(SyncedLimiter::close);
  }

  /**
   * A node back before the others, in a window after the one it last decided on its share in, keeps to
   * its even split there while they are still cut off: windows of 1 s, a limit of 600 at twice the demand
   * spread evenly, every node cut off at 1.5 s, node 0 back at 2.9 s and the others at 3.4 s. In the
   * window from 3 s node 0 never decides on its share (its breaker is closed), and the store's counts
   * lack what the others admit on theirs until they are back: with the hold ending with the window it
   * began in, node 0 claimed as if they had admitted nothing (the chaos suite's key flood, windows of
   * 1 s: 668-730 of 600 in such a window).
   */
  @Test
  void aNodeBackBeforeTheOthersKeepsToItsSplitInTheWindowsAfter() {
    long[] admitted = secondsOfTraffic("back-early", 1_200, 6, 1_500, new long[] {2_900, 3_400, 3_400}, (node, at) -> true);
    for (int w = 0; w < admitted.length; w++) {
      assertThat(admitted[w]).as("window %d (from %d s), limit 600; every window %s", w, w,
          java.util.Arrays.toString(admitted)).isLessThanOrEqualTo(600 + 6);
    }
  }

  /**
   * The same on a key the node that is back is not asked for in the windows between: its view, quiet, would be
   * dropped from the key table two windows on, and one made anew holds no share. Windows of 1 s, a limit of 600,
   * every node cut off at 1.1 s; node 0 is asked for the key from 1 to 2 s and from 4 to 5 s, and is back at 2 s;
   * nodes 1 and 2 are asked for it all along, at twice the limit together, and are back at 5.5 s.
   */
  @Test
  void aNodeBackBeforeTheOthersKeepsItsHoldOnAKeyItWasNotAskedForMeanwhile() {
    long[] admitted = secondsOfTraffic("back-quiet", 1_800, 7, 1_100, new long[] {2_000, 5_500, 5_500},
        (node, at) -> node != 0 || (at >= 1_000 && at < 2_000) || (at >= 4_000 && at < 5_000));
    for (int w = 0; w < admitted.length; w++) {
      assertThat(admitted[w]).as("window %d (from %d s), limit 600; every window %s", w, w,
          java.util.Arrays.toString(admitted)).isLessThanOrEqualTo(600 + 6);
    }
  }

  /**
   * Three nodes of a fixed window of 600 a second (named {@code name}), asked for "key" {@code perSecond} times
   * a second in turn for {@code seconds} where {@code asked} (node, ms since the start) says so, each cut off
   * from {@code cutAt} ms to its {@code backAt} ms, all synced every 100 ms: the permits admitted in each
   * window. Some decisions were made on the local share.
   */
  private static long[] secondsOfTraffic(String name, int perSecond, int seconds, long cutAt, long[] backAt,
      java.util.function.BiPredicate<Integer, Long> asked) {
    Limit limit = Limit.fixedWindow(name).limit(600).window(Duration.ofSeconds(1)).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    List<CutLink> stores = new ArrayList<>();
    // (a claim timeout of 1 ms: a decision that waits for a release flush kept while the link is cut waits
    // on the wall clock, and the breaker, half-open every simulated millisecond here, lets many through)
    List<SyncedLimiter> nodes = threeNodes(limit, ticker, Duration.ofMillis(1), SyncConfig.DEFAULT_FLUSH_TIMEOUT,
        Duration.ofMillis(1), stores);
    long start = ticker.read();
    long[] admitted = new long[seconds];
    for (int i = 0; i < seconds * perSecond - 1; i++) {
      ticker.advance(Duration.ofNanos(1_000_000_000L / perSecond));
      long at = (ticker.read() - start) / 1_000_000;
      for (int n = 0; n < 3; n++) {
        stores.get(n).cut = at >= cutAt && at < backAt[n];
      }
      int node = i % 3;
      if (asked.test(node, at) && nodes.get(node).tryAcquire("key")) {
        admitted[(int) (at / 1_000)]++;
      }
      if (i % (perSecond / 10) == perSecond / 10 - 1) {
        nodes.forEach(SyncedLimiter::syncNow); // a sync every 100 ms
      }
    }
    assertThat(nodes.stream().mapToLong(SyncedLimiter::fallbackDecisions).sum()).as("decided on the share")
        .isPositive();
    nodes.forEach(SyncedLimiter::close);
    return admitted;
  }

  /**
   * Where the limit is below the node count the nodes cut off admit nothing, so the store's counts hold every
   * admission once a node is back: its hold ends with its window there, as before, rather than deny the key
   * for the hold's seconds. A limit of 2 per second on three nodes, all cut off from 1.1 to 2 s, node 0 asked
   * ten times a second throughout: from 3 s it admits 2 in every window.
   */
  @Test
  void aSplitOfNothingIsNotCarriedIntoTheWindowsAfter() {
    Limit limit = Limit.fixedWindow("tiny-share").limit(2).window(Duration.ofSeconds(1)).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    List<CutLink> stores = new ArrayList<>();
    List<SyncedLimiter> nodes = threeNodes(limit, ticker, Duration.ofMillis(1), SyncConfig.DEFAULT_FLUSH_TIMEOUT,
        Duration.ofMillis(1), stores);
    long start = ticker.read();
    long[] admitted = new long[6];
    for (int i = 0; i < 60 - 1; i++) {
      ticker.advance(Duration.ofMillis(100));
      long at = (ticker.read() - start) / 1_000_000;
      stores.forEach(link -> link.cut = at >= 1_100 && at < 2_000);
      if (nodes.get(0).tryAcquire("key")) {
        admitted[(int) (at / 1_000)]++;
      }
      nodes.forEach(SyncedLimiter::syncNow);
    }
    assertThat(nodes.get(0).fallbackDecisions()).as("decided on the share").isPositive();
    assertThat(java.util.Arrays.copyOfRange(admitted, 3, 6)).as("windows from 3 s; every window %s",
        java.util.Arrays.toString(admitted)).containsOnly(2L);
  }

  /** A store whose every call fails, the exact scripts and heartbeats included: a node cut off from the start. */
  private static final class CutExactStore extends ForwardingStore implements io.sluice.sync.spi.ExactStore {
    CutExactStore(MemoryStore inner) {
      super(inner);
    }

    private static <T> java.util.concurrent.CompletionStage<T> cut() {
      return java.util.concurrent.CompletableFuture.failedFuture(
          new io.sluice.sync.spi.StoreUnavailableException("cut off", null));
    }

    @Override
    public java.util.concurrent.CompletionStage<io.sluice.sync.spi.FlushResult> flush(io.sluice.sync.spi.Batch batch) {
      return cut();
    }

    @Override
    public java.util.concurrent.CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
      return cut();
    }

    @Override
    public java.util.concurrent.CompletionStage<io.sluice.sync.spi.ExactResult> acquire(Limit limit, String key, long cost,
        long nowMicros) {
      return cut();
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> giveBack(Limit limit, String key, long cost, long nowMicros,
        long window) {
      return cut();
    }
  }

  /** {@code requests} on key "k", 20 ms apart, to the nodes in turn, each synced after its request: the permits admitted. */
  private static int roundRobin(List<SyncedLimiter> nodes, ManualTicker ticker, int requests) {
    int admitted = 0;
    for (int i = 0; i < requests; i++) {
      ticker.advance(Duration.ofMillis(20));
      SyncedLimiter node = nodes.get(i % nodes.size());
      admitted += node.tryAcquire("k") ? 1 : 0;
      node.syncNow();
    }
    return admitted;
  }

  /** What the node's claim on "key" holds beyond its uncounted permits (0 where it holds none). */
  private static long unusedClaim(SyncedLimiter node, long now) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("pending (\\d+)/\\d+ .* claim (-?\\d+) ")
        .matcher(CoreAccess.core(node).describeView("key", now));
    assertThat(m.find()).as("the node's view of the key").isTrue();
    return Math.max(0, Long.parseLong(m.group(2)) - Long.parseLong(m.group(1)));
  }

  /**
   * Three nodes of {@code limit} under LOCAL_SHARE, each on a link of its own to one in-memory store
   * (added to {@code links}), with a breaker that opens after two failed calls and waits {@code open}
   * on the test's clock, and the flush timeout {@code flush}.
   */
  private static List<SyncedLimiter> threeNodes(Limit limit, ManualTicker ticker, Duration open, Duration flush,
      List<CutLink> links) {
    return threeNodes(limit, ticker, open, flush, SyncConfig.DEFAULT_CLAIM_TIMEOUT, links);
  }

  /** {@link #threeNodes(Limit, ManualTicker, Duration, Duration, List)} with the claim timeout {@code claim}. */
  private static List<SyncedLimiter> threeNodes(Limit limit, ManualTicker ticker, Duration open, Duration flush,
      Duration claim, List<CutLink> links) {
    MemoryStore memory = new MemoryStore();
    List<SyncedLimiter> nodes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      CutLink link = new CutLink(memory);
      links.add(link);
      nodes.add(SyncedLimiter.builder(limit, link).nodeId("n" + i).ticker(ticker).autoSync(false)
          .flushTimeout(flush).claimTimeout(claim).activeNodes(() -> 3).onStoreFailure(StoreFailurePolicy.LOCAL_SHARE)
          .storeBreaker(StoreBreakerConfig.custom().slidingWindowSize(2).minimumNumberOfCalls(2).waitInOpenState(open)
              .slowCallDuration(Duration.ofSeconds(60)).slowCallRateThreshold(100).permittedCallsInHalfOpenState(10).build())
          .breakerClock(new TickerClock(ticker))
          .build());
    }
    return nodes;
  }
}
