package io.sluice.sync.internal;

import io.sluice.node.Decision;
import java.util.concurrent.CompletableFuture;

/**
 * Exact mode's decisions (batch size 1): one script call of the algorithm's own each
 * ({@link StoreDecisions#exactly}); when the call fails or the breaker keeps the store out, the failure
 * policy's: a window limit's on its key's view ({@code onFailure}, the window mode's), a bucket's or a
 * log's by {@link StoreDecisions#fallbackDecision}. A release gives the permits back to the store.
 *
 * <p>Concurrency: no state of its own; called on deciding threads at once.
 */
final class ExactAdmission extends Admission {
  private final StoreDecisions byStore;
  /** A window limit's failure policy, on its views; null for buckets and logs. */
  private final WindowAdmission onFailure;

  ExactAdmission(StoreDecisions byStore, WindowAdmission onFailure) {
    this.byStore = byStore;
    this.onFailure = onFailure;
  }

  @Override
  Decision decide(String key, long cost, int answer, long now, boolean fallback) {
    if (!fallback) {
      Decision d = byStore.exactly(key, cost, answer, now);
      if (d != null) {
        return d;
      }
      // the store failed this decision: the policy decides it, the breaker counts it
    }
    return fallbackDecision(key, cost, answer, now);
  }

  @Override
  Decision decideNow(String key, long cost, int answer, long now, boolean fallback) {
    return fallback ? fallbackDecision(key, cost, answer, now) : null; // (every check is a script call)
  }

  @Override
  CompletableFuture<Decision> decideAsync(String key, long cost, int answer, long now, boolean fallback,
      LimiterCore router) {
    if (fallback) {
      return CompletableFuture.completedFuture(fallbackDecision(key, cost, answer, now));
    }
    // sent without waiting; the fallback of a failed check makes no store call: decided on the answer's thread
    return byStore.exactlyAsync(key, cost, answer, now)
        .thenApply(d -> d != null ? d : fallbackDecision(key, cost, answer, now));
  }

  @Override
  Decision fallbackDecision(String key, long cost, int answer, long now) {
    return onFailure != null ? onFailure.fallbackDecision(key, cost, answer, now) : byStore.fallbackDecision(key, cost, answer);
  }

  @Override
  void release(String key, long cost, Decision acquired) {
    byStore.giveBackExact(key, cost, acquired);
  }
}
