package io.sluice.sync;

import static io.sluice.sync.ProbeSim.MS;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.StoreUnavailableException;
import io.sluice.sync.sim.MemoryStore;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.testkit.WindowClaimContract;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A node's allowance on a fixed window's or sliding window counter's keys (SyncConfig.Builder#coldKeyAllowance): a key's first
 * permit in a window on a node is admitted without a store call, once every other node counts the node
 * (two heartbeat intervals after it joined) and before the window's last two sync intervals; the
 * nodes together still never pass the limit, and the permits the other nodes' allowances held come
 * back before the window ends when those nodes have no request for the key.
 */
class ColdKeyAllowanceTest {
  private static final Duration SYNC = Duration.ofMillis(100);
  private static final long SECOND = 1_000 * MS;

  @Test
  void aColdKeysFirstPermitInAWindowDoesNotWaitOnceTheOtherNodesCountTheNode() {
    Limit limit = Limit.fixedWindow("allow").limit(100).window(Duration.ofSeconds(1)).build();
    try (ProbeSim sim = new ProbeSim(limit, SYNC, false)) {
      sim.startNode();
      sim.startNode();
      SyncedLimiter node = sim.node(0);
      // just started: the others may not count this node yet, so the store decides
      sim.at(500 * MS);
      assertThat(decidedWithoutWaiting(sim, 0, "early")).isFalse();
      // three seconds on (every node has heard the registry count it since): no store call
      sim.at(3 * SECOND + 100 * MS);
      long calls = node.storeCalls();
      assertThat(decidedWithoutWaiting(sim, 0, "a")).isTrue();
      assertThat(node.storeCalls()).as("no store call for it").isEqualTo(calls);
      // the allowance is a permit per key and window: the key's next request asks
      assertThat(decidedWithoutWaiting(sim, 0, "a")).isFalse();
      // and each node has its own
      assertThat(decidedWithoutWaiting(sim, 1, "a")).isTrue();
      // the next sync counts what they admitted
      sim.at(3 * SECOND + 300 * MS);
      Counter counter = Counter.of(limit);
      assertThat(WindowClaimContract.readWindow(sim.store, counter, "a", sim.window())).isEqualTo(3);
      // in the window's last three sync intervals a permit under the allowance goes at once, so that
      // the store has it before the others' calls stop keeping the reserve (a sync interval before
      // the end)...
      sim.at(3 * SECOND + 750 * MS);
      assertThat(decidedWithoutWaiting(sim, 0, "late")).isTrue();
      sim.at(3 * SECOND + 760 * MS);
      assertThat(WindowClaimContract.readWindow(sim.store, counter, "late", sim.window())).isEqualTo(1);
      // ...and none in the last two: a permit there might reach the store after that
      sim.at(3 * SECOND + 850 * MS);
      assertThat(decidedWithoutWaiting(sim, 0, "later")).isFalse();
      // in the next window, again
      sim.at(4 * SECOND + 10 * MS);
      assertThat(decidedWithoutWaiting(sim, 0, "a")).isTrue();
    }
  }

  /**
   * A node whose store failed a call within the last two sync intervals asks the store again rather than
   * admit under its allowance: a permit it could not count before the others' calls stop keeping the
   * reserve would pass the limit.
   */
  @Test
  void aNodeWhoseStoreFailedLatelyAsksInsteadOfUsingItsAllowance() {
    Limit limit = Limit.fixedWindow("failed").limit(100).window(Duration.ofSeconds(10)).build();
    AtomicBoolean failing = new AtomicBoolean();
    CounterStore store = new ForwardingStore(new MemoryStore()) {
      @Override
      public CompletionStage<FlushResult> flush(Batch batch) {
        return failing.get() ? CompletableFuture.failedFuture(new StoreUnavailableException("injected", null))
            : inner.flush(batch);
      }
    };
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    // (sync intervals of a second: "lately" is on the system clock, two of them, wide for a slow machine)
    try (SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("a").ticker(ticker).autoSync(false)
        .activeNodes(() -> 2).syncInterval(Duration.ofSeconds(1)).build()) {
      assertThat(node.tryAcquire("first")).isTrue(); // (the store has answered once since the node started)
      long waited = node.waitedDecisions();
      assertThat(node.tryAcquire("a")).isTrue();
      assertThat(node.waitedDecisions()).as("under the allowance").isEqualTo(waited);
      failing.set(true);
      node.syncNow();
      failing.set(false);
      assertThat(node.tryAcquire("b")).isTrue();
      assertThat(node.waitedDecisions()).as("asked the store").isEqualTo(waited + 1);
    }
  }

