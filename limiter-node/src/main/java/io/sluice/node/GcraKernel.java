package io.sluice.node;

/**
 * Token bucket, leaky bucket meter and leaky bucket shaper: all three are the generic cell rate
 * algorithm over one long, the theoretical arrival time (TAT) of the bucket's backlog.
 *
 * <p>Time is scaled so that rates are exact: one nanosecond is {@code scale} units and one permit is
 * {@code interval} units, with {@code scale / interval = refillTokens / periodNanos} reduced by their
 * gcd. The backlog {@code TAT - now} lies in {@code [0, capacity * interval]} (see {@link #backlog}): a request of cost n is
 * admitted when {@code backlog + n * interval <= capacity * interval}, which is exactly a token bucket
 * holding {@code capacity - backlog / interval} tokens. Scaled time may wrap around 2^64 after a long
 * uptime; all comparisons are on differences, and a difference outside the legal range means the key
 * was idle long enough to be at rest.
 */
final class GcraKernel extends Kernel {
  private static final long RETIRED_TAT = Long.MIN_VALUE;
  private static final long WRAP_GUARD = 1L << 62;

  private final long origin;
  private final long scale;
  private final long interval;
  private final long burstSpan;
  private final boolean shaper;

  GcraKernel(Limit limit, long origin, boolean shaper) {
    this.origin = origin;
    this.scale = limit.scale;
    this.interval = limit.interval;
    this.burstSpan = limit.capacity() * limit.interval;
    this.shaper = shaper;
  }

  private long scaled(long now) {
    return (now - origin) * scale;
  }

  /**
   * The backlog above now. It may exceed {@code burstSpan} a little when this thread read the clock
   * before another thread that already advanced the TAT; only a difference beyond
   * {@link #WRAP_GUARD} (which no live key reaches) is taken as wrap-around of an idle key.
   */
  private static long backlog(long tat, long s) {
    long d = tat - s;
    return d > 0 && d < WRAP_GUARD ? d : 0;
  }

  @Override
  KeyState newState(long now) {
    return new LongCell(scaled(now));
  }

  @Override
  long tryAcquire(KeyState state, long now, long cost) {
    LongCell cell = (LongCell) state;
    long s = scaled(now);
    long need = cost * interval;
    for (;;) {
      long tat = cell.value;
      if (tat == RETIRED_TAT) {
        return RETIRED;
      }
      long backlog = backlog(tat, s);
      long after = backlog + need;
      if (after > burstSpan) {
        return denied(Limit.ceilDiv(after - burstSpan, scale));
      }
      long next = s + after;
      if (next == RETIRED_TAT) {
        next++; // one scaled unit (a fraction of a nanosecond) to keep the sentinel free
      }
      if (cell.cas(tat, next)) {
        return shaper ? Limit.ceilDiv(backlog, scale) : (burstSpan - after) / interval;
      }
    }
  }

  @Override
  long remaining(KeyState state, long now) {
    long tat = ((LongCell) state).value;
    return tat == RETIRED_TAT ? burstSpan / interval : Math.max(0, burstSpan - backlog(tat, scaled(now))) / interval;
  }

  @Override
  long resetNanos(KeyState state, long now) {
    long tat = ((LongCell) state).value;
    return tat == RETIRED_TAT ? 0 : Limit.ceilDiv(backlog(tat, scaled(now)), scale);
  }

  @Override
  void refund(KeyState state, long now, long cost) {
    LongCell cell = (LongCell) state;
    long s = scaled(now);
    long need = cost * interval;
    for (;;) {
      long tat = cell.value;
      if (tat == RETIRED_TAT || backlog(tat, s) == 0) {
        return;
      }
      long next = tat - need;
      if (next == RETIRED_TAT) {
        next++;
      }
      if (cell.cas(tat, next)) {
        return;
      }
    }
  }

  @Override
  boolean retireIfAtRest(KeyState state, long now) {
    LongCell cell = (LongCell) state;
    long tat = cell.value;
    return tat != RETIRED_TAT && backlog(tat, scaled(now)) == 0 && cell.cas(tat, RETIRED_TAT);
  }

  @Override
  boolean reportsDelay() {
    return shaper;
  }
}
