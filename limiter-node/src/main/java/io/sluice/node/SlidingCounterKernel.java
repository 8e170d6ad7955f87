package io.sluice.node;

import static io.sluice.node.FixedWindowKernel.ahead;
import static io.sluice.node.FixedWindowKernel.countOf;
import static io.sluice.node.FixedWindowKernel.pack;
import static io.sluice.node.FixedWindowKernel.windowOf;

/**
 * Sliding window counter (the production default, as at Cloudflare): the estimate over the window
 * ending now is {@code previous * (W - elapsed) / W + current}. Each key keeps two slots (packed
 * window index and count, as in {@link FixedWindowKernel}), one for even and one for odd windows,
 * so moving to a new window is a single CAS that overwrites the slot of two windows ago.
 *
 * <p>The comparison is done in integers, {@code (current + cost) * W + previous * (W - elapsed) <=
 * limit * W}, with time counted in the smallest unit (ns, us, ms or s) for which
 * {@code 3 * limit * W} fits in a long; elapsed time is rounded down, which weighs the previous window
 * slightly more and so never admits more than the exact formula.
 *
 * <p>The previous slot is read without being locked: a thread still finishing in the previous window
 * may add to it after this thread read it, so the estimate can miss at most those in-flight permits.
 */
final class SlidingCounterKernel extends Kernel {
  private static final long RETIRED_STATE = -1L;

  private final long window;
  private final long limit;
  private final long unit;
  private final long windowUnits;
  private final WindowClock clock;

  SlidingCounterKernel(Limit limit) {
    this.window = limit.periodNanos();
    this.limit = limit.capacity();
    this.unit = unitFor(this.limit, window);
    this.windowUnits = window / unit;
    this.clock = new WindowClock(window);
  }

  /** The time unit in which {@code 3 * limit * window} fits in a long. */
  static long unitFor(long limit, long windowNanos) {
    long unit = 1;
    while (windowNanos / unit > Long.MAX_VALUE / 3 / limit) {
      unit *= 1000;
    }
    return unit;
  }

  @Override
  KeyState newState(long now) {
    long index = clock.index(now);
    // two windows that are both over: the state of a key never seen
    return new PairCell(pack(index - 2 - (index & 1), 0), pack(index - 1 - (index & 1), 0));
  }

  @Override
  long tryAcquire(KeyState state, long now, long cost) {
    PairCell pair = (PairCell) state;
    long index = clock.index(now);
    for (;;) {
      long even = pair.even;
      long odd = pair.odd;
      if (even == RETIRED_STATE || odd == RETIRED_STATE) {
        return RETIRED;
      }
      long w = windowToCount(even, odd, index);
      long elapsedUnits = elapsedUnits(now, index, w);
      long curSlot = (w & 1) == 0 ? even : odd;
      long prevSlot = (w & 1) == 0 ? odd : even;
      long cur = countIn(curSlot, w);
      long prev = countIn(prevSlot, w - 1);
      long weightedPrev = prev * (windowUnits - elapsedUnits);
      long used = (cur + cost) * windowUnits + weightedPrev;
      long budget = limit * windowUnits;
      if (used > budget) {
        return denied(retryAfter(now, w, elapsedUnits, cur, prev, cost));
      }
      if (pair.cas(w, curSlot, pack(w, cur + cost))) {
        return (budget - used) / windowUnits;
      }
    }
  }

  /**
   * The window this thread counts in: its own, or a newer one that a thread which read the clock
   * later has already started (so the state never goes back a window).
   */
  private static long windowToCount(long even, long odd, long index) {
    int ahead = Math.max(ahead(even, index), ahead(odd, index));
    return ahead > 0 ? index + ahead : index;
  }

  /** Time elapsed in window w, in units; 0 when counting in a window newer than the clock says. */
  private long elapsedUnits(long now, long index, long w) {
    if (w != index) {
      return 0;
    }
    long elapsed = now - index * window;
    return unit == 1 ? elapsed : elapsed / unit; // (nanoseconds for most limits: no division)
  }

  private static long countIn(long slot, long w) {
    return windowOf(slot) == (int) w ? countOf(slot) : 0;
  }

  /** When {@code cost} more would fit, assuming no other admission meanwhile; rounded up. */
  private long retryAfter(long now, long w, long elapsedUnits, long cur, long prev, long cost) {
    long free = limit - cur - cost;
    if (free >= 0) {
      // in this window, once the previous window's weight has decayed enough
      long elapsedNeeded = windowUnits - Math.floorDiv(free * windowUnits, prev);
      return Math.max(1, (elapsedNeeded - elapsedUnits) * unit);
    }
    // in the next window, where this window's count becomes the weighted one
    long untilNext = (w + 1) * window - now;
    long fit = limit - cost;
    long elapsedNeeded = cur == 0 ? 0 : windowUnits - Math.floorDiv(fit * windowUnits, cur);
    return untilNext + Math.max(0, elapsedNeeded) * unit;
  }

  private long[] counts(PairCell pair, long now) {
    long index = clock.index(now);
    long even = pair.even;
    long odd = pair.odd;
    if (even == RETIRED_STATE || odd == RETIRED_STATE) {
      return new long[] {0, 0, index, 0};
    }
    long w = windowToCount(even, odd, index);
    long elapsedUnits = elapsedUnits(now, index, w);
    long cur = countIn((w & 1) == 0 ? even : odd, w);
    long prev = countIn((w & 1) == 0 ? odd : even, w - 1);
    return new long[] {cur, prev, w, elapsedUnits};
  }

  @Override
  long remaining(KeyState state, long now) {
    long[] c = counts((PairCell) state, now);
    long used = c[0] * windowUnits + c[1] * (windowUnits - c[3]);
    return Math.max(0, (limit * windowUnits - used) / windowUnits);
  }

  @Override
  long resetNanos(KeyState state, long now) {
    long[] c = counts((PairCell) state, now);
    if (c[0] > 0) {
      return (c[2] + 2) * window - now;
    }
    return c[1] > 0 ? (c[2] + 1) * window - now : 0;
  }

  @Override
  void refund(KeyState state, long now, long cost) {
    PairCell pair = (PairCell) state;
    long w = clock.index(now);
    for (;;) {
      long slot = pair.get(w);
      if (slot == RETIRED_STATE || countIn(slot, w) == 0) {
        return;
      }
      if (pair.cas(w, slot, pack(w, Math.max(0, countOf(slot) - cost)))) {
        return;
      }
    }
  }

  @Override
  boolean retireIfAtRest(KeyState state, long now) {
    PairCell pair = (PairCell) state;
    long index = clock.index(now);
    long even = pair.even;
    long odd = pair.odd;
    if (even == RETIRED_STATE || odd == RETIRED_STATE) {
      return false;
    }
    boolean atRest = countIn(even, index) + countIn(odd, index) + countIn(even, index - 1) + countIn(odd, index - 1) == 0
        && ahead(even, index) <= 0 && ahead(odd, index) <= 0;
    if (!atRest || !pair.cas(0, even, RETIRED_STATE)) {
      return false;
    }
    if (pair.cas(1, odd, RETIRED_STATE)) {
      return true;
    }
    pair.cas(0, RETIRED_STATE, even); // an admission reached the odd slot first: keep the key
    return false;
  }
}
