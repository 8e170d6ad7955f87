package io.sluice.benchmarks;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The peer a user writes without a library: one fixed-window counter per key (kept in a
 * {@code ConcurrentHashMap} by the caller), a lock-free long packing the window, counted in
 * {@code System.currentTimeMillis()} seconds, and the count taken in it.
 */
final class NaiveWindowCounter {
  private static final long WINDOW_MILLIS = 1_000;
  private final AtomicLong state = new AtomicLong();
  private final long limit;

  NaiveWindowCounter(long limit) {
    this.limit = Math.min(limit, 0xFFFF_FFFFL);
  }

  boolean tryAcquire() {
    long window = System.currentTimeMillis() / WINDOW_MILLIS;
    for (;;) {
      long v = state.get();
      long count = (v >>> 32) == (window & 0xFFFF_FFFFL) ? v & 0xFFFF_FFFFL : 0;
      if (count >= limit) {
        return false;
      }
      if (state.compareAndSet(v, (window << 32) | (count + 1))) {
        return true;
      }
    }
  }
}
