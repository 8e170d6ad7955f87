package io.sluice.sync.internal;

import io.sluice.node.Ticker;
import io.sluice.sync.spi.CounterStore;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * A node's clock set to agree with its store's ({@link CounterStore#timeMicros}), as a client of NTP
 * sets its own. Every mode sends the store the deciding node's time and a window follows it, so nodes
 * whose clocks are half a millisecond apart disagree near a window's edge about which window a
 * request falls in, exact mode included (the README's "Nodes' clocks"). Set to one clock, they agree
 * within half a round trip to the store.
 *
 * <p>A sample reads the store's time and takes the middle of the call's round trip, on the node's own
 * clock, for the moment the store read it: the offset it gives is off by at most half the round trip.
 * Of its last {@link #KEPT} samples the node keeps the one with the shortest round trip. It samples at
 * its start ({@link #first}, the limiter waiting for it), at each of its first flusher rounds until it
 * has {@link #FIRST_SAMPLES}, then every {@link #SAMPLE_EVERY}.
 *
 * <p>Never backwards: an offset that grows is taken at once (the clock jumps ahead, as it does when a
 * window starts), one that shrinks is taken in gradually, the clock running at half speed until it has
 * come down to it.
 *
 * <p>Concurrency: {@link #read} on any thread (one volatile read of an immutable offset); a sample is
 * asked for by the flusher's round, one at a time, and applied under this object's monitor on the
 * thread that brings the answer.
 */
final class StoreClock implements Ticker {
  static final int FIRST_SAMPLES = 4;
  static final Duration SAMPLE_EVERY = Duration.ofSeconds(10);
  static final int KEPT = 4;

  private final Ticker local;
  private volatile Offset offset = new Offset(0, 0, 0);
  private final AtomicBoolean asking = new AtomicBoolean();
  private final LongAdder calls = new LongAdder();
  private volatile int taken;
  /** When the last sample was asked for, on the round's clock; guarded by {@link #asking}. */
  private long lastAsked = Long.MIN_VALUE;
  // guarded by this: the last samples, as offsets and round trips (ns), newest at (taken - 1) % KEPT
  private final long[] offsets = new long[KEPT];
  private final long[] trips = new long[KEPT];

  StoreClock(Ticker local) {
    this.local = local;
  }

  @Override
  public long read() {
    long t = local.read();
    return t + offset.at(t);
  }

  /** How far this clock is set from the node's own now, ns (0 before the first sample). */
  long offsetNanos() {
    return offset.at(local.read());
  }

  /** Store calls this clock made (answered or not). */
  long calls() {
    return calls.sum();
  }

  /** Samples taken so far. */
  int samples() {
    return taken;
  }

  /**
   * The flusher's round at {@code now} (its own clock): asks the store for its time when a sample is
   * due and none is on its way, through the breaker, waiting for nothing.
   */
  void round(long now, StoreCalls calls, CounterStore store, Duration timeout) {
    if (!asking.compareAndSet(false, true)) {
      return;
    }
    if (taken >= FIRST_SAMPLES && lastAsked != Long.MIN_VALUE && now - lastAsked < SAMPLE_EVERY.toNanos()) {
      asking.set(false);
      return;
    }
    lastAsked = now;
    long sent = local.read();
    this.calls.increment();
    calls.guardedAsync(store::timeMicros, timeout).whenComplete((micros, failure) -> {
      try {
        if (micros != null) {
          sample(sent, local.read(), micros);
        }
      } finally {
        asking.set(false);
      }
    });
  }

  /**
   * A sample: the store read {@code storeMicros} somewhere between {@code sent} and {@code answered}
   * on the node's clock. Package-private for tests.
   */
  void sample(long sent, long answered, long storeMicros) {
    sample(sent, answered, storeMicros, false);
  }

  /**
   * The first sample, before the limiter has read its clock (it is being built): asked for at once and
   * waited for, at most {@code timeout}, and taken at once whichever way it sets the clock. Where the
   * store does not answer, the flusher's rounds ask again.
   */
  void first(StoreCalls calls, CounterStore store, Duration timeout) {
    long sent = local.read();
    this.calls.increment();
    Long micros = calls.guarded(store::timeMicros, timeout);
    if (micros != null) {
      sample(sent, local.read(), micros, true);
    }
  }

  private synchronized void sample(long sent, long answered, long storeMicros, boolean step) {
    long trip = Math.max(0, answered - sent);
    // the store's clock reads whole microseconds, the middle of one at best; so does the offset (a
    // half rounded down): a store whose clock is a whole number of microseconds from the node's, as a
    // simulation's is, is read exactly over a round trip of 0
    long raw = storeMicros * 1_000 + 500 - (sent + trip / 2);
    int slot = taken % KEPT;
    offsets[slot] = Math.floorDiv(raw + 499, 1_000) * 1_000;
    trips[slot] = trip;
    taken++;
    int best = slot;
    for (int i = 0; i < Math.min(taken, KEPT); i++) {
      if (trips[i] < trips[best]) {
        best = i;
      }
    }
    long target = offsets[best];
    Offset now = offset;
    long current = now.at(answered);
    offset = step || target >= current ? new Offset(target, 0, answered) : new Offset(target, current - target, answered);
  }

  /**
   * An offset of {@code target}, with {@code pending} more still to shed from {@code since} at half the
   * clock's speed (so that the clock runs at half speed while it does); before {@code since} the same
   * line, so that a read that took the node's time before the offset changed and the offset after
   * reads no earlier than a read made wholly before the change.
   */
  private record Offset(long target, long pending, long since) {
    long at(long t) {
      long left = pending - (t - since) / 2;
      return left > 0 ? target + left : target;
    }
  }
}
