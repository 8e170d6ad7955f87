package io.sluice.sync.internal;

import io.sluice.node.Algorithm;
import io.sluice.node.Limit;
import io.sluice.node.Mode;
import io.sluice.node.RateLimiter;
import io.sluice.node.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;

/**
 * A bucket's or log's LOCAL_SHARE while the store fails: this node's even part of the limit (the
 * burst and the rate, or the log's limit, divided by the nodes the registry counts) in an in-process
 * limiter of its own, which starts full. One part at a time, kept while in use and for the time the
 * limit takes to be whole again after (its quota window), so that neither a store that flaps nor a
 * node count that changes hands out a fresh burst; then built anew for the nodes counted then.
 *
 * <p>Concurrency: the part in use sits in an {@link AtomicReference}; threads that race to build a new
 * one all use the winner's. Its last use is written without a lock (any recent time keeps it).
 */
final class LocalShares {
  private final Limit limit;
  private final Ticker ticker;
  private final int maxKeys;
  private final IntSupplier nodes;
  private final AtomicReference<Part> current = new AtomicReference<>();

  LocalShares(Limit limit, Ticker ticker, int maxKeys, IntSupplier nodes) {
    this.limit = limit;
    this.ticker = ticker;
    this.maxKeys = maxKeys;
    this.nodes = nodes;
  }

  /** The in-process limiter of this node's part now; null when the part cannot be built (the node denies). */
  RateLimiter limiter() {
    long now = ticker.read();
    Part part = current.get();
    if (part != null && now - part.lastUsed < limit.quotaWindowNanos()) {
      part.lastUsed = now;
      return part.limiter;
    }
    RateLimiter limiter;
    try {
      limiter = RateLimiter.builder(part(limit, Math.max(1, nodes.getAsInt()))).ticker(ticker).maxKeys(maxKeys).build();
    } catch (IllegalArgumentException | ArithmeticException e) {
      limiter = null; // a rate so slow that n times its period cannot be built: the node denies instead
    }
    Part fresh = new Part(limiter, now);
    return current.compareAndSet(part, fresh) ? fresh.limiter : current.get().limiter;
  }

  /**
   * The limit's part for one of {@code nodes} nodes, hard: the synced limiter applies the mode. Rounded
   * down, as a window's parts are (WindowFallback): rounded up, three nodes cut off together held 4 each
   * of a bucket of 10 and admitted 12 (LocalShareTest). A limit below the node count has no part (the
   * builder refuses a capacity of 0, and the node denies): no node can tell which of them may admit.
   */
  static Limit part(Limit limit, int nodes) {
    long capacity = limit.capacity() / nodes;
    Limit.Builder b = Limit.builder(limit.name(), limit.algorithm()).mode(Mode.HARD);
    if (limit.algorithm() == Algorithm.SLIDING_WINDOW_LOG) {
      return b.limit(capacity).window(Duration.ofNanos(limit.periodNanos())).build();
    }
    // the same tokens per a period n times as long: an nth of the rate, exactly
    Duration period = Duration.ofNanos(limit.periodNanos()).multipliedBy(nodes);
    b.capacity(capacity);
    return (limit.algorithm() == Algorithm.TOKEN_BUCKET ? b.refill(limit.refillTokens(), period)
        : b.leakRate(limit.refillTokens(), period)).build();
  }

  /** One part: its limiter (null: cannot be built) and when a decision last used it. */
  private static final class Part {
    final RateLimiter limiter;
    volatile long lastUsed;

    Part(RateLimiter limiter, long lastUsed) {
      this.limiter = limiter;
      this.lastUsed = lastUsed;
    }
  }
}
