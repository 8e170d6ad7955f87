package io.sluice.node;

/**
 * The index of the epoch-aligned window a time falls in, {@code Math.floorDiv(now, window)}, without a
 * 64-bit division while the time stays in the newest window computed so far: a window kernel asks for
 * every decision, and every decision of a window is in the same one. (The division was most of what a
 * fixed window's decision did besides its CAS, where a bucket's multiplies.)
 *
 * <p>Concurrency: the newest window is an immutable {@link Span} in a plain field, read and replaced
 * without a lock; its fields are final, so a thread that sees a span sees it whole, and a thread that
 * sees an older one (or none) divides. The span only moves forward, so a thread whose clock read is a
 * little behind divides instead of turning it back for the others. One small allocation per window.
 */
final class WindowClock {
  private final long window;
  private Span newest;

  WindowClock(long windowNanos) {
    if (windowNanos <= 0) {
      throw new IllegalArgumentException("window: must be positive, got " + windowNanos);
    }
    this.window = windowNanos;
  }

  /** A window and its first instant. */
  private record Span(long index, long start) {
  }

  /** {@code Math.floorDiv(now, window)}. */
  long index(long now) {
    Span s = newest;
    if (s != null && now >= s.start) {
      long into = now - s.start;
      // (negative only when the true difference passed 2^63: not this window)
      if (into >= 0 && into < window) {
        return s.index;
      }
    }
    return divide(now, s);
  }

  /** The first instant of the window {@code now} falls in, {@code index(now) * window}. */
  long start(long now) {
    Span s = newest;
    if (s != null && now >= s.start) {
      long into = now - s.start;
      if (into >= 0 && into < window) {
        return s.start;
      }
    }
    return divide(now, s) * window;
  }

  private long divide(long now, Span seen) {
    long index = Math.floorDiv(now, window);
    long start = index * window;
    // (a start that overflowed, for a clock near the ends of the long range, is never kept)
    if ((seen == null || index > seen.index) && start <= now && now - start < window) {
      newest = new Span(index, start);
    }
    return index;
  }
}
