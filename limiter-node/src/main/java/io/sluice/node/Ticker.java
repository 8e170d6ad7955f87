package io.sluice.node;

import java.util.concurrent.locks.LockSupport;

/**
 * The source of time for every limiter: nanoseconds on a monotonic scale anchored at the Unix epoch.
 *
 * <p>Windows are aligned to the epoch so that separate nodes agree on where a window starts; the
 * value must never go backwards. Tests inject a {@link ManualTicker} and advance it instead of
 * sleeping.
 */
@FunctionalInterface
public interface Ticker {

  /** Nanoseconds since the Unix epoch, monotonic within this process. */
  long read();

  /**
   * The precise ticker: wall-clock time read once, advanced by {@link System#nanoTime()} on every
   * call, so that it is monotonic. Costs one clock read (tens of nanoseconds on a virtual machine)
   * per decision.
   */
  static Ticker system() {
    return SystemTicker.INSTANCE;
  }

  /**
   * The default ticker: {@link #system()} time cached in a field that one daemon thread refreshes
   * every {@link CachedTicker#RESOLUTION_NANOS} (1 ms), so a decision reads memory instead of the
   * clock. Time seen by a decision is up to about a millisecond behind (more if the machine is so
   * loaded that the refresher is not scheduled): refills and window changes are seen that much later,
   * which can only deny a little earlier, never admit more. The thread starts with the first use.
   */
  static Ticker cached() {
    return CachedTicker.INSTANCE;
  }
}

enum SystemTicker implements Ticker {
  INSTANCE;

  private static final long ORIGIN_NANO_TIME = System.nanoTime();
  private static final long ORIGIN_EPOCH_NANOS = System.currentTimeMillis() * 1_000_000L;

  @Override
  public long read() {
    return ORIGIN_EPOCH_NANOS + (System.nanoTime() - ORIGIN_NANO_TIME);
  }
}

final class CachedTicker implements Ticker, Runnable {
  static final long RESOLUTION_NANOS = 1_000_000L;
  static final CachedTicker INSTANCE = new CachedTicker();

  private volatile long now = SystemTicker.INSTANCE.read();

  private CachedTicker() {
    Thread refresher = new Thread(this, "sluice-ticker");
    refresher.setDaemon(true);
    refresher.start();
  }

  @Override
  public long read() {
    return now;
  }

  @Override
  public void run() {
    for (;;) {
      LockSupport.parkNanos(RESOLUTION_NANOS);
      now = SystemTicker.INSTANCE.read();
    }
  }
}
