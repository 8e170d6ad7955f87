package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.IntBinaryOperator;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;

/**
 * A key asked a few times a second, far below a limit per minute, holds a claim that lasts its
 * window once the node has seen it through a window: its decisions stop asking the store. Every
 * decision of such a key used to be a take (a claim counting the decision's permit), so the flusher
 * never synced the key, never measured its rate, and a claim sized by a rate of 0 covered nothing
 * ahead: one store call per decision, minute after minute (the RLS server on 1,000 descriptors sent one
 * script per decision where envoyproxy/ratelimit sends two commands).
 */
class ColdKeyClaimTest {

  @Test
  void aKeyFarBelowItsLimitStopsAskingTheStoreAfterItsFirstWindow() {
    // three minutes on the test's clock, measured from the second
    double perThousand = callsPerThousandOnWarmKeys(3 * 60, 60);
    // (a claim for the rest of the window per key and window, and its refills: 8.5 calls per 1,000)
    assertThat(perThousand).as("store calls per 1,000 decisions after the first minute").isLessThan(50);
  }

  /**
   * The same keys in their first window on the node: once the node has measured a key's rate (its
   * requests over a sync interval or more), a key far below its limit is sized for the rest of the
   * window there too. Judged only for keys seen through a window before, every key of a limit per minute
   * asked the store at nearly every request for its first minute (the sidecar and the RLS server on
   * thousands of keys, each asked a second or two apart, are in that minute for their whole run): 1,000
   * store calls per 1,000 decisions from the 5th second, against 0.3 now.
   */
  @Test
  void aKeyNewToTheNodeStopsAskingTheStoreWithinItsFirstWindow() {
    // 50 s from the start of a minute window, measured from the 5th second
    double perThousand = callsPerThousandOnWarmKeys(50, 5);
    assertThat(perThousand).as("store calls per 1,000 decisions from the 5th second").isLessThan(50);
  }

  /**
   * Keys between far below their limit and near it: half of a sliding window's limit of 1,000 a
   * minute (each of 50 keys asked every 125 ms, 480 a minute), and nine tenths of a fixed window's (every
   * 66 ms, 900 a minute). Not far below (every node at its rate to the window's end would pass half the
   * limit), such a key's claims were sized for two sync intervals of its demand, about one permit, and a
   * sliding window's key asked the store at nearly every decision minute after minute (960 store calls
   * per 1,000 decisions; the RLS server's descriptors at half their limit, 3,000 Redis commands per
   * 1,000 decisions). Now its claims last as long as the key takes, at its rate over all nodes, to
   * spend an eighth of what is free.
   */
  @Test
  void aKeyBetweenFarBelowAndNearItsLimitHoldsClaimsThatLast() {
    Limit sliding = Limit.slidingWindowCounter("mid").limit(1_000).window(Duration.ofMinutes(1)).build();
    Limit fixed = Limit.fixedWindow("mid").limit(1_000).window(Duration.ofMinutes(1)).build();
    // (960 and 14 before, 6.0 and 2.5 with claims that last)
    assertThat(callsPerThousandAfterTheFirstMinute(sliding, 125)).as("half a sliding window's limit").isLessThan(50);
    assertThat(callsPerThousandAfterTheFirstMinute(fixed, 66)).as("nine tenths of a fixed window's").isLessThan(10);
  }

  /**
   * A key asked every 250 ms at a cost of 3,000 under 1,000,000 a minute (720,000 a minute: between far
   * below its limit and near it). How long its claim is kept idle was twice its mean gap between
   * requests, with the gap read from its rate of permits as if each request asked for one: 0.17 ms, so
   * the claim was given up at every sync between two requests, and each request made a store call to
   * take and another to give its claim up (2,000 store calls per 1,000 decisions). Its claim ahead of
   * demand is also at least two requests at their mean cost: one of 1,000 paid for none of them.
   */
  @Test
  void aKeyAtLargeCostsKeepsItsClaimBetweenItsRequests() {
    Limit limit = Limit.fixedWindow("costly").limit(1_000_000).window(Duration.ofMinutes(1)).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    MemoryStore store = new MemoryStore();
    try (SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("n").ticker(ticker).autoSync(false).build()) {
      node.heartbeatNow();
      long callsBefore = 0;
      int decisions = 0;
      for (int ms = 0; ms < 30_000; ms++) {
        ticker.advance(Duration.ofMillis(1));
        if (ms % 250 == 0) {
          assertThat(node.tryAcquire("k", 3_000)).as("far from the limit").isTrue();
          decisions++;
        }
        if (ms % 100 == 0) {
          node.syncNow();
        }
        if (ms == 5_000) {
          callsBefore = store.calls();
          decisions = 0;
        }
      }
      // (2,010 before; 1,000 now: a request's 3,000 permits fill a batch of 100 by themselves and go
      // with the next sync, whose answer renews the claim that pays for the next request)
      assertThat((store.calls() - callsBefore) * 1000.0 / decisions).as("store calls per 1,000 decisions").isLessThan(1_500);
    }
  }

