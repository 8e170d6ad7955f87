package io.sluice.node;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A ticker that moves only when told to: for tests and simulations. Thread-safe. */
public final class ManualTicker implements Ticker {
  private final AtomicLong nanos;

  public ManualTicker(long startNanos) {
    this.nanos = new AtomicLong(startNanos);
  }

  /** A ticker starting at an arbitrary, window-aligned instant far from zero (2026-01-01T00:00Z). */
  public ManualTicker() {
    this(1_767_225_600_000_000_000L);
  }

  @Override
  public long read() {
    return nanos.get();
  }

  public void advance(Duration duration) {
    advanceNanos(duration.toNanos());
  }

  public void advanceNanos(long delta) {
    if (delta < 0) {
      throw new IllegalArgumentException("delta must not be negative: a ticker never goes backwards");
    }
    nanos.addAndGet(delta);
  }
}
