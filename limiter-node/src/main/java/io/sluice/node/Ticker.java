package io.sluice.node;

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
   * The system ticker: wall-clock time read once at class load, advanced by {@link System#nanoTime()}
   * so that it is monotonic and cheap to read.
   */
  static Ticker system() {
    return SystemTicker.INSTANCE;
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
