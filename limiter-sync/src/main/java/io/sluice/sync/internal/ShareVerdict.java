package io.sluice.sync.internal;

import io.sluice.sync.internal.WindowDecisions.Judgement;

/**
 * The approximate mode's verdict with shares, where the store keeps no claims (regional quotas, a store
 * of one's own without them; see {@link CountVerdict}): a decision the node's share of what the view
 * leaves cannot pay is denied, with no store call (the next sync may show budget the other nodes left).
 *
 * <p>Concurrency: immutable; every method runs under the view's monitor.
 */
final class ShareVerdict extends CountVerdict {
  ShareVerdict(LimiterSetup l, WindowClaims claims) {
    super(l, claims);
  }

  @Override
  int overTheLimitAsk(KeyView view, Judgement j, long cost) {
    return WindowDecisions.DECIDED;
  }

  @Override
  int unpaid(KeyView view, Judgement j, long need, long cost) {
    return DENIED;
  }

  @Override
  boolean lasting(KeyView view, long now) {
    return false; // (a share is not reserved for this node: its permits are invisible to the others until sent)
  }

  @Override
  boolean cold(KeyView view, long now) {
    return false;
  }
}
