package io.sluice.cli.tune;

import io.sluice.node.Durations;

import java.time.Duration;

/**
 * One point of the sweep: a batch size and a sync interval, in the approximate mode or (with {@code
 * --reservation}) the reservation mode. Batch size 1 is the exact mode.
 */
record Setting(long batchSize, Duration syncInterval, boolean reservation) implements Comparable<Setting> {

  /** The approximate mode (the default), or the exact mode at batch size 1. */
  Setting(long batchSize, Duration syncInterval) {
    this(batchSize, syncInterval, false);
  }

  boolean exact() {
    return batchSize == 1 && !reservation;
  }

  String label() {
    if (exact()) {
      return "exact (batch 1)";
    }
    return (reservation ? "reservation, batch " : "batch ") + batchSize + ", sync " + Durations.format(syncInterval);
  }

  /**
   * Larger means fewer store calls: the exact mode first, then the reservation mode (a lease per key
   * and node, asked for as the last one runs out), then the approximate mode (claims, flushed in
   * batches); within a mode a larger batch, then a longer interval.
   */
  @Override
  public int compareTo(Setting o) {
    int c = Integer.compare(rank(), o.rank());
    if (c != 0) {
      return c;
    }
    c = Long.compare(batchSize, o.batchSize);
    return c != 0 ? c : syncInterval.compareTo(o.syncInterval);
  }

  /** The mode's place in {@link #compareTo}: 0 exact, 1 reservation, 2 approximate. */
  int rank() {
    return exact() ? 0 : reservation ? 1 : 2;
  }
}
