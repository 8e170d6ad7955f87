package io.sluice.sync.internal;

import io.sluice.node.Decision;

/**
 * A token bucket's or leaky bucket meter's decisions in batched mode: from the tokens the node claimed
 * of the store's bucket ahead ({@link TokenClaims}, through {@link StoreDecisions#onTokens}), and the
 * failure policy's while the store fails ({@link StoreDecisions#fallbackDecision}).
 *
 * <p>Concurrency: no state of its own; called on deciding threads at once.
 */
final class TokenAdmission extends Admission {
  private final StoreDecisions byStore;

  TokenAdmission(StoreDecisions byStore) {
    this.byStore = byStore;
  }

  @Override
  Decision decide(String key, long cost, int answer, long now, boolean fallback) {
    if (!fallback) {
      Decision d = byStore.onTokens(key, cost, answer, now);
      if (d != null) {
        return d;
      }
      // the store failed this decision: the policy decides it, the breaker counts it
    }
    return byStore.fallbackDecision(key, cost, answer);
  }

  @Override
  Decision decideNow(String key, long cost, int answer, long now, boolean fallback) {
    return fallback ? byStore.fallbackDecision(key, cost, answer) : byStore.onTokensWithoutWaiting(key, cost, answer, now);
  }

  @Override
  Decision fallbackDecision(String key, long cost, int answer, long now) {
    return byStore.fallbackDecision(key, cost, answer);
  }

  @Override
  void release(String key, long cost, Decision acquired) {
    // the permits stay spent. Put back into a holding they would be covered by a grant that did not
    // pay for them, and given back to the store they would lower its backlog under other nodes' claims
    // (see TokenClaims#decide): under-admission, never over. A regional bucket's demand no longer
    // counts them as admitted, as exact mode's give-back lowers the window's count
    byStore.tokensReleased(key, cost);
  }
}
