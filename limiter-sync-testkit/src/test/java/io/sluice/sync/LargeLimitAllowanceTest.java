package io.sluice.sync;

import static io.sluice.sync.ProbeSim.MS;
import static io.sluice.sync.ColdKeyAllowanceTest.decidedWithoutWaiting;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.sim.MemoryStore;
import io.sluice.sync.testkit.WindowClaimContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A node's allowance on a large limit (Allowances#perKey): its part of the error budget, {@code limit
 * * maxError / N}, at most a batch, rather than one permit. A key asked a few times a window on a node
 * is decided without a store call until the allowance is spent, also after a flush that asks no claim
 * for it (the rest is kept); in the window's last two sync intervals a node may admit up to half its
 * part of the budget outside the reserve, and the nodes together pass the limit there by at most that.
 */
class LargeLimitAllowanceTest {
  private static final Duration SYNC = Duration.ofMillis(100);
  private static final long SECOND = 1_000 * MS;

  /** A simulation of {@code limit} on two nodes, both started. */
  private static ProbeSim twoNodes(Limit limit) {
    ProbeSim sim = new ProbeSim(limit, SYNC, false);
    sim.startNode();
    sim.startNode();
    return sim;
  }

  /**
   * A limit of 200,000 a second on two nodes: each node's part of the budget is 500 permits, so its
   * allowance is a batch (100). A key's requests in a window wait for nothing until 100 permits are
   * spent; with one permit (as on a small limit) its second request asked the store. After the sync
   * that counts them (the key far below its limit: the node keeps the rest, and its claim), the key's
   * requests still make no store call.
   */
  @Test
  void aKeysRequestsInAWindowDoNotWaitWhileTheAllowancePaysForThem() {
    Limit limit = Limit.fixedWindow("large").limit(200_000).window(Duration.ofSeconds(1)).build();
    try (ProbeSim sim = twoNodes(limit)) {
      sim.at(3 * SECOND + 50 * MS); // (every node counted by the others)
      SyncedLimiter node = sim.node(0);
      long calls = node.storeCalls();
      for (int i = 0; i < 5; i++) {
        assertThat(decidedWithoutWaiting(sim, 0, "a", 1)).as("request %d", i).isTrue();
      }
      assertThat(decidedWithoutWaiting(sim, 0, "a", 90)).as("a cost within what is left").isTrue();
      assertThat(node.storeCalls()).as("no store call").isEqualTo(calls);
      sim.at(3 * SECOND + 250 * MS);
      Counter counter = Counter.of(limit);
      assertThat(WindowClaimContract.readWindow(sim.store, counter, "a", sim.window())).isEqualTo(95);
      long afterSync = node.storeCalls();
      for (int i = 0; i < 5; i++) {
        assertThat(decidedWithoutWaiting(sim, 0, "a", 1)).as("request %d after the sync", i).isTrue();
      }
      assertThat(node.storeCalls()).as("no store call after the sync").isEqualTo(afterSync);
    }
  }

