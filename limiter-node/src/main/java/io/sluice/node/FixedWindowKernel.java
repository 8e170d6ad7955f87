package io.sluice.node;

/**
 * Fixed window: one long per key packing the low 32 bits of the window index (windows aligned to the
 * epoch) and the count taken in it. A thread that read the clock just before a newer window was
 * written counts into the newer window rather than turning the state back.
 */
final class FixedWindowKernel extends Kernel {
  /** Never a valid state: the count half can never be 0xFFFFFFFF because counts are below 2^31. */
  private static final long RETIRED_STATE = -1L;

  private final long window;
  private final long limit;
  private final WindowClock clock;

  FixedWindowKernel(Limit limit) {
    this.window = limit.periodNanos();
    this.limit = limit.capacity();
    this.clock = new WindowClock(window);
  }

  static long pack(long windowIndex, long count) {
    return ((long) (int) windowIndex << 32) | count;
  }

  /**
   * How many windows the stored window is ahead of {@code index}: positive only for a thread that read
   * the clock a little before another one moved to a newer window. A distance beyond 2^30 windows is a
   * key idle long enough for the 32-bit index to wrap, which counts as an old window.
   */
  static int ahead(long packed, long index) {
    int ahead = windowOf(packed) - (int) index;
    return ahead < (1 << 30) ? ahead : -1;
  }

  static int windowOf(long packed) {
    return (int) (packed >>> 32);
  }

  static long countOf(long packed) {
    return packed & 0xFFFF_FFFFL;
  }

  @Override
  KeyState newState(long now) {
    return new LongCell(pack(clock.index(now) - 1, 0));
  }

  @Override
  long tryAcquire(KeyState state, long now, long cost) {
    LongCell cell = (LongCell) state;
    long index = clock.index(now);
    for (;;) {
      long v = cell.value;
      if (v == RETIRED_STATE) {
        return RETIRED;
      }
      int ahead = ahead(v, index);
      long w = ahead > 0 ? index + ahead : index;
      long count = ahead >= 0 ? countOf(v) : 0;
      if (count + cost > limit) {
        return denied((w + 1) * window - now);
      }
      if (cell.cas(v, pack(w, count + cost))) {
        return limit - count - cost;
      }
    }
  }

  private long countNow(long v, long now) {
    if (v == RETIRED_STATE) {
      return 0;
    }
    int ahead = ahead(v, clock.index(now));
    return ahead >= 0 ? countOf(v) : 0;
  }

  @Override
  long remaining(KeyState state, long now) {
    return Math.max(0, limit - countNow(((LongCell) state).value, now));
  }

  @Override
  long resetNanos(KeyState state, long now) {
    return countNow(((LongCell) state).value, now) == 0 ? 0 : clock.start(now) + window - now;
  }

  @Override
  void refund(KeyState state, long now, long cost) {
    LongCell cell = (LongCell) state;
    for (;;) {
      long v = cell.value;
      if (v == RETIRED_STATE || countNow(v, now) == 0) {
        return;
      }
      long next = pack(windowOf(v), Math.max(0, countOf(v) - cost));
      if (cell.cas(v, next)) {
        return;
      }
    }
  }

  @Override
  boolean retireIfAtRest(KeyState state, long now) {
    LongCell cell = (LongCell) state;
    long v = cell.value;
    return v != RETIRED_STATE && countNow(v, now) == 0 && cell.cas(v, RETIRED_STATE);
  }
}