  @Test
  void noAllowanceWhereTheReserveWouldBeMoreThanASixteenthOfTheLimit() {
    // 20 < 16 x 2 nodes: a node's first permit on a key asks the store, as before
    Limit limit = Limit.fixedWindow("small").limit(20).window(Duration.ofSeconds(1)).build();
    try (ProbeSim sim = new ProbeSim(limit, SYNC, false)) {
      sim.startNode();
      sim.startNode();
      sim.at(3 * SECOND + 100 * MS);
      assertThat(decidedWithoutWaiting(sim, 0, "a")).isFalse();
    }
  }

  /**
   * All of a key's requests reach one node of four (sticky routing) at three times its limit of 64: the
   * three others' allowances are kept from that node's claims until a sync interval before the window's
   * end, and then granted to it, so the window still admits exactly its limit. Where the others do
   * have requests, each admits one under its allowance and the busy node gets nothing more: never
   * past the limit.
   */
  @Test
  void theNodesNeverPassTheLimitAndTheAllowancesUnusedComeBackBeforeTheWindowEnds() {
    Limit limit = Limit.fixedWindow("sticky").limit(64).window(Duration.ofSeconds(1)).build();
    for (boolean othersAsk : new boolean[] {false, true}) {
      try (ProbeSim sim = new ProbeSim(limit, SYNC, false)) {
        for (int i = 0; i < 4; i++) {
          sim.startNode();
        }
        long window = 3 * SECOND; // (every node counted by the others)
        sim.at(window);
        int admitted = 0;
        int beforeTheReserveCameBack = 0;
        for (long t = 2 * MS; t < SECOND; t += 5 * MS) {
          sim.at(window + t);
          if (othersAsk && t >= 600 * MS && t < 615 * MS) {
            int other = 1 + (int) ((t - 600 * MS) / (5 * MS));
            admitted += sim.acquire(other, "k", 1) ? 1 : 0;
          }
          admitted += sim.acquire(0, "k", 1) ? 1 : 0;
          assertThat(admitted).as("at +%d ms", t / MS).isLessThanOrEqualTo(64);
          if (t < SECOND - SYNC.toNanos()) {
            beforeTheReserveCameBack = admitted;
          }
        }
        assertThat(admitted).as("others ask: %s", othersAsk).isEqualTo(64);
        if (!othersAsk) {
          assertThat(beforeTheReserveCameBack).as("the three idle nodes' allowances held until then").isEqualTo(61);
        }
      }
    }
  }

