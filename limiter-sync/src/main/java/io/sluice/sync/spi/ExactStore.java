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

  @Override
  void close();
}
