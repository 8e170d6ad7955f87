package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.node.RequestContext;
import io.sluice.node.RequestLimiter;
import io.sluice.node.Rule;
import io.sluice.node.Rules;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link SyncedLimiter#acquireAsync}: the same decisions as {@link SyncedLimiter#acquire} in every mode
 * (a differential run over the same requests), a caller that never waits for the store (the stage
 * comes back before the store answers), the timeout, breaker and failure policy on that path, and
 * many callers at once within the limit.
 */
class AsyncAcquireTest {
  private static final Duration MINUTE = Duration.ofMinutes(1);
  private final ExecutorService answerThread = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "store-answers");
    t.setDaemon(true);
    return t;
  });
  private final List<AutoCloseable> open = new ArrayList<>();

  private final List<AnswerLaterStore> gates = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    gates.forEach(AnswerLaterStore::openGate); // (so that closing limiters flush without waiting their timeouts)
    for (AutoCloseable c : open) {
      c.close();
    }
    answerThread.shutdownNow();
  }

  // ------------------------------------------------------------------ the same decisions

  @Test
  void fixedWindowBatched() throws Exception {
    sameDecisions(Limit.fixedWindow("api").limit(50).window(MINUTE).build(), b -> b.batchSize(10));
  }

  @Test
  void slidingWindowBatched() throws Exception {
    sameDecisions(Limit.slidingWindowCounter("api").limit(50).window(MINUTE).build(), b -> b.batchSize(10));
  }

  @Test
  void fixedWindowExact() throws Exception {
    sameDecisions(Limit.fixedWindow("api").limit(50).window(MINUTE).build(), b -> b.batchSize(1));
  }

  @Test
  void slidingWindowExact() throws Exception {
    sameDecisions(Limit.slidingWindowCounter("api").limit(50).window(MINUTE).build(), b -> b.batchSize(1));
  }

  @Test
  void fixedWindowReservation() throws Exception {
    sameDecisions(Limit.fixedWindow("api").limit(50).window(MINUTE).build(), b -> b.batchSize(10).reservation());
  }

  @Test
  void tokenBucketExact() throws Exception {
    sameDecisions(Limit.tokenBucket("api").capacity(20).refill(20, MINUTE).build(), b -> b);
  }

  @Test
  void tokenBucketClaimed() throws Exception {
    sameDecisions(Limit.tokenBucket("api").capacity(20).refill(20, MINUTE).build(), b -> b.batchSize(10));
  }

  @Test
  void slidingLog() throws Exception {
    sameDecisions(Limit.slidingWindowLog("api").limit(20).window(MINUTE).build(), b -> b);
  }

  /**
   * Two nodes on one store, three times: one pair decides every request with {@code acquire}, another,
   * on a store of its own, with {@code acquireAsync}, and a third, on a third store, with
   * {@code acquireWithoutWaiting} and, where that answers null, {@code acquire} (as the Envoy service
   * does); each request to the same node at the same moment, with the same syncs. Every decision must
   * match, field by field (the async pair's store answers on another thread, so its claims are handed
   * over and its exact checks completed there).
   */
  private void sameDecisions(Limit limit, Function<SyncedLimiter.Builder, SyncedLimiter.Builder> modeOnly)
      throws Exception {
    // (calls that take long are not what this compares: with the default claim timeout of 200 ms, a
    // lease answer the answering thread of a loaded machine (CI beside other runs) sent late left the
    // async pair to its failure policy, and a decision's remaining differed by one)
    Function<SyncedLimiter.Builder, SyncedLimiter.Builder> mode = b -> modeOnly.apply(
        b.claimTimeout(Duration.ofSeconds(30)).flushTimeout(Duration.ofSeconds(30)));
    for (long seed = 1; seed <= 3; seed++) {
      ManualTicker syncTicker = new ManualTicker(Duration.ofHours(490_000).toNanos());
      ManualTicker asyncTicker = new ManualTicker(Duration.ofHours(490_000).toNanos());
      ManualTicker nowTicker = new ManualTicker(Duration.ofHours(490_000).toNanos());
      MemoryStore syncStore = new MemoryStore();
      AnswerLaterStore asyncStore = AnswerLaterStore.answeringOn(new MemoryStore(), answerThread);
      SyncedLimiter[] sync = {node(limit, syncStore, "a", syncTicker, mode), node(limit, syncStore, "b", syncTicker, mode)};
      SyncedLimiter[] async = {node(limit, asyncStore, "a", asyncTicker, mode),
          node(limit, asyncStore, "b", asyncTicker, mode)};
      MemoryStore nowStore = new MemoryStore();
      SyncedLimiter[] now = {node(limit, nowStore, "a", nowTicker, mode), node(limit, nowStore, "b", nowTicker, mode)};
      int decidedNow = 0;
      SplittableRandom r = new SplittableRandom(seed);
      int waited = 0;
      for (int i = 0; i < 3_000; i++) {
        // a few hot keys and many cold ones; now and then a larger cost
        String key = "k" + (int) (30 * Math.pow(r.nextDouble(), 3));
        long cost = r.nextInt(10) == 0 ? 3 : 1;
        int n = r.nextInt(2);
        Decision expected = sync[n].acquire(key, cost);
        CompletableFuture<Decision> stage = async[n].acquireAsync(key, cost).toCompletableFuture();
        if (!stage.isDone()) {
          waited++;
        }
        Decision actual = stage.get(10, TimeUnit.SECONDS);
        assertThat(fields(actual)).as("seed %d, request %d (%s x%d on node %d)", seed, i, key, cost, n)
            .isEqualTo(fields(expected));
        Decision withoutWaiting = now[n].acquireWithoutWaiting(key, cost);
        if (withoutWaiting != null) {
          decidedNow++;
        } else {
          withoutWaiting = now[n].acquire(key, cost);
        }
        assertThat(fields(withoutWaiting)).as("without waiting: seed %d, request %d (%s x%d on node %d)", seed, i,
            key, cost, n).isEqualTo(fields(expected));
        long step = (long) (r.nextDouble() * limit.periodNanos() / 150);
        syncTicker.advanceNanos(step);
        asyncTicker.advanceNanos(step);
        nowTicker.advanceNanos(step);
        if (i % 40 == 39) {
          for (int k = 0; k < 2; k++) {
            sync[k].syncNow();
            async[k].syncNow();
            now[k].syncNow();
          }
        }
      }
      // the async pair asked its store (else this compared only local decisions): as many decisions as
      // the sync pair. (Whether an answer was back before acquireAsync returned is a race with the
      // answering thread, which a loaded machine can let win every time: counted, not asserted.)
      assertThat(async[0].waitedDecisions() + async[1].waitedDecisions())
          .as("async decisions that asked the store (%d not answered when acquireAsync returned)", waited)
          .isPositive()
          .isEqualTo(sync[0].waitedDecisions() + sync[1].waitedDecisions());
      assertThat(now[0].waitedDecisions() + now[1].waitedDecisions())
          .as("decisions that waited after acquireWithoutWaiting answered null (%d decided without waiting)", decidedNow)
          .isEqualTo(sync[0].waitedDecisions() + sync[1].waitedDecisions());
    }
  }

  private static String fields(Decision d) {
    return d.outcome() + " remaining=" + d.remaining() + " retryAfter=" + d.retryAfterNanos() + " reset="
        + d.resetNanos() + " window=" + d.window();
  }

  // ------------------------------------------------------------------ the caller never waits

  @Test
  void exactModeReturnsBeforeTheStoreAnswers() throws Exception {
    AnswerLaterStore store = gated();
    SyncedLimiter node = node(Limit.fixedWindow("api").limit(2).window(MINUTE).build(), store, "a",
        new ManualTicker(Duration.ofHours(490_000).toNanos()), b -> b.batchSize(1).flushTimeout(Duration.ofSeconds(30)));
    List<CompletableFuture<Decision>> stages = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      stages.add(node.acquireAsync("k", 1).toCompletableFuture());
    }
    // three scripts sent, none answered: no stage done, and this thread was never held
    assertThat(store.held()).isEqualTo(3);
    assertThat(stages).noneMatch(CompletableFuture::isDone);
    assertThat(store.release()).isEqualTo(3);
    assertThat(stages.stream().map(s -> s.getNow(null).allowed()).toList()).containsExactly(true, true, false);
    assertThat(node.waitedDecisions()).isEqualTo(3);
    assertThat(node.storeFailures()).isZero();
  }

  @Test
  void aColdKeyIsHandedOverAndAKeyWhoseClaimPaysIsDecidedAtOnce() throws Exception {
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    AnswerLaterStore store = gated();
    SyncedLimiter node = node(Limit.fixedWindow("api").limit(1_000).window(MINUTE).build(), store, "a", ticker,
        b -> b.batchSize(100).claimTimeout(Duration.ofSeconds(30)).flushTimeout(Duration.ofSeconds(30)));
    // a cold key: its decision asks the store for a claim, on a waiting thread; this one goes on
    CompletableFuture<Decision> cold = node.acquireAsync("k", 1).toCompletableFuture();
    awaitHeld(store, 1);
    assertThat(cold).isNotDone();
    // another decision on the key while that call holds its monitor: handed over too, not waited for here
    CompletableFuture<Decision> second = node.acquireAsync("k", 1).toCompletableFuture();
    assertThat(second).isNotDone();
    while (!(cold.isDone() && second.isDone())) {
      store.release();
      Thread.onSpinWait();
    }
    assertThat(cold.get().allowed()).isTrue();
    assertThat(second.get().allowed()).isTrue();
    // make the key busy: a claim ahead of its demand, then decisions that claim pays for, at once
    for (int i = 0; i < 50; i++) {
      ticker.advance(Duration.ofMillis(20));
      CompletableFuture<Decision> d = node.acquireAsync("k", 1).toCompletableFuture();
      while (!d.isDone()) {
        store.release();
        Thread.onSpinWait();
      }
      if (i % 5 == 4) {
        CompletableFuture<Boolean> sync = CompletableFuture.supplyAsync(node::syncNow);
        while (!sync.isDone()) {
          store.release();
          Thread.onSpinWait();
        }
      }
    }
    int sent = store.sent();
    long waited = node.waitedDecisions();
    CompletableFuture<Decision> paid = node.acquireAsync("k", 1).toCompletableFuture();
    assertThat(paid).isCompletedWithValueMatching(Decision::allowed);
    assertThat(store.sent()).as("store calls for a decision its claim pays").isEqualTo(sent);
    assertThat(node.waitedDecisions()).isEqualTo(waited);
  }

  @Test
  void theCallTimeoutAndTheFailurePolicyDecideAStoreThatNeverAnswers() throws Exception {
    for (StoreFailurePolicy policy : List.of(StoreFailurePolicy.FAIL_OPEN, StoreFailurePolicy.FAIL_CLOSED)) {
      // exact mode waits the flush timeout; a claim, the claim timeout
      for (long batch : new long[] {1, 100}) {
        AnswerLaterStore store = gated(); // never released
        SyncedLimiter node = node(Limit.fixedWindow("api").limit(1_000).window(MINUTE).build(), store, "a",
            new ManualTicker(Duration.ofHours(490_000).toNanos()), b -> b.batchSize(batch).onStoreFailure(policy)
                .claimTimeout(Duration.ofMillis(50)).flushTimeout(Duration.ofMillis(100)));
        Decision d = node.acquireAsync("k", 1).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(d.allowed()).as("%s, batch %d", policy, batch).isEqualTo(policy == StoreFailurePolicy.FAIL_OPEN);
        assertThat(node.storeFailures()).as("the breaker and the meters heard of it").isEqualTo(1);
        assertThat(node.storeBreaker().failedCalls()).isEqualTo(1);
        assertThat(node.fallbackDecisions()).isEqualTo(1);
      }
    }
  }

  @Test
  void anOpenBreakerLetsThePolicyDecideAtOnceWithoutAStoreCall() {
    for (long batch : new long[] {1, 100}) {
      AnswerLaterStore store = gated();
      SyncedLimiter node = node(Limit.fixedWindow("api").limit(1_000).window(MINUTE).build(), store, "a",
          new ManualTicker(Duration.ofHours(490_000).toNanos()), b -> b.batchSize(batch)
              .onStoreFailure(StoreFailurePolicy.FAIL_CLOSED).flushTimeout(Duration.ofMillis(100)));
      node.storeBreaker().forceOpen();
      CompletableFuture<Decision> d = node.acquireAsync("k", 1).toCompletableFuture();
      assertThat(d).isCompletedWithValueMatching(x -> !x.allowed());
      assertThat(store.sent()).isZero();
      assertThat(node.fallbackDecisions()).isEqualTo(1);
    }
  }

  // ------------------------------------------------------------------ many callers at once

  @Test
  void manyCallersAtOnceInExactModeAdmitExactlyTheLimit() throws Exception {
    MemoryStore memory = new MemoryStore();
    AnswerLaterStore store = AnswerLaterStore.answeringOn(memory, answerThread);
    Limit limit = Limit.fixedWindow("api").limit(300).window(MINUTE).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    SyncedLimiter node = node(limit, store, "a", ticker, b -> b.batchSize(1).flushTimeout(Duration.ofSeconds(30)));
    List<CompletableFuture<Decision>> all = fire(4, 200, i -> node.acquireAsync("k", 1));
    long admitted = admitted(all);
    assertThat(admitted).isEqualTo(300);
    long w = Math.floorDiv(ticker.read(), MINUTE.toNanos());
    assertThat(memory.count("api", "k", w)).isEqualTo(300);
  }

  @Test
  void manyCallersOnThreeNodesNeverPassTheLimitAndTheStoreCountsEveryAdmission() throws Exception {
    MemoryStore memory = new MemoryStore();
    AnswerLaterStore store = AnswerLaterStore.answeringOn(memory, answerThread);
    Limit limit = Limit.fixedWindow("api").limit(200).window(MINUTE).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    SyncedLimiter[] nodes = new SyncedLimiter[3];
    for (int n = 0; n < 3; n++) {
      nodes[n] = node(limit, store, "n" + n, ticker, b -> b.batchSize(20).activeNodes(() -> 3)
          .claimTimeout(Duration.ofSeconds(30)).flushTimeout(Duration.ofSeconds(30)));
    }
    String[] keys = {"a", "b", "c", "d"};
    List<CompletableFuture<Decision>> all = fire(4, 400, i -> nodes[i % 3].acquireAsync(keys[(i / 3) % 4], 1));
    long[] perKey = new long[4];
    for (int i = 0; i < all.size(); i++) {
      if (all.get(i).get(30, TimeUnit.SECONDS).allowed()) {
        perKey[(ordinals.get(i) / 3) % 4]++;
      }
    }
    for (SyncedLimiter n : nodes) {
      assertThat(n.flushAll()).isTrue();
    }
    long w = Math.floorDiv(ticker.read(), MINUTE.toNanos());
    for (int k = 0; k < 4; k++) {
      assertThat(perKey[k]).as("admitted of key %s", keys[k]).isBetween(1L, 200L);
      assertThat(memory.count("api", keys[k], w)).as("counted of key %s", keys[k]).isEqualTo(perKey[k]);
    }
  }

  /** The ordinal of each stage {@link #fire} returned, in its order. */
  private final List<Integer> ordinals = new ArrayList<>();

  /**
   * {@code threads} threads, each sending {@code each} decisions without waiting for any answer; every
   * stage, once all are sent (their ordinals in {@link #ordinals}).
   */
  private List<CompletableFuture<Decision>> fire(int threads, int each,
      java.util.function.IntFunction<CompletionStage<Decision>> decide) throws Exception {
    List<List<CompletableFuture<Decision>>> perThread = new ArrayList<>();
    List<Thread> started = new ArrayList<>();
    java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
    for (int t = 0; t < threads; t++) {
      List<CompletableFuture<Decision>> mine = new ArrayList<>();
      perThread.add(mine);
      int first = t * each;
      Thread thread = new Thread(() -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int i = 0; i < each; i++) {
          mine.add(decide.apply(first + i).toCompletableFuture());
        }
      });
      thread.start();
      started.add(thread);
    }
    go.countDown();
    for (Thread t : started) {
      t.join();
    }
    List<CompletableFuture<Decision>> all = new ArrayList<>();
    ordinals.clear();
    for (int t = 0; t < threads; t++) {
      all.addAll(perThread.get(t));
      for (int i = 0; i < each; i++) {
        ordinals.add(t * each + i);
      }
    }
    return all;
  }

  private static long admitted(List<CompletableFuture<Decision>> all) throws Exception {
    long n = 0;
    for (CompletableFuture<Decision> d : all) {
      if (d.get(30, TimeUnit.SECONDS).allowed()) {
        n++;
      }
    }
    return n;
  }

  // ------------------------------------------------------------------ under a request limiter

  @Test
  void aRequestLimiterDecidesAsyncAsItDoesSyncAndGivesBackWhatADenialTook() throws Exception {
    MemoryStore syncStore = new MemoryStore();
    AnswerLaterStore asyncStore = AnswerLaterStore.answeringOn(new MemoryStore(), answerThread);
    ManualTicker syncTicker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    ManualTicker asyncTicker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    Limit perIp = Limit.fixedWindow("per-ip").limit(7).window(MINUTE).build();
    Limit perKey = Limit.fixedWindow("per-key").limit(4).window(MINUTE).build();
    Rules rules = Rules.builder()
        .always(Rule.of(perIp, "ip"), Rule.of(perKey, "api-key"))
        .build();
    RequestLimiter sync = RequestLimiter.builder(rules)
        .limiters(l -> node(l, syncStore, "a", syncTicker, b -> b.batchSize(l == perKey ? 1 : 10))).build();
    RequestLimiter async = RequestLimiter.builder(rules)
        .limiters(l -> node(l, asyncStore, "a", asyncTicker, b -> b.batchSize(l == perKey ? 1 : 10))).build();
    open.add(sync);
    open.add(async);
    SplittableRandom r = new SplittableRandom(7);
    for (int i = 0; i < 40; i++) {
      RequestContext request = RequestContext.builder().endpoint("GET", "/")
          .identity("ip", "10.0.0." + r.nextInt(2)).identity("api-key", "key" + r.nextInt(3)).build();
      Decision expected = sync.checkIfAnyApplies(request, 1);
      Decision actual = async.checkIfAnyAppliesAsync(request, 1).toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertThat(fields(actual) + " " + actual.limit().name() + " " + actual.parts().stream().map(AsyncAcquireTest::fields).toList())
          .as("request %d", i).isEqualTo(fields(expected) + " " + expected.limit().name() + " "
              + expected.parts().stream().map(AsyncAcquireTest::fields).toList());
      syncTicker.advance(Duration.ofMillis(50));
      asyncTicker.advance(Duration.ofMillis(50));
    }
  }

  // ------------------------------------------------------------------ helpers

  private SyncedLimiter node(Limit limit, io.sluice.sync.spi.CounterStore store, String name, ManualTicker ticker,
      Function<SyncedLimiter.Builder, SyncedLimiter.Builder> mode) {
    SyncedLimiter l = mode.apply(SyncedLimiter.builder(limit, store).nodeId(name).ticker(ticker).autoSync(false)
        .activeNodes(() -> 2).syncInterval(Duration.ofSeconds(1))).build();
    open.add(0, l);
    return l;
  }

  private AnswerLaterStore gated() {
    AnswerLaterStore store = AnswerLaterStore.gated(new MemoryStore());
    gates.add(store);
    return store;
  }

  private static void awaitHeld(AnswerLaterStore store, int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (store.held() < n && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertThat(store.held()).isEqualTo(n);
  }
}
