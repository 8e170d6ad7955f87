package io.sluice.sync.spi.state;

import java.io.Serializable;
import java.util.Arrays;

/**
 * The sliding window log of one key in the Hazelcast store: what {@code sliding_window_log.lua} keeps
 * in a sorted set (one member per permit, scored by its time), as runs of (time, permits), oldest
 * first, times strictly increasing. A run holds every permit of one timestamp, so the log never holds
 * more runs than permits, and the exact processor never lets it hold more permits than the limit.
 *
 * <p>Immutable, like {@link CounterEntry} that carries it (see there why). A log of 100,000 runs
 * copied whole on every permit would cost a copy of 1.6 MB per decision, so the runs are kept in
 * chunks of at most {@link #CHUNK_RUNS}: a change copies the chunk it touches and the array of chunk
 * references, and shares every other chunk with the log it came from (chunks are never changed once
 * built).
 */
public final class PermitLog implements Serializable {
  private static final long serialVersionUID = 1L;
  /** Runs per chunk: about the square root of the longest log (Limit.MAX_LOG_LIMIT), for cheap copies. */
  public static final int CHUNK_RUNS = 256;
  public static final PermitLog EMPTY = new PermitLog(new long[0][], new long[0], 0);

  /** Per chunk, its runs as {@code time, permits, time, permits, ...}; no chunk is empty. */
  private final long[][] chunks;
  /** Permits per chunk. */
  private final long[] permits;
  /** Permits in the log. */
  private final long size;

  private PermitLog(long[][] chunks, long[] permits, long size) {
    this.chunks = chunks;
    this.permits = permits;
    this.size = size;
  }

  /** Permits in the log. */
  public long size() {
    return size;
  }

  /** Time of the newest permit, microseconds; the log must not be empty. */
  public long newest() {
    long[] last = chunks[chunks.length - 1];
    return last[last.length - 2];
  }

  /** Time of the permit at {@code index}, 0 being the oldest (ZRANGE key index index). */
  public long timeAt(long index) {
    if (index < 0 || index >= size) {
      throw new IndexOutOfBoundsException("index: " + index + " of " + size + " permits");
    }
    int c = 0;
    while (index >= permits[c]) {
      index -= permits[c++];
    }
    long[] chunk = chunks[c];
    int r = 0;
    while (index >= chunk[r + 1]) {
      index -= chunk[r + 1];
      r += 2;
    }
    return chunk[r];
  }

  /** The log without the permits taken at or before {@code cutoff} (ZREMRANGEBYSCORE -inf cutoff). */
  public PermitLog trimThrough(long cutoff) {
    int c = 0;
    long dropped = 0;
    while (c < chunks.length && chunks[c][chunks[c].length - 2] <= cutoff) {
      dropped += permits[c++];
    }
    if (c == chunks.length) {
      return size == 0 ? this : EMPTY;
    }
    long[] first = chunks[c];
    int r = 0;
    long droppedHere = 0;
    while (first[r] <= cutoff) { // stops inside the chunk: its newest run is after the cutoff
      droppedHere += first[r + 1];
      r += 2;
    }
    if (c == 0 && r == 0) {
      return this;
    }
    long[][] keptChunks = Arrays.copyOfRange(chunks, c, chunks.length);
    long[] keptPermits = Arrays.copyOfRange(permits, c, permits.length);
    if (r > 0) {
      keptChunks[0] = Arrays.copyOfRange(first, r, first.length);
      keptPermits[0] -= droppedHere;
    }
    return new PermitLog(keptChunks, keptPermits, size - dropped - droppedHere);
  }

  /** The log with {@code count} more permits at {@code time}, which must not be before the newest. */
  public PermitLog append(long time, long count) {
    if (count < 1) {
      throw new IllegalArgumentException("count: must be positive, got " + count);
    }
    if (size == 0) {
      return new PermitLog(new long[][] {{time, count}}, new long[] {count}, count);
    }
    long newest = newest();
    if (time < newest) {
      throw new IllegalArgumentException("time: " + time + " is before the newest permit " + newest
          + " (the log must stay sorted)");
    }
    int l = chunks.length - 1;
    long[] last = chunks[l];
    long[][] c;
    long[] p;
    if (time == newest) {
      c = chunks.clone();
      p = permits.clone();
      c[l] = last.clone();
      c[l][last.length - 1] += count;
    } else if (last.length / 2 < CHUNK_RUNS) {
      c = chunks.clone();
      p = permits.clone();
      c[l] = Arrays.copyOf(last, last.length + 2);
      c[l][last.length] = time;
      c[l][last.length + 1] = count;
    } else {
      c = Arrays.copyOf(chunks, chunks.length + 1);
      p = Arrays.copyOf(permits, permits.length + 1);
      c[++l] = new long[] {time, count};
      p[l] = 0;
    }
    p[l] += count;
    return new PermitLog(c, p, size + count);
  }

  /** Runs in the log (distinct times). */
  public int runs() {
    int n = 0;
    for (long[] chunk : chunks) {
      n += chunk.length / 2;
    }
    return n;
  }

  @Override
  public String toString() {
    return "PermitLog{" + size + " permits in " + runs() + " runs}";
  }
}
