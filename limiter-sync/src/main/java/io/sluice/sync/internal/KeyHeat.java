package io.sluice.sync.internal;

import io.sluice.sync.SyncConfig;
import java.util.concurrent.atomic.LongAdder;

/**
 * Heavy-hitter detection for one limiter: each key's admission rate since its last sync, smoothed
 * into {@link KeyView#rate} (which claims are sized by), against a running mean over the synced keys;
 * a key is hot while its rate is at least {@code hotKeyFactor} times the mean and at least
 * {@code minHotRate} per second.
 *
 * <p>Concurrency: {@link #update} runs under the sync lock (the mean is the flusher's) and the view's
 * monitor; {@link #hotKeys} is read by any thread.
 */
final class KeyHeat {
  private final double hotKeyFactor;
  private final double minHotRate;
  private final long syncIntervalNanos;
  /** Running mean of the admission rates of synced keys, per second. */
  private double meanKeyRate;
  /** Keys currently detected as hot. */
  private final LongAdder hotKeys = new LongAdder();

  KeyHeat(SyncConfig c, long syncIntervalNanos) {
    this.hotKeyFactor = c.hotKeyFactor();
    this.minHotRate = c.minHotRate();
    this.syncIntervalNanos = syncIntervalNanos;
  }

  /** Under the sync lock and the view's monitor, as the view is synced (or held) at {@code now}. */
  void update(KeyView v, long now) {
    double rate = v.measureRate(now, syncIntervalNanos / 2); // (-1: too short to tell a rate)
    if (rate < 0) {
      return;
    }
    double mean = meanKeyRate;
    meanKeyRate = mean == 0 ? rate : mean * 0.95 + rate * 0.05;
    boolean hot = rate >= minHotRate && rate >= hotKeyFactor * mean;
    if (hot != v.hot()) {
      v.hot(hot);
      hotKeys.add(hot ? 1 : -1);
    }
  }

  long hotKeys() {
    return hotKeys.sum();
  }
}
