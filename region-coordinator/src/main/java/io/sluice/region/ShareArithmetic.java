package io.sluice.region;

/**
 * The arithmetic of a key's record, the {@code long[]} in which a replica keeps, per region, the
 * share it knows of and the region's demand (see {@link #FIELDS}): reading the share a window gets,
 * recording a write, measuring and smoothing demand, and the floors. Pure functions on the arrays
 * they are given; no state of its own.
 */
final class ShareArithmetic {
  /**
   * Per region in a state entry: share window, share, later share, lease end, attempts, window, time,
   * rate, the attempts of the window before as the last round read them, the spread of the rate's
   * readings ({@link #spread}), and the last round's own reading (attempts, over nanoseconds).
   */
  static final int FIELDS = 12;

  /** How much a reading moves the spread: about the last four rounds' readings count. */
  private static final double SPREAD_WEIGHT = 0.25;
  /**
   * A reading further than this from the running rate (relative) is a shift of demand, not noise:
   * the rate follows it, the spread does not (after a shift a region would be planned for a margin
   * it no longer needs for several rounds).
   */
  private static final double SHIFT = 0.3;
  /** The margin a fixed window quota's split plans for: this many spreads, at most {@link #MAX_MARGIN}. */
  private static final double SPREADS = 2;
  private static final double MAX_MARGIN = 0.3;

  private ShareArithmetic() {
  }

  /**
   * A region's floor for a key this round: the quota's, or for a region whose demand has faded to
   * under one request a window (no demand for a few rounds: the rate is smoothed) a tenth of it, at
   * least one permit. The rest goes to the regions that have demand, so floors do not cap utilisation
   * (three regions with floors of a tenth of G / 3 topped out at 93% of G with all demand in one),
   * while a region that wakes up is still admitted at once within its small floor; the next round
   * splits what is left of the window by the new demand, and the next windows split whole (a busy
   * region that used its share already keeps what it counted: with long windows the waking region
   * may have little until the window ends). A region right at one request a window may switch
   * between the two floors from round to round (no hysteresis yet).
   */
  static long floor(long floor, double ratePerNano, long windowNanos) {
    return ratePerNano * windowNanos < 1 ? Math.min(floor, Math.max(1, floor / 10)) : floor;
  }

  /**
   * Running demand rate per region: attempts (admitted + denied) per nanosecond, smoothed. Each round
   * observes what the region asked for since the round before and since the one before that: its
   * nodes flush every sync interval (100 ms), rounds come every 250 ms, so the last flushes a round
   * sees fall 50 ms further from it at one round than at the next and back (it reads 200 ms of demand
   * as 250, the next 300), and the round just after a window's start sees all of the window before (a
   * node's first decision in a window sends the last one's counts) where the next sees a window
   * begun 50 ms or more before its flushes; over two rounds both cancel. (Round by round, a steady
   * 600 a second read 520-730 in real time, and a region below the max-min level split by a low
   * reading admitted 81-90% of what it asked.) A reading that is a shift of demand is taken alone.
   */
  static void observeDemand(long[] m, int b, long attempts, long attemptsBefore, long w, long windowNanos,
      long now, double smoothing, long roundNanos) {
    long[] seen = seenSince(m[b + 5], m[b + 4], m[b + 8], m[b + 6], w, attempts, attemptsBefore, windowNanos, now);
    if (seen == null) {
      return;
    }
    double before = Double.longBitsToDouble(m[b + 7]);
    long pairSeen = seen[0];
    long pairSpan = seen[1];
    // (the round before came right before this one and read a round or so itself: not the first
    // round after a gap, or after a take-over, whose reading spans it; and this one's reading is not a
    // shift of demand, which the rate follows at once)
    if (now - m[b + 6] <= 2 * roundNanos && m[b + 11] <= 2 * roundNanos && !shift(before, seen[0], seen[1])) {
      pairSeen += m[b + 10];
      pairSpan += m[b + 11];
    }
    double rate = smoothed(before, pairSeen, pairSpan, smoothing, roundNanos);
    m[b + 9] = Double.doubleToLongBits(spread(Double.longBitsToDouble(m[b + 9]), before, pairSeen, pairSpan,
        roundNanos));
    m[b + 10] = seen[0];
    m[b + 11] = seen[1];
    m[b + 4] = attempts;
    m[b + 5] = w;
    m[b + 6] = now;
    m[b + 7] = Double.doubleToLongBits(rate);
    m[b + 8] = attemptsBefore;
  }

  /**
   * What a region asked for since the last round: {attempts, over nanoseconds}, or null when there is
   * no time to measure. The last round saw {@code lastAttempts} in window {@code lastWindow} at
   * {@code lastAt}; now window {@code w} holds {@code attempts} and window w - 1 {@code attemptsBefore}.
   * A round in the window after the last one's counts the rest of that window too (rounds on the
   * clock's grid fall just after window starts: without the previous window's end they saw a few
   * milliseconds of each window, and the estimate froze); a round further on measures from the
   * window's start. A round in the same window as the last one also counts what reached window w - 1
   * since ({@code lastAttemptsBefore}: w - 1's attempts as that round read them): the nodes' last
   * flush of a window comes after it ends, and a round just after the window's start missed it.
   */
  static long[] seenSince(long lastWindow, long lastAttempts, long lastAttemptsBefore, long lastAt, long w,
      long attempts, long attemptsBefore, long windowNanos, long now) {
    if (lastWindow == w && now > lastAt) {
      return new long[] {Math.max(0, attempts - lastAttempts) + Math.max(0, attemptsBefore - lastAttemptsBefore),
          now - lastAt};
    }
    if (lastWindow == w - 1 && now > lastAt) {
      return new long[] {Math.max(0, attemptsBefore - lastAttempts) + attempts, now - lastAt};
    }
    long span = now - w * windowNanos;
    return span <= 0 ? null : new long[] {attempts, span};
  }

