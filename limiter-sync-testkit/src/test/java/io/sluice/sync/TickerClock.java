package io.sluice.sync;

import io.sluice.node.ManualTicker;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A breaker's clock on a test's simulated time ({@link SyncedLimiter.Builder#breakerClock}): its
 * open-state wait then ends after so much of the simulated traffic, however slowly the machine runs
 * the test (on the wall clock a loaded machine let more waits end between requests, and a run of
 * LocalShareTest differed: once 1,034 admitted of 1,000).
 */
final class TickerClock extends Clock {
  private final ManualTicker ticker;

  TickerClock(ManualTicker ticker) {
    this.ticker = ticker;
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException("a test clock in UTC");
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochSecond(0, ticker.read());
  }
}