  /**
   * A key asked once a sync interval on a large limit (200,000 a second on two nodes, allowances of 100),
   * through {@code tryAcquire}: the key's decisions after its first in a window take the allowance's
   * credit, which the syncs that keep the view leave to them (KeyView#harvestCredit; taken back at every
   * sync, each of the key's decisions was judged under the view's monitor), and its window's permits,
   * all paid by the allowance, wait for the window's last sync that counts them within the reserve
   * (Allowances#defers; here the first flushes ask for a claim, which pays for the rest, as before). Three
   * windows of ten requests: every permit counted in its window, those admitted under the reserve before
   * the calls stop carrying it, no more key updates than before (five a window), no decision waiting.
   */
  @Test
  void aKeyAskedEverySyncIntervalFarBelowALargeLimitTakesTheAllowancesCredit() {
    Limit limit = Limit.fixedWindow("large").limit(200_000).window(Duration.ofSeconds(1)).build();
    try (ProbeSim sim = twoNodes(limit)) {
      Counter counter = Counter.of(limit);
      for (long window = 3; window < 6; window++) {
        long updates = sim.store.keyUpdates();
        for (long t = 5 * MS; t < SECOND; t += 100 * MS) {
          sim.at(window * SECOND + t);
          if (t == 305 * MS) {
            // (the syncs since the window's first decision kept the view, and its credit, which no
            // decision since the sync at +300 ms has granted again: in the first window the allowance's,
            // 99 after that decision, less two; later a claim granted ahead)
            String view = CoreAccess.core(sim.node(0)).describeView("a", sim.ticker.read());
            assertThat(view).as("window %d", window).containsPattern(window == 3 ? "credit 97 \\(allowance\\) allowed 3$" : "credit [1-9]\\d*( \\(allowance\\))? allowed \\d+$");
          }
          assertThat(sim.tryAcquire(0, "a", 1)).as("window %d at +%d ms", window, t / MS).isTrue();
        }
        // (the request at +805 ms is admitted in the window's last two sync intervals, outside the reserve;
        // in the later windows a claim granted ahead pays, which the store counts whole: their permits go
        // once the window is over)
        sim.at(window * SECOND + 890 * MS);
        if (window == 3) {
          assertThat(WindowClaimContract.readWindow(sim.store, counter, "a", sim.window()))
              .as("counted before the reserve ends, window %d", window).isGreaterThanOrEqualTo(8);
        }
        sim.at((window + 1) * SECOND + 150 * MS);
        assertThat(WindowClaimContract.readWindow(sim.store, counter, "a", sim.window() - 1))
            .as("counted in window %d", window).isEqualTo(10);
        assertThat(sim.store.keyUpdates() - updates).as("key updates for window %d", window).isLessThanOrEqualTo(5);
      }
      assertThat(sim.node(0).waitedDecisions()).isZero();
    }
  }

  /**
   * A key far below a limit of 10^9 an hour (a ledger), asked 20 times every 20 ms through {@code
   * tryAcquire}: its claim lasts the window, and decisions fill batch after batch under its credit. Each
   * sync that follows a filled batch sends the view, as it would had the decision that filled it been
   * judged under the monitor. Kept with its credit renewed, the view sent nothing more after its first
   * claims: the store's count stayed at 120 of 1,000 (found by the chaos suite: a ledger's backlog never
   * came back down after a fault, and permits refilled after Redis lost its data were never counted).
   */
  @Test
  void aLastingClaimsCreditThatFillsABatchIsSentWithTheNextSync() {
    Limit limit = Limit.fixedWindow("ledger").limit(1_000_000_000L).window(Duration.ofHours(1)).build();
    try (ProbeSim sim = twoNodes(limit)) {
      long start = 3 * SECOND;
      int admitted = 0;
      for (int round = 0; round < 50; round++) {
        sim.at(start + round * 20 * MS);
        for (int i = 0; i < 20; i++) {
          admitted += sim.tryAcquire(0, "ledger", 1) ? 1 : 0;
        }
      }
      assertThat(admitted).isEqualTo(1_000);
      sim.at(start + SECOND + 300 * MS);
      Counter counter = Counter.of(limit);
      assertThat(WindowClaimContract.readWindow(sim.store, counter, "ledger", sim.window()))
          .as("counted within a few syncs").isGreaterThanOrEqualTo(admitted - 2 * 100);
    }
  }

  /**
   * A key's allowance (100 permits: 200,000 a second on two nodes) used up through its credit between
   * two syncs: the sync that keeps or sends the view counts every permit the credit paid as the
   * allowance's (a credit used up is no longer held once counted: read as a plain admission, 99 of them
   * went uncounted as the allowance's, and the next sync's delta spent 1 of 100 while the store kept the
   * other 99 in reserve for permits already admitted).
   */
  @Test
  void aCreditOfTheAllowanceUsedUpIsCountedAsTheAllowances() {
    Limit limit = Limit.fixedWindow("large").limit(200_000).window(Duration.ofSeconds(1)).build();
    try (ProbeSim sim = twoNodes(limit)) {
      long window = 3 * SECOND;
      for (int i = 0; i < 100; i++) {
        sim.at(window + (5 + i / 10) * MS);
        assertThat(sim.tryAcquire(0, "a", 1)).as("request %d", i).isTrue();
      }
      sim.at(window + 150 * MS);
      String view = CoreAccess.core(sim.node(0)).describeView("a", sim.ticker.read());
      assertThat(view).containsPattern("allowed 100$");
    }
  }