  /**
   * The demand rate after observing {@code seen} attempts over {@code spanNanos}: the newest round
   * weighs {@code alpha}, scaled down by how much shorter than a round its span is. A round that
   * falls just after a window starts sees the new window for a few milliseconds, whose handful of
   * attempts once moved the rate as much as a whole round's (shares swung between equal regions when
   * rounds drifted in real time); now it moves it by its share of a round. {@code rate} below 0: none yet.
   */
  static double smoothed(double rate, long seen, long spanNanos, double alpha, long roundNanos) {
    double observed = (double) seen / spanNanos;
    if (rate < 0) {
      return observed;
    }
    double weight = alpha * Math.min(1.0, (double) spanNanos / roundNanos);
    return weight * observed + (1 - weight) * rate;
  }

  /**
   * The spread of a region's demand readings after one more: the mean relative distance of a round's
   * reading from the running rate before it, readings of half a round to three (two rounds' together)
   * that are not shifts ({@link #SHIFT}). A round reads the counts its region's nodes flushed, each
   * every sync interval: it sees two or three flushes of each node, and in real time a steady 600 a
   * second read 520-730.
   */
  static double spread(double spread, double rate, long seen, long spanNanos, long roundNanos) {
    if (rate <= 0 || spanNanos <= 0 || spanNanos < roundNanos / 2 || spanNanos > 3 * roundNanos) {
      return spread; // (a reading of a sliver of a round, or of a gap of many: not a round's noise)
    }
    return shift(rate, seen, spanNanos) ? spread
        : SPREAD_WEIGHT * Math.abs((double) seen / spanNanos - rate) / rate + (1 - SPREAD_WEIGHT) * spread;
  }

  /** Whether a reading of {@code seen} over {@code spanNanos} is a shift from the running {@code rate}. */
  private static boolean shift(double rate, long seen, long spanNanos) {
    return rate <= 0 || Math.abs((double) seen / spanNanos - rate) > SHIFT * rate;
  }

  /**
   * The demand rate a fixed window quota's split plans for: the running rate, and a margin for the
   * noise its readings show ({@link #spread}). A region below the max-min level was split the rate a
   * round read, and the busy regions were given the rest at once and spent it before a later round
   * could take it back: read 12% low at the round that split the window, the smallest region of
   * {@code RegionRealTimeIT} admitted 81-90% of what it asked, window after window. What a region
   * leaves of its margin the rounds that follow take back, as the rest of the window shrinks; a
   * region above the level gets the level either way; where readings are steady (rounds and flushes
   * in step, as in simulated time) there is no margin. (A sliding window quota splits whole windows at
   * every round: a margin there would stay unused, and is not planned.)
   */
  static double plannedRate(double rate, double spread) {
    return rate * (1 + Math.min(MAX_MARGIN, SPREADS * spread));
  }

  static long[] fresh(int n) {
    long[] m = new long[n * FIELDS];
    for (int r = 0; r < n; r++) {
      m[r * FIELDS] = -1;
      m[r * FIELDS + 3] = -1;
      m[r * FIELDS + 5] = Long.MIN_VALUE;
      m[r * FIELDS + 7] = Double.doubleToLongBits(-1);
    }
    return m;
  }

  static void record(long[] m, int r, long w, long share, long later, long leaseEnd) {
    int b = r * FIELDS;
    m[b] = w;
    m[b + 1] = share;
    m[b + 2] = later;
    m[b + 3] = leaseEnd;
  }

  /**
   * Raises what the record says region r holds in window w, and in the later windows its lease
   * covers, to at least {@code least} (a sliding quota's region weighing more than its share).
   */
  static void atLeast(long[] m, int b, long w, long least) {
    if (m[b] == w) {
      m[b + 1] = Math.max(m[b + 1], least);
      if (m[b + 3] > w) {
        m[b + 2] = Math.max(m[b + 2], least);
      }
    }
  }

  /** The share region r enforces in window x as far as this replica knows: its record, else G / R. */
  static long shareFor(long[] m, int b, long x, long staticShare) {
    long share = RegionShareStore.shareFor(m[b], m[b + 1], m[b + 2], m[b + 3], x);
    return share >= 0 ? share : staticShare;
  }

  /**
   * A region this replica has not reached since it took over, and of which it has no record (the old
   * leader's last ones may not have been replicated), may hold any share the old leader gave it. The
   * old leader kept the shares held at most G, so it holds at most G less what the regions known
   * here hold: count it at that (at least G / R) until it is reached.
   */
  static void assumeTheMostOfUnknownRegions(long quota, long[] m, boolean[] reachable,
      boolean[] reachedSinceTakeOver, long[] now, long[] later) {
    int n = now.length;
    long knownNow = 0;
    long knownLater = 0;
    boolean any = false;
    boolean[] unknown = new boolean[n];
    for (int r = 0; r < n; r++) {
      unknown[r] = !reachable[r] && !reachedSinceTakeOver[r] && m[r * FIELDS] < 0;
      if (unknown[r]) {
        any = true;
      } else {
        knownNow += now[r];
        knownLater += later[r];
      }
    }
    if (!any) {
      return;
    }
    for (int r = 0; r < n; r++) {
      if (unknown[r]) {
        now[r] = Math.max(now[r], quota - knownNow);
        later[r] = Math.max(later[r], quota - knownLater);
      }
    }
  }
}
