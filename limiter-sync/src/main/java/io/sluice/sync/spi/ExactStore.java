package io.sluice.sync.spi;

import io.sluice.node.Limit;
import java.util.concurrent.CompletionStage;

/**
 * Exact mode (batch size 1): every decision is one atomic check-and-take in the shared store, with
 * the same semantics as the in-process algorithm of the limit (see limiter-node's kernels). Nothing
 * is batched and nothing over-admits, at the price of one store call per decision.
 *
 * <p>Time is the caller's clock, in microseconds since the epoch, never the store's: each node passes
 * its own, and a node whose clock is a little behind the newest time the store has seen for a key is
 * counted at that newer time. Windows are aligned to the epoch.
 */
public interface ExactStore extends AutoCloseable {

  /**
   * Takes {@code cost} permits of {@code limit} for {@code key} if the limit allows it now. The
   * answer is the algorithm's own: the limit's mode (hard, soft, shadow) is not applied here.
   *
   * @throws IllegalArgumentException (at once, not through the stage) for a null limit, a null or
   *     empty key ({@code key:}), a cost outside 1..capacity ({@code cost:}), a time outside
   *     0..2^52 us ({@code nowMicros:}), or a limit the store cannot represent exactly (a period that
   *     is not a whole number of microseconds, or a burst too large for its arithmetic); the message
   *     starts with the field
   * @return a stage that completes with the answer, or fails with the store's error or a timeout
   *     (after which the permits may or may not have been taken)
   */
  CompletionStage<ExactResult> acquire(Limit limit, String key, long cost, long nowMicros);

  /**
   * Gives back {@code cost} permits that an allowed {@link #acquire} of the limit took for the key, at
   * {@code nowMicros}, in window {@code window} (its index since the epoch; window limits) — when
   * another limit of the same request denied it. A bucket gets its tokens back (never above full), a
   * window its count less the permits (never below 0). The sliding window log takes nothing back.
   *
   * @throws IllegalArgumentException (at once) for a log, or what {@link #acquire} refuses
   * @return a stage that completes when the store has applied it, or fails with the store's error
   */
  CompletionStage<Void> giveBack(Limit limit, String key, long cost, long nowMicros, long window);

  /**
   * One exact decision of a region's part of a token-bucket global quota ({@link Counter#regionalBucket()}):
   * takes {@code cost} permits from the region's bucket, which refills at the share of the rate the
   * region coordinator gave the region (or the static share, {@link Counter#staticShare()}) and holds
   * {@link Counter#staticBurst()}; the attempt counts as the region's demand (admitted or denied).
   * {@link ExactResult#window()} is the window it counted in.
   *
   * <p>{@code known} is the share record this node last read for the key ({@link ShareRecord#NONE}:
   * none). Where the key holds neither a bucket nor a record while {@code known}'s lease still covers
   * the window, the region's Redis lost the key (a key lives through its lease): the bucket then refills
   * at {@code known}'s share, the share the coordinator counts the region at, not at the static share,
   * and starts empty, not with a fresh burst.
   *
   * @throws IllegalArgumentException (at once) for a counter that is not a regional bucket, a null or
   *     empty key, a cost outside 1..the region's burst, or a time outside 0..2^52 us
   * @throws UnsupportedOperationException where the store keeps no regional quotas (the default)
   */
  default CompletionStage<RegionalDecision> acquireRegional(Counter counter, String key, long cost, long nowMicros,
      ShareRecord known) {
    throw new UnsupportedOperationException("regionalQuota: " + getClass().getSimpleName()
        + " keeps no regional token buckets");
  }

  /**
   * Gives back {@code cost} permits that an allowed {@link #acquireRegional} took in {@code window},
   * when another limit of the same request denied it: the bucket gets them back (never above full), the
   * window's admitted count loses them (never below 0).
   *
   * @throws IllegalArgumentException (at once) for what {@link #acquireRegional} refuses
   * @throws UnsupportedOperationException where the store keeps no regional quotas (the default)
   */
  default CompletionStage<Void> giveBackRegional(Counter counter, String key, long cost, long nowMicros,
      long window) {
    throw new UnsupportedOperationException("regionalQuota: " + getClass().getSimpleName()
        + " keeps no regional token buckets");
  }

  @Override
  void close();
}