  /**
   * A key asked twice early in a window, far below a large limit: the two permits, paid by the node's
   * allowance, are not sent at the next sync but at the last one that still counts them before the calls
   * stop carrying the reserve (+700 ms of a 1 s window at syncs of 100 ms), one delta for both; before,
   * each went with the sync after it. Then the window's count is exact.
   */
  @Test
  void aKeysAllowancePermitsWaitForTheWindowsLastSyncWithinTheReserve() {
    Limit limit = Limit.fixedWindow("large").limit(200_000).window(Duration.ofSeconds(1)).build();
    try (ProbeSim sim = twoNodes(limit)) {
      Counter counter = Counter.of(limit);
      long window = 3 * SECOND;
      sim.at(window + 5 * MS);
      long updates = sim.store.keyUpdates();
      assertThat(sim.tryAcquire(0, "a", 1)).isTrue();
      sim.at(window + 305 * MS);
      assertThat(sim.tryAcquire(0, "a", 1)).isTrue();
      sim.at(window + 650 * MS);
      assertThat(sim.store.keyUpdates() - updates).as("key updates before +650 ms").isZero();
      assertThat(WindowClaimContract.readWindow(sim.store, counter, "a", sim.window())).isZero();
      sim.at(window + 890 * MS);
      assertThat(sim.store.keyUpdates() - updates).as("key updates before the reserve ends").isBetween(1L, 2L);
      assertThat(WindowClaimContract.readWindow(sim.store, counter, "a", sim.window())).isEqualTo(2);
      sim.at(window + SECOND + 150 * MS);
      assertThat(WindowClaimContract.readWindow(sim.store, counter, "a", sim.window() - 1)).isEqualTo(2);
      assertThat(sim.node(0).waitedDecisions()).isZero();
    }
  }

  /**
   * In the window's last two sync intervals the calls no longer carry the reserve: a key's first
   * request there is admitted under half the node's part of the budget (on a small limit it waits for a
   * claim call, ColdKeyAllowanceTest).
   */
  @Test
  void aKeyFirstSeenInTheWindowsLastSyncIntervalsDoesNotWaitOnALargeLimit() {
    Limit limit = Limit.fixedWindow("tail").limit(200_000).window(Duration.ofSeconds(1)).build();
    try (ProbeSim sim = twoNodes(limit)) {
      sim.at(3 * SECOND + 850 * MS);
      assertThat(decidedWithoutWaiting(sim, 0, "late", 1)).isTrue();
      assertThat(decidedWithoutWaiting(sim, 1, "late", 1)).isTrue();
      sim.at(3 * SECOND + 950 * MS);
      assertThat(decidedWithoutWaiting(sim, 0, "later", 1)).isTrue();
      // what they admitted there is counted in that window
      sim.at(4 * SECOND + 150 * MS);
      Counter counter = Counter.of(limit);
      assertThat(WindowClaimContract.readWindow(sim.store, counter, "late", sim.window() - 1)).isEqualTo(2);
    }
  }

  /**
   * A limit of 6,000 a second on three nodes: allowances of 10 (the budget, 30, split), 5 in the tail.
   * Node 0 is asked far past the limit; until a sync interval before the window's end the store keeps
   * the two others' allowances from its claims (5,980 admitted); then its claims take those too. Last,
   * nodes 1 and 2, which have not seen the key in the window, are asked again and again in the window's
   * last sync interval and admit their tail allowances outside any reserve: the window passes the limit
   * by at most half the budget (15; by 20 if the tail allowance were the whole allowance).
   */
  @Test
  void inTheTailTheNodesPassTheLimitByAtMostHalfTheBudget() {
    Limit limit = Limit.fixedWindow("bound").limit(6_000).window(Duration.ofSeconds(1)).build();
    try (ProbeSim sim = new ProbeSim(limit, SYNC, false)) {
      for (int i = 0; i < 3; i++) {
        sim.startNode();
      }
      long window = 3 * SECOND;
      int admitted = 0;
      for (long t = 10 * MS; t < 700 * MS; t += 10 * MS) {
        sim.at(window + t);
        for (int i = 0; i < 10; i++) {
          admitted += sim.acquire(0, "k", 10) ? 10 : 0;
        }
        assertThat(admitted).as("at +%d ms", t / MS).isLessThanOrEqualTo(6_000);
      }
      assertThat(admitted).as("the limit less the others' allowances, before the tail").isEqualTo(5_980);
      // a sync interval before the end the reserve goes back to the claims: node 0 takes it
      for (long t = 905 * MS; t < 950 * MS; t += 10 * MS) {
        sim.at(window + t);
        for (int i = 0; i < 5; i++) {
          admitted += sim.acquire(0, "k", 1) ? 1 : 0;
        }
      }
      assertThat(admitted).as("the whole limit").isEqualTo(6_000);
      // then the two others, which have not seen the key in the window, are asked again and again
      for (long t = 955 * MS; t < SECOND; t += 10 * MS) {
        sim.at(window + t);
        for (int node = 1; node < 3; node++) {
          for (int i = 0; i < 5; i++) {
            admitted += sim.acquire(node, "k", 1) ? 1 : 0;
          }
        }
      }
      assertThat(admitted).as("admitted in the window").isBetween(6_001, 6_015);
    }
  }

