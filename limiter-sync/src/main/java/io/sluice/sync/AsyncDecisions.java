package io.sluice.sync;

import io.sluice.node.Decision;
import io.sluice.node.Ticker;
import io.sluice.sync.WindowDecisions.Judgement;
import io.sluice.sync.spi.ExactStore;
import java.util.concurrent.CompletableFuture;

/**
 * The decisions of one {@link SyncedLimiter} that never block the caller ({@link
 * SyncedLimiter#acquireAsync}): made on the caller's thread when no store call is needed, sent
 * without waiting in exact mode, else handed over to {@link WaitingThreads}, where {@link
 * DecisionRouter} makes them as a blocking acquire would.
 *
 * <p>Concurrency: no state of its own; called on deciding threads at once, a window view is judged
 * only under its monitor, and only when no store call holds that monitor.
 */
final class AsyncDecisions {
  private final Ticker ticker;
  private final boolean windowed;
  private final ExactStore exact;
  private final TokenClaims tokens;
  private final ViewTable views;
  private final FlushQueue queue;
  private final Answers answers;
  private final StoreDecisions byStore;
  private final WindowDecisions windows;
  private final DecisionRouter router;

  AsyncDecisions(LimiterSetup l, FlushQueue queue, Answers answers, StoreDecisions byStore,
      WindowDecisions windows, DecisionRouter router) {
    this.ticker = l.ticker;
    this.windowed = l.windowed;
    this.exact = l.exact;
    this.tokens = l.tokens;
    this.views = l.views;
    this.queue = queue;
    this.answers = answers;
    this.byStore = byStore;
    this.windows = windows;
    this.router = router;
  }

  /** {@link DecisionRouter#decide} that never blocks the caller: see {@link SyncedLimiter#acquireAsync}. */
  CompletableFuture<Decision> decideAsync(String key, long cost, int answer) {
    router.checkRequest(key, cost);
    router.checkOpen();
    long now = ticker.read();
    boolean fallback = router.storeDown();
    if (exact != null && !fallback) {
      // (the fallback of a failed exact check makes no store call: decided on the answer's thread)
      return byStore.exactlyAsync(key, cost, answer, now)
          .thenApply(d -> d != null ? d : router.fallbackDecision(key, cost, answer, now));
    }
    Decision d = decideNow(key, cost, answer, now, fallback);
    return d != null ? CompletableFuture.completedFuture(d) : handOver(key, cost, answer, now);
  }

  /**
   * The decision where it needs no store call and no wait, made on the caller's thread; null, having
   * decided nothing, where it would (see {@link SyncedLimiter#acquireWithoutWaiting}).
   */
  Decision decideNow(String key, long cost, int answer) {
    router.checkRequest(key, cost);
    router.checkOpen();
    long now = ticker.read();
    boolean fallback = router.storeDown();
    return exact != null && !fallback ? null : decideNow(key, cost, answer, now, fallback);
  }

  private Decision decideNow(String key, long cost, int answer, long now, boolean fallback) {
    if (tokens != null && !fallback) {
      return byStore.onTokensWithoutWaiting(key, cost, answer, now);
    }
    if (!windowed) {
      return byStore.fallbackDecision(key, cost, answer);
    }
    KeyView view = views.viewFor(key);
    if (view.storeCallUnderway) {
      return null; // (entering its monitor would wait for that call)
    }
    Judgement j = WindowDecisions.judgement(cost, now, fallback);
    j.noWait = true;
    try {
      synchronized (view) {
        windows.judge(view, j);
      }
      if (j.wouldWait) {
        return null;
      }
      if (!j.retired) {
        if (j.urgent) {
          queue.requestSync();
        }
        return answers.decision(key, j, answer);
      }
    } finally {
      j.inUse = false;
    }
    return decideNow(key, cost, answer, ticker.read(), fallback); // (retired meanwhile: decided on its successor)
  }

  /**
   * A decision that waits for the store, made by {@link DecisionRouter#decide} on a waiting thread; when
   * too many are in hand already, the failure policy's, at once (see {@link SyncedLimiter#acquireAsync}).
   */
  private CompletableFuture<Decision> handOver(String key, long cost, int answer, long now) {
    CompletableFuture<Decision> d = WaitingThreads.submit(() -> router.decide(key, cost, answer));
    if (d != null) {
      return d;
    }
    return CompletableFuture.completedFuture(router.fallbackDecision(key, cost, answer, now));
  }
}
