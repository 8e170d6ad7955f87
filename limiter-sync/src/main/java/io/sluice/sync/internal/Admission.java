package io.sluice.sync.internal;

import io.sluice.node.Decision;
import io.sluice.sync.SyncedLimiter;
import java.util.concurrent.CompletableFuture;

/**
 * How one {@link SyncedLimiter} decides in its mode, chosen once in its constructor: exact mode's
 * scripts ({@link ExactAdmission}, batch size 1), a batched bucket's token claims
 * ({@link TokenAdmission}), or a window limit's views ({@link WindowAdmission}: claims, regional shares
 * or reservation grants, which {@link WindowDecisions} and the flusher tell apart by the view's state).
 * {@link LimiterCore} checks a request, reads whether the breaker keeps the store out, and hands the
 * decision to the mode; each mode also decides what the failure policy does and what
 * {@link SyncedLimiter#release} gives back.
 *
 * <p>Concurrency: no state of its own; called on deciding threads at once.
 */
abstract class Admission {
  /**
   * A decision on the caller's thread, which may wait for the store (at most a call's timeout);
   * {@code fallback}: the breaker keeps the store out, the failure policy decides.
   */
  abstract Decision decide(String key, long cost, int answer, long now, boolean fallback);

  /**
   * The decision where it needs no store call and no wait, on the caller's thread; null, having decided
   * nothing, where it would (see {@link SyncedLimiter#acquireWithoutWaiting}).
   */
  abstract Decision decideNow(String key, long cost, int answer, long now, boolean fallback);

  /** The decision without blocking the caller (see {@link SyncedLimiter#acquireAsync}). */
  CompletableFuture<Decision> decideAsync(String key, long cost, int answer, long now, boolean fallback,
      LimiterCore router) {
    Decision d = decideNow(key, cost, answer, now, fallback);
    return d != null ? CompletableFuture.completedFuture(d) : handOver(key, cost, answer, now, router);
  }

  /** The failure policy's decision, without asking the store. */
  abstract Decision fallbackDecision(String key, long cost, int answer, long now);

  /** Takes back the permits of an allowed decision of this limiter (see {@link SyncedLimiter#release}). */
  abstract void release(String key, long cost, Decision acquired);

  /**
   * A decision that waits for the store, made by {@link LimiterCore#decide} on a waiting thread; when
   * too many are in hand already, the failure policy's, at once (see {@link SyncedLimiter#acquireAsync}).
   */
  final CompletableFuture<Decision> handOver(String key, long cost, int answer, long now, LimiterCore router) {
    CompletableFuture<Decision> d = WaitingThreads.submit(() -> router.decide(key, cost, answer));
    if (d != null) {
      return d;
    }
    return CompletableFuture.completedFuture(fallbackDecision(key, cost, answer, now));
  }
}
