package io.sluice.node;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A limit enforced per key: the one interface of the in-process {@link RateLimiter} and of the
 * distributed limiters built on it (limiter-sync's {@code SyncedLimiter}, one limit shared by every
 * node through a store), so that the same {@link Rules} run in one process or across many (see
 * {@link RequestLimiter.Builder#limiters}). Implementations are thread-safe.
 */
public interface KeyedLimiter extends AutoCloseable {
  /** The limit this limiter enforces. */
  Limit limit();

  /** Takes one permit for the key if the limit allows it. */
  default boolean tryAcquire(String key) {
    return tryAcquire(key, 1);
  }

  /**
   * Takes {@code cost} permits for the key if the limit allows it. Soft and shadow limits always
   * answer true (and count the breach).
   *
   * @throws IllegalArgumentException if the key is null or empty, or the cost is below 1 or above
   *     the limit's capacity
   */
  boolean tryAcquire(String key, long cost);

  /** {@link #acquire(String, long)} for one permit. */
  default Decision acquire(String key) {
    return acquire(key, 1);
  }

  /** Takes {@code cost} permits for the key if the limit allows it, and tells the whole decision. */
  Decision acquire(String key, long cost);

  /**
   * {@link #acquire(String, long)} for a caller that must not block, such as an event loop: the
   * decision as a stage. A decision that needs no store call completes before this returns, on the
   * caller's thread (the stage is already complete); one that waits for a store completes later, on
   * another thread, and the caller's thread never waits for it. The stage never completes
   * exceptionally for a store failure: the limiter's failure policy decides as it does for {@link
   * #acquire}. The default decides in process at once: it is for limiters that never wait, such as
   * {@link RateLimiter} (a distributed limiter overrides it).
   *
   * @throws IllegalArgumentException as {@link #tryAcquire(String, long)}, before anything is decided
   */
  default CompletionStage<Decision> acquireAsync(String key, long cost) {
    return CompletableFuture.completedFuture(acquire(key, cost));
  }

  /**
   * {@link #acquireAsync(String, long)} with a soft or shadow breach counted but not told yet, as
   * {@link #acquireUntold} (for {@link RequestLimiter#checkIfAnyAppliesAsync}).
   */
  default CompletionStage<Decision> acquireUntoldAsync(String key, long cost) {
    return CompletableFuture.completedFuture(acquireUntold(key, cost));
  }

  /**
   * {@link #acquire(String, long)} for a caller that decides several limits for one request
   * ({@link RequestLimiter}): a soft or shadow limit's breach is counted, but not yet told to the
   * limiter's listener; the caller tells it ({@link #tellBreach}) once no other limit denied the
   * request, so that a listener hears only of breaches by requests that went on. The default acquires
   * and tells at once.
   */
  default Decision acquireUntold(String key, long cost) {
    return acquire(key, cost);
  }

  /**
   * Tells the limiter's listener of a breach that {@link #acquireUntold} decided and did not tell.
   * The default tells nothing (its {@code acquireUntold} told already).
   */
  default void tellBreach(String key, Decision breach) {
  }

  /**
   * Gives back the {@code cost} permits that {@code acquired}, an allowed decision of this limiter for
   * the key, took and the request did not use (another of its limits denied it), so that a denied
   * request costs this limit nothing. Permits of a window gone by are not given back; a distributed
   * limiter whose store has already counted them reuses them for its next admissions of the key in the
   * window instead.
   */
  void release(String key, long cost, Decision acquired);

  /** Releases what the limiter holds (a distributed one flushes what it admitted); the default holds nothing. */
  @Override
  default void close() {
  }
}