  /**
   * A sync that outlasts the beat interval (its batches answered slowly, one after the other) carries
   * the beat that came due while it ran on its next batch: before, the beat rode on one call of each
   * sync only, a busy node's count of nodes aged past two beat intervals and every allowance was
   * withheld (NodeBeat#duringSync). Twelve keys' permits go in one sync, a batch each, every batch
   * answered 150 ms late: 1.8 s, in which beats of a 200 ms interval come due about every other batch;
   * before, one of the sync's batches carried a beat.
   */
  @Test
  void aLongSyncCarriesTheBeatsThatComeDueWhileItRuns() throws Exception {
    ScheduledExecutorService answers = Executors.newSingleThreadScheduledExecutor();
    List<Boolean> flusherBatchesBeat = new ArrayList<>();
    CounterStore store = new ForwardingStore(new MemoryStore()) {
      @Override
      public int maxBatchSize() {
        return 1;
      }

      @Override
      public CompletionStage<FlushResult> flush(Batch batch) {
        if (!Thread.currentThread().getName().startsWith("sluice-flusher") || batch.deltas().isEmpty()) {
          return inner.flush(batch);
        }
        synchronized (flusherBatchesBeat) {
          flusherBatchesBeat.add(batch.beats());
        }
        CompletableFuture<FlushResult> late = new CompletableFuture<>();
        answers.schedule(() -> inner.flush(batch).whenComplete((r, e) -> {
          if (e != null) {
            late.completeExceptionally(e);
          } else {
            late.complete(r);
          }
        }), 150, TimeUnit.MILLISECONDS);
        return late;
      }
    };
    Limit limit = Limit.fixedWindow("beats").limit(1_000_000).window(Duration.ofSeconds(2)).build();
    try (SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("n")
        .syncInterval(Duration.ofMillis(100)).heartbeatInterval(Duration.ofMillis(200)).build()) {
      // (allowances hold from the window after the one in which the registry first counted the node)
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      for (int probe = 0; System.nanoTime() < until; probe++) {
        long waited = node.waitedDecisions();
        assertThat(node.tryAcquire("probe" + probe)).isTrue();
        if (node.waitedDecisions() == waited) {
          break;
        }
        Thread.sleep(50);
      }
      synchronized (flusherBatchesBeat) {
        flusherBatchesBeat.clear();
      }
      for (int k = 0; k < 12; k++) {
        assertThat(node.tryAcquire("k" + k)).isTrue();
      }
      // (admitted under the node's allowance: the next sync sends them, a batch each)
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (System.nanoTime() < deadline) {
        synchronized (flusherBatchesBeat) {
          if (flusherBatchesBeat.size() >= 12) {
            break;
          }
        }
        Thread.sleep(20);
      }
      synchronized (flusherBatchesBeat) {
        assertThat(flusherBatchesBeat).as("the flusher's batches").hasSizeGreaterThanOrEqualTo(12);
        long beating = flusherBatchesBeat.stream().filter(b -> b).count();
        assertThat(beating).as("batches carrying a beat: %s", flusherBatchesBeat).isGreaterThanOrEqualTo(4);
      }
    } finally {
      answers.shutdownNow();
    }
  }
}
