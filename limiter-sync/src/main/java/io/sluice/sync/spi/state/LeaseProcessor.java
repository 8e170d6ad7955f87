package io.sluice.sync.spi.state;

import io.sluice.sync.spi.ExactArgs;
import io.sluice.sync.spi.LeaseStore;
import java.util.Map;

/**
 * {@code lease.lua} for the Hazelcast store (reservation mode): grants one node up to {@code want}
 * permits of a window limit, atomically on the key's owner, so that nodes admitting only what they
 * were granted never pass the limit together. The grant is the largest {@code g <= want} with
 * <pre>
 *   fixed:   current + g &lt;= limit
 *   sliding: (current + g) * W + previous * (W - elapsed) &lt;= limit * W   (W, elapsed in units)
 * </pre>
 * or none when that is below {@code need}, computed exactly in longs (the script steps back from a double quotient that may round up; a
 * floor division needs no step). A grant is counted in the window at once, in the flush's layout
 * ({@link CounterEntry}), drops windows before the previous one and sets the counter's TTL, as the
 * script does; no grant writes nothing.
 *
 * <p>Answers {@code {granted, count of the window after the grant, count of the window before}}.
 * Deterministic, so Hazelcast runs the very same processor on the backups.
 */
public final class LeaseProcessor implements EntryUpdate {
  private static final long serialVersionUID = 2L;

  private final long window;
  private final long elapsedMicros;
  private final long windowMicros;
  /** The sliding estimate's unit, microseconds; 0 for a fixed window (the window before does not count). */
  private final long unitMicros;
  private final long limit;
  private final long want;
  private final long need;
  private final long ttlMillis;

  /** Arguments as {@code lease.lua}'s, checked by {@link ExactArgs#checkLease} (elapsed inside the window). */
  public LeaseProcessor(long window, long elapsedMicros, long windowMicros, long unitMicros, long limit, long want,
      long need, long ttlMillis) {
    this.window = window;
    this.elapsedMicros = elapsedMicros;
    this.windowMicros = windowMicros;
    this.unitMicros = unitMicros;
    this.limit = limit;
    this.want = want;
    this.need = need;
    this.ttlMillis = ttlMillis;
  }

  @Override
  public long[] process(Map.Entry<byte[], CounterEntry> entry) {
    CounterEntry state = entry.getValue() == null ? CounterEntry.EMPTY : entry.getValue();
    long cur = state.count(window);
    long prev = state.count(window - 1);
    long available;
    if (unitMicros == 0) {
      available = limit - cur;
    } else {
      long wu = windowMicros / unitMicros;
      long eu = elapsedMicros / unitMicros;
      // limit * wu fits 2^53 (the unit is chosen so); the counts may not, after an over-admitting flush
      long taken = CounterEntry.saturatedAdd(CounterEntry.saturatedMultiply(prev, wu - eu),
          CounterEntry.saturatedMultiply(cur, wu));
      available = Math.floorDiv(limit * wu - taken, wu);
    }
    // (none unless need is free: a request that does not fit leaves what is free to the others)
    long granted = available >= need ? Math.min(want, available) : 0;
    if (granted > 0) {
      state = state.addToWindow(window, granted).dropBefore(window);
      cur = state.count(window);
      ExpiringEntry.write(entry, state, ttlMillis);
    }
    return new long[] {granted, cur, prev};
  }

  public static LeaseStore.Lease lease(long[] out) {
    return new LeaseStore.Lease(out[0], out[1], out[2]);
  }
}
