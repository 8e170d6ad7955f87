package io.sluice.cli.tune;

import io.sluice.node.Durations;

import java.time.Duration;

/** One point of the sweep: a batch size and a sync interval. Batch size 1 is the exact mode. */
record Setting(long batchSize, Duration syncInterval) implements Comparable<Setting> {
  boolean exact() {
    return batchSize == 1;
  }

  String label() {
    return exact() ? "exact (batch 1)" : "batch " + batchSize + ", sync " + Durations.format(syncInterval);
  }

  /** Larger means fewer store calls: a larger batch, then a longer interval. */
  @Override
  public int compareTo(Setting o) {
    int c = Long.compare(batchSize, o.batchSize);
    return c != 0 ? c : syncInterval.compareTo(o.syncInterval);
  }
}
