package io.sluice.chaos;

import io.sluice.node.Ticker;

/**
 * The system ticker, remembering per thread the last time it gave: a load thread reads, right after a
 * decision, the very instant the limiter decided at, and so counts each admission in the window the
 * limiter counted it in.
 */
final class RecordingTicker implements Ticker {
  static final RecordingTicker INSTANCE = new RecordingTicker();

  private final ThreadLocal<long[]> last = ThreadLocal.withInitial(() -> new long[1]);

  @Override
  public long read() {
    long now = Ticker.system().read();
    last.get()[0] = now;
    return now;
  }

  long lastRead() {
    return last.get()[0];
  }
}
