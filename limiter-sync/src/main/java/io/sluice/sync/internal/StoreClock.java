package io.sluice.sync.internal;

import io.sluice.node.Ticker;
import io.sluice.sync.spi.CounterStore;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A node's clock set to agree with its store's ({@link CounterStore#timeMicros}), as a client of NTP
 * sets its own. Every mode sends the store the deciding node's time and a window follows it, so nodes
 * whose clocks are half a millisecond apart disagree near a window's edge about which window a
 * request falls in, exact mode included (the README's "Nodes' clocks"). Set to one clock, they agree
 * within half a round trip to the store.
 *
 * <p>A sample reads the store's time somewhere within the call's round trip: the offset lies in an
 * interval as wide as the round trip, and its middle is off by at most half of it (more only where the
 * network's two directions differ by more than the round trip's shortest). The offset the node keeps
 * is known to within its own error, that of the sample that set it plus what two clocks may drift apart
 * since ({@link #DRIFT_PER_SECOND}, as NTP's dispersion grows). A sample whose error is no larger sets
 * the offset to its middle; a wider one (a slow call, a congested link, one direction delayed) only
 * brings the offset into its interval where it lies outside, and moves it no further: a slow call
 * never moves a clock by half its delay. The node samples while it is built ({@link #first}, waiting for
 * the answer), at its flusher's next rounds until it has {@link #FIRST_SAMPLES}, then every {@link
 * #SAMPLE_EVERY}.
 *
 * <p>Never backwards: an offset that grows is taken at once (the clock jumps ahead, as it does when a
 * window starts), one that shrinks is taken in gradually, the clock running at half speed until it has
 * come down to it.
 *
 * <p>Concurrency: {@link #read} on any thread (one volatile read, two while the clock slews); a sample is
 * asked for by the flusher's round, one at a time, and applied under this object's monitor on the
 * thread that brings the answer.
 */
final class StoreClock implements Ticker {
  static final int FIRST_SAMPLES = 4;
  static final Duration SAMPLE_EVERY = Duration.ofSeconds(10);
  /** How fast two clocks may drift apart: 50 ppm, a quartz clock's worst, what no NTP corrects. */
  static final double DRIFT_PER_SECOND = 50e-6;

  private final Ticker local;
  private volatile Offset offset = new Offset(0, 0, 0);
  /**
   * The offset while no slew is under way, else {@link #SLEWING} (read {@link #offset}): a decision
   * reads one volatile long. Written after {@link #offset}.
   */
  private volatile long steady;
  private static final long SLEWING = Long.MIN_VALUE;
  private final AtomicBoolean asking = new AtomicBoolean();
  /** Limiters given this clock (see {@link #first}: a clock others may have read is never set back at once). */
  private final AtomicInteger limiters = new AtomicInteger();
  private volatile int taken;
  /** When the last sample was asked for, on the node's own clock; guarded by {@link #asking}. */
  private long lastAsked = Long.MIN_VALUE;
  // guarded by this: the error of the offset the node keeps (its offset's target), and when it was
  // set (the node's clock)
  private long error = Long.MAX_VALUE;
  private long setAt;

  private static final StoreClock CACHED = new StoreClock(Ticker.cached());
  private static final StoreClock SYSTEM = new StoreClock(Ticker.system());

  StoreClock(Ticker local) {
    this.local = local;
  }

  /**
   * The clock a limiter on {@code local} sets: on the wall clock, one per process, which all its
   * limiters set and read, so that they stay in step with each other as they were on the wall clock (a
   * clock each, each off the store's by its own readings' error, put a process's nodes a fraction of a
   * round trip apart: `sluice tune`'s nodes, in one JVM, passed their bounds more often); a ticker of
   * one's own (a simulation's node) gets a clock of its own.
   */
  static StoreClock of(Ticker local) {
    StoreClock clock = local == Ticker.cached() ? CACHED : local == Ticker.system() ? SYSTEM : new StoreClock(local);
    clock.given();
    return clock;
  }

  /** One more limiter has this clock. */
  void given() {
    limiters.incrementAndGet();
  }

  @Override
  public long read() {
    long s = steady;
    if (s != SLEWING) {
      return local.read() + s;
    }
    long t = local.read();
    return t + offset.at(t);
  }

  /** How far this clock is set from the node's own now, ns (0 before the first sample). */
  long offsetNanos() {
    long s = steady;
    return s != SLEWING ? s : offset.at(local.read());
  }

  /**
   * A flusher's round: asks the store for its time when a sample is due and none is on its way,
   * through the breaker, waiting for nothing; whether it made the call.
   */
  boolean round(StoreCalls calls, CounterStore store, Duration timeout) {
    if (steady == SLEWING) {
      settle();
    }
    if (!store.tellsTime() || !asking.compareAndSet(false, true)) {
      return false;
    }
    // (the cadence on the node's own clock: the limiters that share this clock run their rounds on
    // different clocks, the flusher thread's System.nanoTime or, without one, the limiter's)
    long sent = local.read();
    if (taken >= FIRST_SAMPLES && lastAsked != Long.MIN_VALUE && sent - lastAsked < SAMPLE_EVERY.toNanos()) {
      asking.set(false);
      return false;
    }
    lastAsked = sent;
    try {
      calls.guardedAsync(store::timeMicros, timeout).whenComplete((micros, failure) -> {
        try {
          if (micros != null) {
            sample(sent, local.read(), micros);
          }
        } finally {
          asking.set(false);
        }
      });
    } catch (RuntimeException e) {
      asking.set(false); // (a call that could not even start: the next round asks again)
      throw e;
    }
    return true;
  }

  /**
   * A sample: the store read {@code storeMicros} somewhere between {@code sent} and {@code answered}
   * on the node's clock. Package-private for tests.
   */
  void sample(long sent, long answered, long storeMicros) {
    sample(sent, answered, storeMicros, false);
  }

  /**
   * The first sample, while the limiter is built: asked for at once and waited for, at most {@code
   * timeout}; taken at once whichever way it sets the clock where no other limiter has the clock (none
   * has read it), else as any sample. Where the store does not answer, the flusher's rounds ask again.
   * Whether it made the call (not where the process's clock was set already).
   */
  boolean first(StoreCalls calls, CounterStore store, Duration timeout) {
    if (taken > 0) {
      return false; // (a clock the process's other limiters share, set already)
    }
    long sent = local.read();
    Long micros = calls.guarded(store::timeMicros, timeout);
    if (micros != null) {
      sample(sent, local.read(), micros, limiters.get() <= 1);
    }
    return true;
  }

  private synchronized void sample(long sent, long answered, long storeMicros, boolean step) {
    long trip = Math.max(0, answered - sent);
    // the store read a whole microsecond somewhere between sent and answered: the offset lies in
    // [low, high]; its middle is rounded to whole microseconds (a half down), so a store whose clock is
    // a whole number of microseconds from the node's, as a simulation's is, is read exactly over a
    // round trip of 0
    long storeNanos = storeMicros * 1_000;
    long low = storeNanos - answered;
    long high = storeNanos + 999 - sent;
    long middle = Math.floorDiv(storeNanos + 500 - (sent + trip / 2) + 499, 1_000) * 1_000;
    long sampleError = trip / 2 + 500;
    taken++;
    long keptError = error == Long.MAX_VALUE ? Long.MAX_VALUE
        : error + (long) (DRIFT_PER_SECOND * Math.max(0, answered - setAt));
    long target = offset.target();
    long next;
    if (sampleError <= keptError) {
      // (an offset within the sample's own error of its middle stays where it is, its error what the two
      // together say: a clock that only moved by a reading's noise would slew at every other reading)
      long apart = Math.abs(middle - target);
      next = step || keptError == Long.MAX_VALUE || apart > sampleError ? middle : target;
      error = next == middle ? sampleError : apart + sampleError;
      setAt = answered;
    } else {
      next = Math.min(Math.max(target, low), high);
    }
    // (taken at the present: what the clock reads now is what it must not go below)
    long present = local.read();
    long current = offset.at(present);
    if (step || next >= current) {
      offset = new Offset(next, 0, present);
      steady = next;
    } else {
      offset = new Offset(next, current - next, present);
      steady = SLEWING;
    }
  }

  /** A slew that has come down to its offset: decisions read the steady offset again. */
  private synchronized void settle() {
    Offset o = offset;
    if (steady == SLEWING && o.at(local.read()) == o.target()) {
      steady = o.target();
    }
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
