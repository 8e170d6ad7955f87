package io.sluice.sync.spi.state;

import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.Delta;
import java.io.Serializable;
import java.util.Arrays;

/**
 * The value of one counter key in the Hazelcast store: the state {@code flush.lua} and the exact
 * scripts keep in one Redis hash (window counts and the nodes' claims on them, or the GCRA pair
 * {@code b}, {@code t}), or the sorted set of a sliding window log ({@link PermitLog}), plus, per node,
 * the last batch sequence applied to this key, which makes every key's update idempotent on its own.
 * Immutable: every change
 * returns a new entry, so an entry processor that fails half-way leaves the stored value untouched
 * (also under the {@code OBJECT} in-memory format, where the stored object itself is handed to it).
 */
public final class CounterEntry implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final long[] NONE = {};
  private static final String[] NO_NODES = {};

  public static final CounterEntry EMPTY = new CounterEntry(NONE, NONE, false, 0, 0, NO_NODES, NONE, NONE, NONE, NO_NODES,
      NONE, NONE, NONE, NONE, NONE, PermitLog.EMPTY, null, null);

  /** Window counters: window indexes, ascending, and their counts. */
  private final long[] windows;
  private final long[] counts;
  /** GCRA: whether a bucket was ever written, the newest time seen (us) and the backlog (scaled units). */
  private final boolean bucket;
  private final long at;
  private final long backlog;
  /** Per node id: last sequence applied to this key, and when (the flushing process's clock, ms). */
  private final String[] nodes;
  private final long[] sequences;
  private final long[] seenMillis;
  /**
   * Claims ({@code flush.lua}'s {@code c<window>:<node>} and {@code t<window>:<node>} fields): window,
   * node, permits, and for a sliding window's claimant the time of its claim from the window's start
   * in us (-1: none); one per node and window.
   */
  private final long[] claimWindows;
  private final String[] claimNodes;
  private final long[] claimValues;
  private final long[] claimSince;
  /**
   * Per claim entry: the highest take token of its node counted or settled on its window ({@code
   * flush.lua}'s {@code x<window>:<node>}), 0: none. Null in an entry written before takes: read as 0.
   */
  private final long[] claimTokens;
  /**
   * Per claim entry: how much of the claim its node has said it admitted and has not counted yet
   * ({@code flush.lua}'s {@code u<window>:<node>}): demand met, which sizes the claims granted as if it
   * were counted. Never more than the claim. Null in an entry written before it was kept: read as 0.
   */
  private final long[] claimMet;
  /**
   * Per claim entry: the allowance its node has spent on its window in all ({@code flush.lua}'s {@code
   * a<window>:<node>}; see Delta#allowing), so that a call that spends it again (a replay, a take applied
   * twice) spends nothing more. Null in an entry written before it was kept: read as 0.
   */
  private final long[] claimSpent;
  /**
   * A sliding window log's permits (exact mode only). Null in an entry written before logs were kept
   * here: Java serialization leaves a field the stream does not have null; {@link #log()} reads it as
   * empty.
   */
  private final PermitLog log;
  /**
   * Fixed windows: per window of {@link #windows}, the nodes' allowances spent on it ({@code flush.lua}'s
   * {@code A<window>}; see Delta#allowing). Null in an entry that never recorded any, and in one written
   * before they were kept: read as 0.
   */
  private final long[] spent;
  /**
   * GCRA: the highest point a token claim took the backlog to, {base time, backlog} (token_claim.lua's
   * {@code mb}, {@code mt}), which a give-back never goes below (see ExactProcessor#giveBackToBucket).
   * Null where no claim wrote the bucket, and in an entry written before it was kept.
   */
  private final long[] mark;

  private CounterEntry(long[] windows, long[] counts, boolean bucket, long at, long backlog, String[] nodes,
      long[] sequences, long[] seenMillis, long[] claimWindows, String[] claimNodes, long[] claimValues,
      long[] claimSince, long[] claimTokens, long[] claimMet, long[] claimSpent, PermitLog log, long[] spent,
      long[] mark) {
    this.windows = windows;
    this.counts = counts;
    this.bucket = bucket;
    this.at = at;
    this.backlog = backlog;
    this.nodes = nodes;
    this.sequences = sequences;
    this.seenMillis = seenMillis;
    this.claimWindows = claimWindows;
    this.claimNodes = claimNodes;
    this.claimValues = claimValues;
    this.claimSince = claimSince;
    this.claimTokens = claimTokens;
    this.claimMet = claimMet;
    this.claimSpent = claimSpent;
    this.log = log;
    this.spent = spent;
    this.mark = mark;
  }

  /** The windows this entry holds a count of, ascending (a copy). */
  public long[] windows() {
    return windows.clone();
  }

  /** Count of a window; 0 when it was never counted or has been dropped. */
  public long count(long window) {
    int i = Arrays.binarySearch(windows, window);
    return i >= 0 ? counts[i] : 0;
  }

  /**
   * Whether the window has a count, even of 0 (a flush of nothing new writes one, as HINCRBY by 0
   * writes the field): the exact scripts take a window that exists as opened by a node ahead.
   */
  public boolean hasWindow(long window) {
    return Arrays.binarySearch(windows, window) >= 0;
  }

  /** Adds to a window's count (HINCRBY). */
  public CounterEntry addToWindow(long window, long amount) {
    int i = Arrays.binarySearch(windows, window);
    if (i >= 0) {
      long[] c = counts.clone();
      c[i] = saturatedAdd(c[i], amount);
      return new CounterEntry(windows, c, bucket, at, backlog, nodes, sequences, seenMillis, claimWindows, claimNodes,
          claimValues, claimSince, claimTokens, claimMet, claimSpent, log, spent, mark);
    }
    int at = -i - 1;
    long[] w = new long[windows.length + 1];
    long[] c = new long[windows.length + 1];
    System.arraycopy(windows, 0, w, 0, at);
    System.arraycopy(counts, 0, c, 0, at);
    w[at] = window;
    c[at] = amount;
    System.arraycopy(windows, at, w, at + 1, windows.length - at);
    System.arraycopy(counts, at, c, at + 1, windows.length - at);
    long[] a = null;
    if (spent != null) {
      a = new long[windows.length + 1];
      System.arraycopy(spent, 0, a, 0, at);
      System.arraycopy(spent, at, a, at + 1, windows.length - at);
    }
    return new CounterEntry(w, c, bucket, this.at, backlog, nodes, sequences, seenMillis, claimWindows, claimNodes,
        claimValues, claimSince, claimTokens, claimMet, claimSpent, log, a, mark);
  }

  /** The nodes' allowances spent on a window ({@code A<window>}); 0 if none. */
  long spentOn(long window) {
    int i = Arrays.binarySearch(windows, window);
    return i >= 0 && spent != null ? spent[i] : 0;
  }

  /** Sets the allowances spent on a window, which has a count. */
  CounterEntry withSpent(long window, long value) {
    int i = Arrays.binarySearch(windows, window);
    if (i < 0) {
      throw new IllegalStateException("allowances spent on window " + window + ", which has no count");
    }
    long[] a = spent == null ? new long[windows.length] : spent.clone();
    a[i] = value;
    return new CounterEntry(windows, counts, bucket, at, backlog, nodes, sequences, seenMillis, claimWindows, claimNodes,
        claimValues, claimSince, claimTokens, claimMet, claimSpent, log, a, mark);
  }

  /**
   * Keeps {@code window}, the one before it and any newer ones (a late delta for an old window must not
   * drop the current counts): {@code flush.lua}'s HDEL loop.
   */
  public CounterEntry dropBefore(long window) {
    return dropOlderThan(window - 1);
  }

  /** Keeps {@code window} and any newer ones: a fixed window's exact take, where no older count weighs. */
  public CounterEntry dropOlderThan(long window) {
    int keep = 0;
    while (keep < windows.length && windows[keep] < window) {
      keep++;
    }
    int claims = 0;
    for (long cw : claimWindows) {
      claims += cw >= window ? 1 : 0;
    }
    if (keep == 0 && claims == claimWindows.length) {
      return this;
    }
    long[] cw = new long[claims];
    String[] cn = new String[claims];
    long[] cv = new long[claims];
    long[] cs = new long[claims];
    long[] ct = new long[claims];
    long[] cm = new long[claims];
    long[] cx = new long[claims];
    for (int i = 0, j = 0; i < claimWindows.length; i++) {
      if (claimWindows[i] >= window) {
        cw[j] = claimWindows[i];
        cn[j] = claimNodes[i];
        cv[j] = claimValues[i];
        ct[j] = tokenAt(i);
        cm[j] = metAt(i);
        cx[j] = spentAt(i);
        cs[j++] = claimSince[i];
      }
    }
    return new CounterEntry(Arrays.copyOfRange(windows, keep, windows.length), Arrays.copyOfRange(counts, keep,
        counts.length), bucket, at, backlog, nodes, sequences, seenMillis, cw, cn, cv, cs, ct, cm, cx, log,
        spent == null ? null : Arrays.copyOfRange(spent, keep, spent.length), mark);
  }

  /** GCRA: whether the bucket's state is, as stored, base time {@code at} and backlog {@code backlog}. */
  boolean bucketIs(long at, long backlog) {
    return bucket && this.at == at && this.backlog == backlog;
  }

  boolean hasBucket() {
    return bucket;
  }

  /** GCRA: the newest time seen, microseconds. */
  long at() {
    return at;
  }

  /** GCRA: backlog at {@link #at()}, scaled units. */
  long backlog() {
    return backlog;
  }

  /**
   * GCRA: the time a caller at {@code now} counts at: the newest time seen when its clock is a little
   * behind, so the state never goes back in time ({@code drained} in prelude.lua).
   */
  long bucketTime(long now) {
    return bucket ? Math.max(now, at) : now;
  }

  /** GCRA: the backlog drained to {@code time} (at least {@link #at()}), never below 0; 0 without a bucket. */
  long backlogAt(long time, long scale) {
    return bucket ? Counter.drained(backlog, time - at, scale) : 0;
  }

  CounterEntry withBucket(long at, long backlog) {
    return new CounterEntry(windows, counts, true, at, backlog, nodes, sequences, seenMillis, claimWindows, claimNodes,
        claimValues, claimSince, claimTokens, claimMet, claimSpent, log, spent, mark);
  }

  /** GCRA: the bucket as a token claim leaves it, its backlog the highest point claims took it to (the mark). */
  CounterEntry withClaimedBucket(long at, long backlog) {
    return new CounterEntry(windows, counts, true, at, backlog, nodes, sequences, seenMillis, claimWindows, claimNodes,
        claimValues, claimSince, claimTokens, claimMet, claimSpent, log, spent, new long[] {at, backlog});
  }

  /**
   * GCRA: how low a give-back may take the backlog at {@code time}: the mark (the highest point claims
   * took it to) drained to then; 0 where no claim marked the bucket.
   */
  long claimsFloorAt(long time, long scale) {
    return mark == null ? 0 : Counter.drained(mark[1], Math.max(0, time - mark[0]), scale);
  }

  /** The sliding window log; empty when this key has none. */
  public PermitLog log() {
    return log == null ? PermitLog.EMPTY : log;
  }

  public CounterEntry withLog(PermitLog log) {
    return new CounterEntry(windows, counts, bucket, at, backlog, nodes, sequences, seenMillis, claimWindows, claimNodes,
        claimValues, claimSince, claimTokens, claimMet, claimSpent, log, spent, mark);
  }

  /** Last sequence of {@code nodeId} applied to this key, or -1. */
  public long sequenceOf(String nodeId) {
    for (int i = 0; i < nodes.length; i++) {
      if (nodes[i].equals(nodeId)) {
        return sequences[i];
      }
    }
    return -1;
  }

  /**
   * Records {@code sequence} for {@code nodeId} and forgets nodes not seen for {@code retainMillis}; of
   * more than {@code maxNodes} nodes, the least recently seen are forgotten. A forgotten node's next
   * batch counts as new here; the store's per-node batch record still stops a whole replay.
   */
  public CounterEntry withSequence(String nodeId, long sequence, long nowMillis, long retainMillis, int maxNodes) {
    int n = 0;
    String[] nn = new String[nodes.length + 1];
    long[] ss = new long[nodes.length + 1];
    long[] tt = new long[nodes.length + 1];
    nn[n] = nodeId;
    ss[n] = sequence;
    tt[n++] = nowMillis;
    for (int i = 0; i < nodes.length; i++) {
      if (!nodes[i].equals(nodeId) && nowMillis - seenMillis[i] < retainMillis) {
        nn[n] = nodes[i];
        ss[n] = sequences[i];
        tt[n++] = seenMillis[i];
      }
    }
    if (n > maxNodes) {
      // keep the most recently seen (the first is the node writing now)
      Integer[] order = new Integer[n - 1];
      for (int i = 0; i < order.length; i++) {
        order[i] = i + 1;
      }
      long[] seen = tt;
      Arrays.sort(order, (a, b) -> Long.compare(seen[b], seen[a]));
      String[] kn = new String[maxNodes];
      long[] ks = new long[maxNodes];
      long[] kt = new long[maxNodes];
      kn[0] = nn[0];
      ks[0] = ss[0];
      kt[0] = tt[0];
      for (int i = 1; i < maxNodes; i++) {
        kn[i] = nn[order[i - 1]];
        ks[i] = ss[order[i - 1]];
        kt[i] = tt[order[i - 1]];
      }
      return new CounterEntry(windows, counts, bucket, at, backlog, kn, ks, kt, claimWindows, claimNodes, claimValues,
          claimSince, claimTokens, claimMet, claimSpent, log, spent, mark);
    }
    return new CounterEntry(windows, counts, bucket, at, backlog, Arrays.copyOf(nn, n), Arrays.copyOf(ss, n),
        Arrays.copyOf(tt, n), claimWindows, claimNodes, claimValues, claimSince, claimTokens, claimMet, claimSpent, log, spent, mark);
  }

  private int claimIndex(String nodeId, long window) {
    for (int i = 0; i < claimWindows.length; i++) {
      if (claimWindows[i] == window && claimNodes[i].equals(nodeId)) {
        return i;
      }
    }
    return -1;
  }

  /** The claim {@code nodeId} holds on a window; 0 if none. */
  long claimOf(String nodeId, long window) {
    int i = claimIndex(nodeId, window);
    return i >= 0 ? claimValues[i] : 0;
  }

  /** Sliding window: when {@code nodeId} became a claimant of the window (us from its start), or -1. */
  long claimSinceOf(String nodeId, long window) {
    int i = claimIndex(nodeId, window);
    return i >= 0 && claimSince[i] >= 0 ? claimSince[i] / SPLITS : -1;
  }

  /** Sliding window: the nodes {@code nodeId} split the fading by when it claimed (1 if not a claimant). */
  int claimSplitOf(String nodeId, long window) {
    int i = claimIndex(nodeId, window);
    return i >= 0 && claimSince[i] >= 0 ? split(claimSince[i]) : 1;
  }

  /**
   * A claimant's time and split packed in one long (flush.lua keeps them as 'since:n'): since times
   * {@link #SPLITS} plus n, n below SPLITS ({@link Delta#MAX_NODES}).
   */
  private static final long SPLITS = 4096;

  private static int split(long packed) {
    return (int) Math.max(1, packed % SPLITS);
  }

  /** The last window any node holds a claim on (claims ahead included); Long.MIN_VALUE when none. */
  long lastClaimWindow() {
    long last = Long.MIN_VALUE;
    for (long cw : claimWindows) {
      last = Math.max(last, cw);
    }
    return last;
  }

  /** The sum of the claims on a window. */
  public long claimsOn(long window) {
    long sum = 0;
    for (int i = 0; i < claimWindows.length; i++) {
      sum += claimWindows[i] == window ? claimValues[i] : 0;
    }
    return sum;
  }

  /** Sliding window: the claimants' parts of the fading (each 1 / n), other than {@code except}'s. */
  double claimantsOn(long window, String except) {
    double sum = 0;
    for (int i = 0; i < claimWindows.length; i++) {
      if (claimWindows[i] == window && claimSince[i] >= 0 && !claimNodes[i].equals(except)) {
        sum += 1.0 / split(claimSince[i]);
      }
    }
    return sum;
  }

  /** Sliding window: the sum of the claimants' times, each divided by its n, other than {@code except}'s. */
  double claimantTimesOn(long window, String except) {
    double sum = 0;
    for (int i = 0; i < claimWindows.length; i++) {
      if (claimWindows[i] == window && claimSince[i] >= 0 && !claimNodes[i].equals(except)) {
        sum += (double) (claimSince[i] / SPLITS) / split(claimSince[i]);
      }
    }
    return sum;
  }

  /** Sets {@code nodeId}'s claim on a window (0 and since -1: none); a claimant split the fading by {@code split}. */
  CounterEntry withClaim(String nodeId, long window, long value, long since, int split) {
    int found = claimIndex(nodeId, window);
    return withClaim(nodeId, window, value, since, split, found >= 0 ? metAt(found) : 0);
  }

  /** {@link #withClaim}, and what of it {@code nodeId} has met (see {@link #metOf}), at most the claim. */
  CounterEntry withClaim(String nodeId, long window, long value, long since, int split, long met) {
    if (since >= 0) {
      since = since * SPLITS + Math.min(SPLITS - 1, Math.max(1, split));
    }
    int found = claimIndex(nodeId, window);
    return withEntry(found, nodeId, window, value, since, found >= 0 ? tokenAt(found) : 0,
        Math.max(0, Math.min(met, value)), found >= 0 ? spentAt(found) : 0);
  }

  /**
   * What of its claim on a window {@code nodeId} said it had admitted and not counted (flush.lua's
   * {@code u<window>:<node>}); 0 if none.
   */
  long metOf(String nodeId, long window) {
    int i = claimIndex(nodeId, window);
    return i >= 0 ? metAt(i) : 0;
  }

  /** The sum of what the nodes met of their claims on a window ({@code U<window>}). */
  long metOn(long window) {
    long sum = 0;
    for (int i = 0; i < claimWindows.length; i++) {
      sum += claimWindows[i] == window ? metAt(i) : 0;
    }
    return sum;
  }

  /** The highest take token of {@code nodeId} counted or settled on a window; 0 if none. */
  long takeTokenOf(String nodeId, long window) {
    int i = claimIndex(nodeId, window);
    return i >= 0 ? tokenAt(i) : 0;
  }

  /** Records {@code nodeId}'s take token on a window (flush.lua's {@code x<window>:<node>}). */
  CounterEntry withTakeToken(String nodeId, long window, long token) {
    return withRecords(nodeId, window, token, spentBy(nodeId, window));
  }

  private long tokenAt(int i) {
    return claimTokens == null ? 0 : claimTokens[i];
  }

  private long metAt(int i) {
    return claimMet == null ? 0 : claimMet[i];
  }

  private long spentAt(int i) {
    return claimSpent == null ? 0 : claimSpent[i];
  }

  /** The allowance {@code nodeId} has spent on a window in all ({@code flush.lua}'s {@code a<window>:<node>}); 0 if none. */
  long spentBy(String nodeId, long window) {
    int i = claimIndex(nodeId, window);
    return i >= 0 ? spentAt(i) : 0;
  }

  /** Records the allowance {@code nodeId} has spent on a window in all. */
  CounterEntry withSpentBy(String nodeId, long window, long spentBy) {
    return withRecords(nodeId, window, takeTokenOf(nodeId, window), spentBy);
  }

  /** {@code nodeId}'s claim entry on a window (a new one if none) with its take token and allowance spent as given. */
  private CounterEntry withRecords(String nodeId, long window, long token, long spentBy) {
    int found = claimIndex(nodeId, window);
    return withEntry(found, nodeId, window, found >= 0 ? claimValues[found] : 0, found >= 0 ? claimSince[found] : -1,
        token, found >= 0 ? metAt(found) : 0, spentBy);
  }

  /** Replaces claim entry {@code found} (-1: none yet) with the given one, or drops it when it holds nothing. */
  private CounterEntry withEntry(int found, String nodeId, long window, long value, long since, long token, long met,
      long spentBy) {
    boolean none = value == 0 && since < 0 && token == 0 && met == 0 && spentBy == 0;
    if (found < 0 && none) {
      return this;
    }
    int n = claimWindows.length + (found < 0 ? 1 : none ? -1 : 0);
    long[] cw = new long[n];
    String[] cn = new String[n];
    long[] cv = new long[n];
    long[] cs = new long[n];
    long[] ct = new long[n];
    long[] cm = new long[n];
    long[] cx = new long[n];
    int j = 0;
    for (int i = 0; i < claimWindows.length; i++) {
      if (i != found) {
        cw[j] = claimWindows[i];
        cn[j] = claimNodes[i];
        cv[j] = claimValues[i];
        ct[j] = tokenAt(i);
        cm[j] = metAt(i);
        cx[j] = spentAt(i);
        cs[j++] = claimSince[i];
      }
    }
    if (!none) {
      cw[j] = window;
      cn[j] = nodeId;
      cv[j] = value;
      cs[j] = since;
      ct[j] = token;
      cm[j] = met;
      cx[j] = spentBy;
    }
    return new CounterEntry(windows, counts, bucket, at, backlog, nodes, sequences, seenMillis, cw, cn, cv, cs, ct, cm, cx, log, spent, mark);
  }

  /** Nodes whose sequence this key remembers. */
  public int nodeCount() {
    return nodes.length;
  }

  static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }

  static long saturatedMultiply(long a, long b) {
    long hi = Math.multiplyHigh(a, b);
    long lo = a * b;
    return (hi == 0 && lo >= 0) || (hi == -1 && lo < 0) ? lo : Long.MAX_VALUE;
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("CounterEntry{");
    for (int i = 0; i < windows.length; i++) {
      s.append(windows[i]).append('=').append(counts[i]).append(' ');
    }
    if (bucket) {
      s.append("b=").append(at).append(" t=").append(backlog).append(' ');
    }
    if (log().size() > 0) {
      s.append(log).append(' ');
    }
    return s.append("nodes=").append(nodes.length).append('}').toString();
  }
}
