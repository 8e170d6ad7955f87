package io.sluice.region;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * What a leading replica remembers between rounds, per quota and key: its record of every region
 * (see {@link ShareArithmetic#FIELDS}), replicated to the other replicas so that a new leader starts
 * from it, and the peaks of what it wrote to each region (see {@link #peaks}).
 *
 * <p>Concurrency: used by the round thread only (rounds are serialized by {@link RegionCoordinator#round()}).
 */
final class ShareMemory {
  /** Per quota, per key: what this replica knows of every region (see {@link ShareArithmetic#FIELDS}). */
  private final Map<String, Map<String, long[]>> memory = new HashMap<>();
  /**
   * Per quota, per key, per region {window, now, next}: the most this replica wrote for the window and
   * the next since the round the region was last heard (every registered node beating): what a silent
   * region's nodes may hold, which a later, smaller write they did not read does not lower.
   */
  private final Map<String, Map<String, long[]>> peaks = new HashMap<>();
  private final Leadership leadership;

  /** The length of a key's record: {@link ShareArithmetic#FIELDS} per region. */
  private final int recordLength;

  ShareMemory(Leadership leadership, int regions) {
    this.leadership = leadership;
    this.recordLength = regions * ShareArithmetic.FIELDS;
  }

  /** The records of a quota's keys (a live map: the round adds and drops keys in it). */
  Map<String, long[]> known(String quota) {
    return memory.computeIfAbsent(quota, x -> new HashMap<>());
  }

  /** Forgets the quota's keys not in {@code keys}: records and peaks (bounded as the records are). */
  void retain(String quota, Set<String> keys) {
    known(quota).keySet().retainAll(keys);
    peaks.computeIfAbsent(quota, x -> new HashMap<>()).keySet().retainAll(keys); // (bounded as known is)
  }

  /** A new leader: the records the old leader replicated replace whatever this replica remembered. */
  void reloadReplicated() {
    memory.clear();
    for (Map.Entry<String, long[]> e : leadership.state().entrySet()) {
      String k = e.getKey();
      int bar = k.indexOf('|', RECORDS.length());
      // (a record of another length, for another number of regions, is not read: the regions count
      // as unknown, at the most they may hold, until they are reached)
      if (k.startsWith(RECORDS) && bar > 0 && e.getValue().length == recordLength) {
        memory.computeIfAbsent(k.substring(RECORDS.length(), bar), x -> new HashMap<>())
            .put(k.substring(bar + 1), e.getValue().clone());
      }
    }
  }

  void replicate(GlobalQuota q, Map<String, long[]> known) {
    Map<String, long[]> copy = new HashMap<>();
    for (Map.Entry<String, long[]> e : known.entrySet()) {
      copy.put(RECORDS + q.name() + "|" + e.getKey(), e.getValue().clone());
    }
    leadership.state().putAll(copy);
    String prefix = RECORDS + q.name() + "|";
    for (Iterator<String> it = leadership.state().keySet().iterator(); it.hasNext(); ) {
      String key = it.next();
      if ((key.startsWith(prefix) && !copy.containsKey(key)) || key.startsWith(FORMER_RECORDS)) {
        leadership.state().remove(key);
      }
    }
  }

  /**
   * The replicated map's keys of the records, {@code q2|<quota>|<key>}: the layout of
   * {@link ShareArithmetic#FIELDS} per region, twelve since 2026-12-06. The records of nine fields went
   * under {@code q|} ({@link #FORMER_RECORDS}): a replica of the version before, leading during a
   * rolling upgrade, reads none of the new ones (it counts the regions as unknown, at the most they may
   * hold, until it reaches them) rather than reading twelve fields in steps of nine, and this version
   * reads none of its records and drops them.
   */
  static final String RECORDS = "q2|";
  private static final String FORMER_RECORDS = "q|";

  /** The key's peaks (see {@link #peaks}), per region of {@code n} {window, now, next}. */
  long[] peaksOf(String quota, String key, int n) {
    return peaks.computeIfAbsent(quota, x -> new HashMap<>()).computeIfAbsent(key, x -> {
      long[] p = new long[n * 3];
      for (int r = 0; r < n; r++) {
        p[r * 3] = Long.MIN_VALUE;
      }
      return p;
    });
  }

  /** A share written to region r for the key in window w: the peaks keep the larger. */
  void notePeak(String quota, String key, int n, int r, long w, long share, long next) {
    long[] p = peaksOf(quota, key, n);
    int pb = r * 3;
    if (p[pb] != w) {
      long carried = p[pb] == w - 1 ? p[pb + 2] : -1;
      p[pb] = w;
      p[pb + 1] = carried;
      p[pb + 2] = -1;
    }
    p[pb + 1] = Math.max(p[pb + 1], share);
    p[pb + 2] = Math.max(p[pb + 2], next);
  }
}
