package io.sluice.sync.spi;

import java.util.concurrent.CompletionStage;

/**
 * Reservation mode: a store that grants budget of a window limit to one node at a time, atomically,
 * so that nodes admitting only what they were granted never pass the limit together.
 */
public interface LeaseStore {

  /**
   * Takes up to {@code want} permits of window {@code window} (index, windows aligned to the epoch)
   * for the key, {@code elapsedMicros} into that window, and none at all unless at least {@code need}
   * (1..want) are free: a node asking for a request that does not fit must not be left holding what
   * is free (every other node would deny the key to the window's end).
   */
  CompletionStage<Lease> lease(Counter counter, String key, long window, long elapsedMicros, long want, long need);

  /** {@link #lease(Counter, String, long, long, long, long)} with a need of 1: whatever is free, up to want. */
  default CompletionStage<Lease> lease(Counter counter, String key, long window, long elapsedMicros, long want) {
    return lease(counter, key, window, elapsedMicros, want, 1);
  }

  /** A grant and the counts it left: permits granted, count of the window, count of the one before. */
  final class Lease {
    private final long granted;
    private final long current;
    private final long previous;

    public Lease(long granted, long current, long previous) {
      this.granted = granted;
      this.current = current;
      this.previous = previous;
    }

    public long granted() {
      return granted;
    }

    public long current() {
      return current;
    }

    public long previous() {
      return previous;
    }
  }
}