  /**
   * A key at a limit of 1 a minute on a sliding window, in the window after one where nothing was
   * counted, asked now and then on a node that shares it with four others: a request the store denies
   * makes the node a claimant of the window's fading, a part of nothing, since the window before
   * counted nothing. Giving that part up cost a flush after every denied request: two store calls per
   * decision, where one tells the node all it can know.
   */
  @Test
  void aDeniedRequestHoldingAPartOfNothingCostsOneStoreCall() {
    Limit limit = Limit.slidingWindowCounter("once").limit(1).window(Duration.ofMinutes(1)).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    MemoryStore store = new MemoryStore();
    try (SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("n").ticker(ticker).autoSync(false)
        .activeNodes(() -> 5).build()) {
      assertThat(node.tryAcquire("k")).isTrue();
      for (int i = 0; i < 3; i++) {
        ticker.advance(Duration.ofSeconds(15));
        long before = store.calls();
        assertThat(node.tryAcquire("k")).as("the limit is spent in this window").isFalse();
        for (int s = 0; s < 10; s++) {
          ticker.advance(Duration.ofMillis(100));
          node.syncNow();
        }
        assertThat(store.calls() - before).as("store calls for a denied request and the syncs after it").isEqualTo(1);
      }
    }
  }

  /**
   * A fixed window's permits admitted under a claim go to the store once the window is over as a
   * count only ({@link Delta#afterItsWindow()}: on Redis one command, not a read and a write of the
   * key's claims); every permit is counted all the same. Only the plain delta of an ordinary fixed
   * window can go so.
   */
  @Test
  void aFixedWindowsPermitsSentAfterItGoAsACountOnly() {
    Limit limit = Limit.fixedWindow("late").limit(1_000).window(Duration.ofSeconds(1)).build();
    MemoryStore memory = new MemoryStore();
    List<Delta> sent = new ArrayList<>();
    ForwardingStore store = new ForwardingStore(memory) {
      @Override
      public java.util.concurrent.CompletionStage<io.sluice.sync.spi.FlushResult> flush(io.sluice.sync.spi.Batch batch) {
        sent.addAll(batch.deltas());
        return inner.flush(batch);
      }
    };
    ManualTicker ticker = new ManualTicker(1_000 * 1_000_000_000L);
    try (SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("n").ticker(ticker).autoSync(false)
        .activeNodes(() -> 1).build()) {
      for (int i = 0; i < 3; i++) { // a take, then claims that pay: permits the store has not counted
        assertThat(node.tryAcquire("k")).isTrue();
        ticker.advance(Duration.ofMillis(10));
      }
      ticker.advance(Duration.ofSeconds(1)); // the window is over
      sent.clear();
      node.syncNow();
      assertThat(sent).as("what the sync sent").isNotEmpty().allMatch(Delta::isAfterItsWindow);
      assertThat(memory.count("late", "k", 1_000)).as("every permit counted").isEqualTo(3);
    }
    Counter sliding = Counter.of(Limit.slidingWindowCounter("s").limit(10).window(Duration.ofSeconds(1)).build());
    assertThatThrownBy(() -> new Delta(sliding, "k", 1, 1).afterItsWindow())
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("afterItsWindow:");
    Counter fixed = Counter.of(limit);
    assertThatThrownBy(() -> new Delta(fixed, "k", 1, 1).claiming(5, 1).afterItsWindow())
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("afterItsWindow:");
    assertThatThrownBy(() -> new Delta(fixed, "k", 1, 1).afterItsWindow().claiming(5, 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("claiming:");
  }

  /**
   * One node, 50 keys each asked every {@code everyMs} (staggered) for three minutes, a sync every 100
   * ms; every request must be admitted. Store calls per 1,000 decisions after the first minute.
   */
  private static double callsPerThousandAfterTheFirstMinute(Limit limit, int everyMs) {
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    MemoryStore store = new MemoryStore();
    try (SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("n").ticker(ticker).autoSync(false).build()) {
      node.heartbeatNow();
      long admitted = 0;
      long decisions = 0;
      long callsBefore = 0;
      long decisionsBefore = 0;
      for (int ms = 0; ms < 180_000; ms++) {
        ticker.advance(Duration.ofMillis(1));
        for (int k = 0; k < 50; k++) {
          if ((ms + k * 7) % everyMs == 0) {
            admitted += node.tryAcquire("k" + k) ? 1 : 0;
            decisions++;
          }
        }
        if (ms % 100 == 0) {
          node.syncNow();
        }
        if (ms % 1_000 == 0) {
          node.heartbeatIfDue();
        }
        if (ms == 60_000) {
          callsBefore = store.calls();
          decisionsBefore = decisions;
        }
      }
      assertThat(admitted).as("below the limit: every request admitted").isEqualTo(decisions);
      return (store.calls() - callsBefore) * 1000.0 / (decisions - decisionsBefore);
    }
  }

  /**
   * One node, a fixed window of 1,000 a minute, 50 keys each asked every 250 ms (4 a second, 240 a
   * minute: under a quarter of the limit) from the start of a window for {@code seconds}, a sync every
   * 100 ms; every request must be admitted. Store calls per 1,000 decisions from {@code fromSecond}.
   */
  private static double callsPerThousandOnWarmKeys(int seconds, int fromSecond) {
    Limit limit = Limit.fixedWindow("warm").limit(1_000).window(Duration.ofMinutes(1)).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    try (SyncedLimiter node = SyncedLimiter.builder(limit, new MemoryStore()).nodeId("n").ticker(ticker)
        .autoSync(false).build()) {
      node.heartbeatNow();
      long decisionsBefore = 0;
      long callsBefore = 0;
      long admitted = 0;
      long decisions = 0;
      for (int step = 0; step < seconds * 40; step++) {
        ticker.advance(Duration.ofMillis(25));
        for (int k = step % 10; k < 50; k += 10) {
          admitted += node.tryAcquire("k" + k) ? 1 : 0;
          decisions++;
        }
        if (step % 4 == 0) {
          node.syncNow();
        }
        if (step == fromSecond * 40 - 1) {
          decisionsBefore = decisions;
          callsBefore = node.storeCalls();
        }
      }
      assertThat(admitted).as("far below the limit: every request admitted").isEqualTo(decisions);
      return (node.storeCalls() - callsBefore) * 1000.0 / (decisions - decisionsBefore);
    }
  }

  /**
   * Keys asked about once a window on each of three nodes, far below a limit per second (3 a window
   * of 100): a node's first decision on a key in a window has no claim there, and asked the store for
   * one, one call per key, node and window (on Zipf traffic over 1,000 keys, most of the store's
   * calls). With claims ahead a node asks, in that call, for a claim on each of the next windows too,
   * and decides the key there without a call until they run out.
   */
  @Test
  void keysAskedAboutOnceAWindowOnEachNodeClaimAheadInsteadOfAskingEveryWindow() {
    Limit limit = Limit.fixedWindow("ahead").limit(100).window(Duration.ofSeconds(1)).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    MemoryStore store = new MemoryStore();
    List<SyncedLimiter> nodes = nodesCountingEachOther(limit, store, ticker, 3);
    try {
      int keys = 20;
      int windows = 60;
      long[] run = drive(nodes, ticker, keys, windows, 10, 10,
          (ms, i, k) -> (k * 37 + i * 311) % 1_000 / 10 == ms % 1_000 / 10, store::calls);
      long admitted = run[0];
      long decisions = run[1];
      long callsBefore = run[2];
      assertThat(admitted).as("far below the limit: every request admitted").isEqualTo(decisions);
      double perKeyNodeWindow = (double) (store.calls() - callsBefore) / (keys * nodes.size() * (windows - 10));
      // (one claim call per key, node and window without claims ahead: 1.0; with them 0.26, and 0.11
      // since a key claims ahead from its second request on a node)
      assertThat(perKeyNodeWindow).as("store calls per key, node and window after the first ten windows")
          .isLessThan(0.4);
    } finally {
      nodes.forEach(SyncedLimiter::close);
    }
  }

  /**
   * Keys asked a few times a window on each of three nodes, within a quarter of a limit per second (3
   * nodes x 5 a window of 100): too busy for claims on the windows ahead (those hold an eighth of the
   * limit together), so each node's first decision on a key in a window found no claim there and waited for
   * the store's answer, one call per key, node and window. The window's last sync now asks, with the
   * key's flush, for a claim on the next window, and that decision finds it.
   */
  @Test
  void keysAskedAFewTimesAWindowFindAClaimWhenTheirNextWindowStarts() {
    Limit limit = Limit.fixedWindow("next").limit(100).window(Duration.ofSeconds(1)).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    MemoryStore store = new MemoryStore();
    List<SyncedLimiter> nodes = nodesCountingEachOther(limit, store, ticker, 3);
    try {
      int keys = 20;
      int windows = 30;
      // every 200 ms, at an offset of its own per key and node
      long[] run = drive(nodes, ticker, keys, windows, 5, 5, (ms, i, k) -> (ms + k * 35 + i * 55) % 200 == 0,
          () -> nodes.stream().mapToLong(SyncedLimiter::waitedDecisions).sum());
      long admitted = run[0];
      long decisions = run[1];
      long waitedBefore = run[2];
      assertThat(admitted).as("within a quarter of the limit: every request admitted").isEqualTo(decisions);
      long waited = nodes.stream().mapToLong(SyncedLimiter::waitedDecisions).sum() - waitedBefore;
      double perKeyNodeWindow = (double) waited / (keys * nodes.size() * (windows - 5));
      // (1.0 without the next window's claim: each window's first decision on each node; 0.0 with it)
      assertThat(perKeyNodeWindow).as("decisions that waited per key, node and window after the first five windows")
          .isLessThan(0.2);
    } finally {
      nodes.forEach(SyncedLimiter::close);
    }
  }

  /**
   * Keys far below a limit per minute, each asked every three seconds on one of two nodes, the nodes
   * beating to the registry once a second as the flusher thread does. A heartbeat's round sends what
   * claims would have held back, since the call is made anyway; it sent every view that held a claim,
   * with nothing new to count, each a key read and write in the store: 6.5 key updates per decision
   * on Zipf traffic with windows of a minute (the accuracy sweep). Now only views with counts to send.
   */
  @Test
  void aHeartbeatsRoundSendsOnlyTheViewsWithCountsToSend() {
    double perDecision = keyUpdatesPerDecisionAfterTheFirstMinute("minute",
        (ms, k) -> (ms + k * 1_200) % 3_000 == 0 ? (k + ms / 3_000) % 2 : -1);
    // (5.7 while every held view went with each heartbeat's round; 1.0 with only the views that have
    // counts: each decision's permit reaches the store once)
    assertThat(perDecision).as("key updates per decision after the first minute").isLessThan(2.0);
  }

  /**
   * A hundred keys, each asked a few times a second on each of two nodes, a fifth of a
   * limit of a minute, as the sidecar sees 10,000 users: each node's claim pays for its requests for
   * many syncs. The heartbeat's round (once a second) sent every view with counts, each a key read
   * and write, though its claim still had more than it had spent since it was last sent: a key
   * update per key, node and second. Now it carries a view only once that view has spent half of
   * what its claim held at its last send, early enough for its claim to be topped up before it runs
   * out (the accuracy kit on windows of a minute: up to 65% fewer key updates, as many decisions
   * waiting or fewer, store calls within 5% either way).
   */
  @Test
  void aHeartbeatsRoundLeavesViewsWhoseClaimsStillPayForTheirRequests() {
    // (each key every 600 ms on each node, the two nodes 300 ms apart)
    double perDecision = keyUpdatesPerDecisionAfterTheFirstMinute("busy",
        (ms, k) -> (ms + k * 100) % 300 != 0 ? -1 : (ms + k * 100) % 600 == 0 ? 0 : 1);
    System.out.printf("heartbeat's round, views whose claims last: %.3f key updates per decision%n", perDecision);
    // (0.61 while the round carried every view with counts; 0.06 now)
    assertThat(perDecision).as("key updates per decision after the first minute").isLessThan(0.25);
  }

  /**
   * Drives 100 keys of a limit of 1,000 a minute on two nodes for three minutes in steps of 100 ms,
   * each node beating and syncing at every step as its flusher thread would; at each step key k is
   * asked on the node {@code asker} gives for (ms, k), or on none where it gives -1. Every request
   * must be admitted (far below the limit). Answers the store's key updates per decision after the
   * first minute.
   */
  private static double keyUpdatesPerDecisionAfterTheFirstMinute(String limitName, IntBinaryOperator asker) {
    Limit limit = Limit.fixedWindow(limitName).limit(1_000).window(Duration.ofMinutes(1)).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    MemoryStore store = new MemoryStore();
    List<SyncedLimiter> nodes = nodesCountingEachOther(limit, store, ticker, 2);
    try {
      long admitted = 0;
      long decisions = 0;
      long decisionsBefore = 0;
      long updatesBefore = 0;
      for (int ms = 0; ms < 180_000; ms += 100) {
        ticker.advance(Duration.ofMillis(100));
        for (int k = 0; k < 100; k++) {
          int n = asker.applyAsInt(ms, k);
          if (n >= 0) {
            admitted += nodes.get(n).tryAcquire("k" + k) ? 1 : 0;
            decisions++;
          }
        }
        for (SyncedLimiter node : nodes) {
          node.heartbeatIfDue();
          node.syncNow();
        }
        if (ms == 60_000 - 100) {
          decisionsBefore = decisions;
          updatesBefore = store.keyUpdates();
        }
      }
      assertThat(admitted).as("far below the limit: every request admitted").isEqualTo(decisions);
      return (double) (store.keyUpdates() - updatesBefore) / (decisions - decisionsBefore);
    } finally {
      nodes.forEach(SyncedLimiter::close);
    }
  }

  /**
   * A warm key, far below its limit (a fifth of it), asked a few times a second on each of four nodes:
   * each node's claim lasts its window. It used to cost about one store call per decision (898 per
   * 1,000): a mean gap measured over a few sync intervals swung far below the key's rate, so the
   * regular sync gave the claim up between requests, sized the next one to a permit, flushed half of
   * every small claim, and gave up the window's claim at its end with a flush of its own (now a
   * flush at a window's end only sends the permits not sent yet, where there are any).
   */
  @Test
  void aWarmKeyFarBelowItsLimitKeepsItsClaimsThroughTheWindow() {
    Limit limit = Limit.fixedWindow("warm").limit(100).window(Duration.ofSeconds(1)).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    MemoryStore store = new MemoryStore();
    List<SyncedLimiter> nodes = nodesCountingEachOther(limit, store, ticker, 4);
    try {
      Random random = new Random(7);
      double perSecond = 20;
      long next = 0;
      long admitted = 0;
      long decisions = 0;
      long decisionsBefore = 0;
      long callsBefore = 0;
      for (int ms = 1; ms <= 60_000; ms++) {
        ticker.advance(Duration.ofMillis(1));
        while (next <= ms * 1_000_000L) {
          admitted += nodes.get(random.nextInt(nodes.size())).tryAcquire("k") ? 1 : 0;
          decisions++;
          next += (long) (-Math.log(1 - random.nextDouble()) / perSecond * 1e9);
        }
        if (ms % 100 == 0) {
          nodes.forEach(SyncedLimiter::syncNow);
        }
        if (ms % 1_000 == 0) {
          nodes.forEach(SyncedLimiter::heartbeatIfDue);
        }
        if (ms == 10_000) {
          decisionsBefore = decisions;
          callsBefore = store.calls();
        }
      }
      assertThat(admitted).as("far below the limit: every request admitted").isEqualTo(decisions);
      double perThousand = (store.calls() - callsBefore) * 1000.0 / (decisions - decisionsBefore);
      // (511 on the build that fixed it: a claim call at each node's first request in a window, a
      // refill where a claim sized by demand ran out, and the flush of the window's unsent permits
      // after it ends)
      assertThat(perThousand).as("store calls per 1,000 decisions after the first ten windows").isLessThan(600);
    } finally {
      nodes.forEach(SyncedLimiter::close);
    }
  }

  /**
   * A fixed window's permits that its claim covered and the node had not sent reach the store once the
   * window is over (DESIGN: every admitted hit reaches the store exactly once): the store's count of each
   * window equals what the node admitted there, and {@link SyncedLimiter#pending()} is back to 0. (The
   * round before took them as counted in the claim, never sent: ChaosIT's ledger lost hits when its run
   * crossed its window's end.)
   */
  @Test
  void permitsAClaimCoveredReachTheStoreWhenTheirWindowEnds() {
    Limit limit = Limit.fixedWindow("covered").limit(100).window(Duration.ofSeconds(1)).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    MemoryStore store = new MemoryStore();
    try (SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("n").ticker(ticker).autoSync(false).build()) {
      node.heartbeatNow();
      long[] admitted = new long[3];
      long first = Math.floorDiv(ticker.read(), 1_000_000_000L);
      for (int ms = 0; ms < 3_000; ms += 50) {
        ticker.advance(Duration.ofMillis(50));
        long w = Math.floorDiv(ticker.read(), 1_000_000_000L) - first;
        if (w < 2 && ms % 150 == 0) {
          admitted[(int) w] += node.tryAcquire("k") ? 1 : 0;
        }
        if (ms % 100 == 0) {
          node.syncNow();
        }
      }
      assertThat(node.pending()).as("permits not acknowledged, two windows later").isZero();
      for (int w = 0; w < 2; w++) {
        assertThat(store.count("covered", "k", first + w)).as("window %d", w).isEqualTo(admitted[w]);
      }
    }
  }

  /** {@code count} nodes on one store and clock, syncing only when told, each having heard the others beat. */
  /** Whether node {@code node} asks for key {@code key} at millisecond {@code ms} of a {@link #drive} run. */
  private interface Asks {
    boolean at(int ms, int node, int key);
  }

  /**
   * Drives {@code nodes} through {@code windows} windows of a second in steps of {@code stepMs}: each
   * node asks for key k where {@code asks} says so and syncs every 100 ms. Returns the requests
   * admitted, the decisions, and {@code meter} as read after the first {@code warmUpWindows} windows.
   */
  private static long[] drive(List<SyncedLimiter> nodes, ManualTicker ticker, int keys, int windows, int stepMs,
      int warmUpWindows, Asks asks, LongSupplier meter) {
    long admitted = 0;
    long decisions = 0;
    long meterAfterWarmUp = 0;
    for (int ms = 0; ms < windows * 1_000; ms += stepMs) {
      ticker.advance(Duration.ofMillis(stepMs));
      for (int i = 0; i < nodes.size(); i++) {
        for (int k = 0; k < keys; k++) {
          if (asks.at(ms, i, k)) {
            admitted += nodes.get(i).tryAcquire("k" + k) ? 1 : 0;
            decisions++;
          }
        }
        if (ms % 100 == 0) {
          nodes.get(i).syncNow();
        }
      }
      if (ms == warmUpWindows * 1_000 - stepMs) {
        meterAfterWarmUp = meter.getAsLong();
      }
    }
    return new long[] {admitted, decisions, meterAfterWarmUp};
  }

  private static List<SyncedLimiter> nodesCountingEachOther(Limit limit, MemoryStore store, ManualTicker ticker, int count) {
    List<SyncedLimiter> nodes = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      nodes.add(SyncedLimiter.builder(limit, store).nodeId("n" + i).ticker(ticker).autoSync(false).build());
    }
    nodes.forEach(SyncedLimiter::heartbeatNow);
    nodes.forEach(SyncedLimiter::heartbeatNow); // (each now counts them all)
    return nodes;
  }
}
