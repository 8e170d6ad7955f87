package io.sluice.sync;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.Ticker;
import io.sluice.sync.WindowDecisions.Judgement;
import io.sluice.sync.spi.ExactStore;

/**
 * Which part of one {@link SyncedLimiter} makes a decision, on the calling thread: a key view's credit
 * (the allocation-free path of {@code tryAcquire}), a batched bucket's token claims, exact mode's
 * script ({@link StoreDecisions}), the failure policy, or a window limit's judgement under the key's
 * monitor ({@link WindowDecisions}). Also the checks every request (and release) takes first.
 *
 * <p>Concurrency: no state of its own; called on deciding threads at once (and on {@link WaitingThreads}
 * for decisions {@link AsyncDecisions} hands over); a window view is judged only under its monitor.
 */
final class DecisionRouter {
  private final Limit limit;
  private final Ticker ticker;
  private final boolean windowed;
  private final boolean credited;
  private final ExactStore exact;
  private final TokenClaims tokens;
  private final StoreCalls calls;
  private final ViewTable views;
  private final FlushQueue queue;
  private final Answers answers;
  /** The decisions one store call makes: exact mode, batched buckets, the failure policy's for buckets and logs. */
  private final StoreDecisions byStore;
  /** A window limit's decisions under its views' monitors. */
  private final WindowDecisions windows;
  /** Whether the limiter is closed: its decisions refuse then. */
  private final Flusher flusher;

  DecisionRouter(LimiterSetup l, FlushQueue queue, Answers answers, StoreDecisions byStore,
      WindowDecisions windows, Flusher flusher) {
    this.limit = l.limit;
    this.ticker = l.ticker;
    this.windowed = l.windowed;
    this.credited = l.credited;
    this.exact = l.exact;
    this.tokens = l.tokens;
    this.calls = l.calls;
    this.views = l.views;
    this.queue = queue;
    this.answers = answers;
    this.byStore = byStore;
    this.windows = windows;
    this.flusher = flusher;
  }

  /** The decision, answered as {@code answer} says ({@link Answers#BARE}, {@link Answers#TOLD}, {@link Answers#UNTOLD}). */
  Decision decide(String key, long cost, int answer) {
    return decide(key, cost, answer, false);
  }

  /** {@code exactTried}: an exact check failed already (a retry on a retired view must not repeat it). */
  private Decision decide(String key, long cost, int answer, boolean exactTried) {
    checkRequest(key, cost);
    checkOpen();
    long now = ticker.read();
    if (answer == Answers.BARE && credited) {
      KeyView known = views.get(key);
      int paid = known != null && !storeDown() ? known.takeCredit(now, cost) : KeyView.UNPAID;
      if (paid != KeyView.UNPAID) {
        if (paid == KeyView.PAID_SYNC) {
          queue.requestSync();
        }
        return answers.allowedBare();
      }
    }
    boolean fallback = storeDown();
    if (tokens != null && !fallback) {
      Decision d = byStore.onTokens(key, cost, answer, now);
      if (d != null) {
        return d;
      }
      fallback = true; // the store failed this decision: the policy decides it, the breaker counts it
    }
    if (exact != null && !fallback && !exactTried) {
      Decision d = byStore.exactly(key, cost, answer, now);
      if (d != null) {
        return d;
      }
      fallback = true; // the store failed this decision: the policy decides it, the breaker counts it
    }
    if (!windowed) {
      return byStore.fallbackDecision(key, cost, answer);
    }
    return decideWindow(key, cost, answer, now, fallback || exactTried);
  }

  /**
   * {@link #decide}, or null where a window limit's decision would wait for the answer to a flush that
   * gives this node's claim on the key up (see {@link SyncedLimiter#acquireUnlessAwaitingRelease}).
   */
  Decision decideUnlessAwaitingRelease(String key, long cost) {
    if (!windowed || exact != null) {
      return decide(key, cost, Answers.TOLD);
    }
    checkRequest(key, cost);
    checkOpen();
    Judgement j = WindowDecisions.judgement(cost, ticker.read(), storeDown());
    j.noReleaseWait = true;
    try {
      Decision d = judgeOnView(key, Answers.TOLD, j);
      if (d != null || j.wouldWait) {
        return d;
      }
    } finally {
      j.inUse = false;
    }
    return decideUnlessAwaitingRelease(key, cost); // (retired meanwhile: decided on its successor)
  }

  /**
   * A window limit's decision, under the key's monitor ({@link WindowDecisions#judge}); a view retired from the
   * table meanwhile is decided on its successor.
   */
  Decision decideWindow(String key, long cost, int answer, long now, boolean fallback) {
    Judgement j = WindowDecisions.judgement(cost, now, fallback);
    try {
      Decision d = judgeOnView(key, answer, j);
      if (d != null) {
        return d;
      }
    } finally {
      j.inUse = false;
    }
    return decide(key, cost, answer, exact != null);
  }

  /**
   * {@code j} judged on the key's view under its monitor, answered as {@code answer} says; null where the
   * view was retired from the table meanwhile or the judgement would wait ({@link Judgement#noReleaseWait}).
   */
  private Decision judgeOnView(String key, int answer, Judgement j) {
    KeyView view = views.viewFor(key);
    synchronized (view) {
      windows.judge(view, j);
    }
    if (j.retired || j.wouldWait) {
      return null;
    }
    if (j.urgent) {
      queue.requestSync();
    }
    return answers.decision(key, j, answer);
  }

  /**
   * The failure policy's decision, without asking the store: a window limit's under its key's monitor,
   * a bucket's or log's by {@link StoreDecisions#fallbackDecision}.
   */
  Decision fallbackDecision(String key, long cost, int answer, long now) {
    return windowed ? decideWindow(key, cost, answer, now, true) : byStore.fallbackDecision(key, cost, answer);
  }

  /**
   * Whether the circuit breaker keeps the store out: the fallback policy decides. (A breaker whose wait
   * is over lets this decision try the store: see {@link StoreCalls#keepsDecisionOut}.)
   */
  boolean storeDown() {
    return calls.keepsDecisionOut();
  }

  /** Refuses a decision of a closed limiter. */
  void checkOpen() {
    if (flusher.closed()) {
      throw new IllegalStateException("limiter " + limit.name() + " is closed");
    }
  }

  /** A key and cost a decision (or a release) of this limit can take. */
  void checkRequest(String key, long cost) {
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("key: must not be null or empty");
    }
    if (cost < 1 || cost > limit.capacity()) {
      throw new IllegalArgumentException("cost: must be between 1 and the capacity " + limit.capacity()
          + " of limit " + limit.name() + ", got " + cost);
    }
  }
}
