package io.sluice.sync.internal;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.Outcome;
import io.sluice.node.Ticker;
import io.sluice.sync.SyncedLimiter;
import java.util.concurrent.CompletableFuture;

/**
 * The way into one {@link SyncedLimiter}'s decisions and releases, on the calling thread: the checks
 * every request (and release) takes first, whether the breaker keeps the store out, and the hand-over
 * to the limiter's mode ({@link Admission}, chosen once in its constructor), which decides.
 *
 * <p>Concurrency: no state of its own; called on deciding threads at once (and on {@link WaitingThreads}
 * for decisions handed over by {@link #decideAsync}).
 */
final class DecisionRouter {
  private final Limit limit;
  private final Ticker ticker;
  private final StoreCalls calls;
  private final Admission admission;
  /** Whether the limiter is closed: its decisions refuse then. */
  private final Flusher flusher;

  DecisionRouter(LimiterSetup l, Admission admission, Flusher flusher) {
    this.limit = l.limit;
    this.ticker = l.ticker;
    this.calls = l.calls;
    this.admission = admission;
    this.flusher = flusher;
  }

  /**
   * The decision, answered as {@code answer} says ({@link Answers#BARE}, {@link Answers#TOLD},
   * {@link Answers#UNTOLD}); it may wait for the store.
   */
  Decision decide(String key, long cost, int answer) {
    checkRequest(key, cost);
    checkOpen();
    long now = ticker.read();
    return admission.decide(key, cost, answer, now, storeDown());
  }

  /** The decision where it needs no store call and no wait; else null, having decided nothing. */
  Decision decideNow(String key, long cost, int answer) {
    checkRequest(key, cost);
    checkOpen();
    long now = ticker.read();
    return admission.decideNow(key, cost, answer, now, storeDown());
  }

  /** The decision without blocking the caller: see {@link SyncedLimiter#acquireAsync}. */
  CompletableFuture<Decision> decideAsync(String key, long cost, int answer) {
    checkRequest(key, cost);
    checkOpen();
    long now = ticker.read();
    return admission.decideAsync(key, cost, answer, now, storeDown(), this);
  }

  /**
   * {@link #decide}, or null where a window limit's decision would wait for the answer to a flush that
   * gives this node's claim on the key up (see {@link SyncedLimiter#acquireUnlessAwaitingRelease}).
   */
  Decision decideUnlessAwaitingRelease(String key, long cost) {
    if (!(admission instanceof WindowAdmission)) {
      return decide(key, cost, Answers.TOLD); // (no claims: nothing to wait for)
    }
    checkRequest(key, cost);
    checkOpen();
    long now = ticker.read();
    return ((WindowAdmission) admission).decideUnlessAwaitingRelease(key, cost, now, storeDown());
  }

  /** See {@link SyncedLimiter#release}. */
  void release(String key, long cost, Decision acquired) {
    checkRequest(key, cost);
    if (acquired == null || acquired.outcome() != Outcome.ALLOWED || acquired.limit() != limit) {
      throw new IllegalArgumentException("acquired: must be an allowed decision of this limiter (" + limit.name()
          + "), got " + acquired);
    }
    admission.release(key, cost, acquired);
  }

  /**
   * Whether the circuit breaker keeps the store out: the failure policy decides. (A breaker whose wait
   * is over lets this decision try the store: see {@link StoreCalls#keepsDecisionOut}.)
   */
  private boolean storeDown() {
    return calls.keepsDecisionOut();
  }

  /** Refuses a decision of a closed limiter. */
  private void checkOpen() {
    if (flusher.closed()) {
      throw new IllegalStateException("limiter " + limit.name() + " is closed");
    }
  }

  /** A key and cost a decision (or a release) of this limit can take. */
  private void checkRequest(String key, long cost) {
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("key: must not be null or empty");
    }
    if (cost < 1 || cost > limit.capacity()) {
      throw new IllegalArgumentException("cost: must be between 1 and the capacity " + limit.capacity()
          + " of limit " + limit.name() + ", got " + cost);
    }
  }
}
