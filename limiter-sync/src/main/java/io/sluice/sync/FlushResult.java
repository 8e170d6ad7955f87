package io.sluice.sync;

/**
 * The store's answer to a {@link Batch}: whether it was applied now (false for a batch applied
 * before: a retry or a replay) and, per delta in batch order, the fresh global values: for a window
 * counter the count of the delta's window and of the window before it; for GCRA the backlog in
 * scaled units at the batch's time.
 */
public final class FlushResult {
  private final boolean applied;
  private final long[] values;

  FlushResult(boolean applied, long[] values) {
    this.applied = applied;
    this.values = values;
  }

  public boolean applied() {
    return applied;
  }

  public int size() {
    return values.length / 2;
  }

  /** Window count of delta i's window, or GCRA backlog of delta i. */
  public long current(int i) {
    return values[2 * i];
  }

  /** Window count of the window before delta i's; 0 for GCRA. */
  public long previous(int i) {
    return values[2 * i + 1];
  }
}