  /**
   * Sliding window counters: the previous window's count weighs whole at a window's start and may fill
   * the limit, so a node uses its allowance only once the window is reserve / limit in (2 nodes, a limit
   * of 100: 20 ms of a second), and asks the store before that.
   */
  @Test
  void onASlidingWindowAColdKeysFirstPermitWaitsOnlyUntilThePreviousWindowCouldHaveFadedByTheReserve() {
    Limit limit = Limit.slidingWindowCounter("allow-s").limit(100).window(Duration.ofSeconds(1)).build();
    try (ProbeSim sim = new ProbeSim(limit, SYNC, false)) {
      sim.startNode();
      sim.startNode();
      sim.at(3 * SECOND + 5 * MS);
      assertThat(decidedWithoutWaiting(sim, 0, "a")).isFalse();
      sim.at(3 * SECOND + 25 * MS);
      long calls = sim.node(0).storeCalls();
      assertThat(decidedWithoutWaiting(sim, 0, "b")).isTrue();
      assertThat(sim.node(0).storeCalls()).as("no store call for it").isEqualTo(calls);
      assertThat(decidedWithoutWaiting(sim, 1, "b")).isTrue();
      // the key's next request on the node asks
      assertThat(decidedWithoutWaiting(sim, 0, "b")).isFalse();
      // none in the window's last two sync intervals either
      sim.at(3 * SECOND + 850 * MS);
      assertThat(decidedWithoutWaiting(sim, 0, "c")).isFalse();
    }
  }

  /**
   * A sliding window's key at twice its limit, all of its requests on one node of four (sticky
   * routing), window after window, while the three others each get a request for it once a window, in
   * its first milliseconds, just after the reserve's part of it (reserve / limit of the window), or
   * later: the nodes' weighted count (the previous window's admissions at their weight and the current
   * window's) stays within a permit of the limit at every admission. A limit of 128 (the least with
   * allowances on 4 nodes; claims without parts of the fading there) and one of 600 (claimants hold parts). With allowances used from the
   * window's start, the others admitted over a previous window that still filled the limit (this test
   * fails so). (Where a claim's part of the fading starts is the store's: WindowClaimContract.)
   */
  @Test
  void onASlidingWindowTheNodesAllowancesNeverPassTheLimitOverAPreviousWindowThatFilledIt() {
    for (int limitPerSecond : new int[] {128, 600}) {
      Limit limit = Limit.slidingWindowCounter("sticky-s").limit(limitPerSecond).window(Duration.ofSeconds(1)).build();
      long reserveNanos = SECOND * 4 / limitPerSecond;
      try (ProbeSim sim = new ProbeSim(limit, SYNC, false)) {
        for (int i = 0; i < 4; i++) {
          sim.startNode();
        }
        long[] counts = new long[16]; // admissions per window
        int othersAdmitted = 0;
        long step = SECOND / (2L * limitPerSecond);
        for (long t = 3 * SECOND; t < 10 * SECOND; t += step) {
          sim.at(t);
          long w = t / SECOND;
          long inWindow = t % SECOND;
          long from = new long[] {0, reserveNanos, 300 * MS}[(int) (w % 3)];
          if (inWindow >= from && inWindow < from + step) {
            for (int other = 1; other <= 3; other++) {
              if (sim.acquire(other, "k", 1)) {
                counts[(int) w]++;
                othersAdmitted++;
              }
            }
          }
          if (sim.acquire(0, "k", 1)) {
            counts[(int) w]++;
          }
          double weighted = counts[(int) w - 1] * (1 - (double) inWindow / SECOND) + counts[(int) w];
          assertThat(weighted).as("limit %d: weighted count at %d ms", limitPerSecond, t / MS)
              .isLessThanOrEqualTo(limitPerSecond + 1);
        }
        assertThat(othersAdmitted).as("the other nodes' requests are admitted where there is room").isPositive();
      }
    }
  }

  /** Node i decides a request of {@code key}; whether it was admitted without waiting for the store. */
  private static boolean decidedWithoutWaiting(ProbeSim sim, int i, String key) {
    return decidedWithoutWaiting(sim, i, key, 1);
  }

  /** Node i decides a request of {@code key} at {@code cost}; whether it was admitted without waiting for the store. */
  static boolean decidedWithoutWaiting(ProbeSim sim, int i, String key, long cost) {
    long waited = sim.node(i).waitedDecisions();
    boolean allowed = sim.acquire(i, key, cost);
    assertThat(allowed).as("%s on node %d", key, i).isTrue();
    return sim.node(i).waitedDecisions() == waited;
  }
}
