package io.sluice.region;

import static io.sluice.region.ShareArithmetic.FIELDS;
import static io.sluice.region.ShareArithmetic.shareFor;

import io.sluice.node.Limit;
import io.sluice.node.Ticker;
import io.sluice.region.RegionCoordinator.QuotaSummary;
import io.sluice.region.RegionCoordinator.RegionSummary;
import io.sluice.region.RegionShareStore.KeyState;
import io.sluice.region.RegionShareStore.ShareWrite;
import io.sluice.region.RegionShareStore.WriteResult;
import io.sluice.sync.spi.Counter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The state of one quota's round: the window, the keys, and per key and region what is held and
 * targeted. {@link #read}, then {@link #shrink} and {@link #grow} (the two phases that keep the
 * shares held at most G), then {@link #summarize}. One instance per quota and round.
 *
 * <p>Concurrency: used by the round thread only (rounds are serialized by {@link RegionCoordinator#round()}).
 */
final class QuotaRound {
  /**
   * How long a region's nodes may take to read a share written now: two of their syncs (100 ms by
   * default; each flush reads the shares) and a round trip (see {@link Allocator#target}).
   */
  static final long READ_LAG_NANOS = 250_000_000L;
  /**
   * How late, on average, a region's counts are in its Redis: half a sync of its nodes (100 ms by
   * default), whose flushes carry them.
   */
  static final long FLUSH_LAG_NANOS = 50_000_000L;
  private final CoordinatorConfig config;
  private final RegionLinks links;
  private final ShareMemory memory;
  /** This round's silent regions (see {@link NodeHeartbeats#listen}): read only. */
  private final boolean[] silent;
  /** Per region: reached since this replica took over; the round sets it for the regions it reaches. */
  private final boolean[] reachedSinceTakeOver;
  /** Read at every write rather than once: {@link RegionCoordinator#crash()} zeroes it from another thread. */
  private final LongSupplier epoch;

  final GlobalQuota q;
  final Limit limit;
  /** What the regions' shares are of: the quota's counter as its nodes keep it (its kind, static share, window). */
  private final Counter counter;
  private final Ticker ticker;
  final int n;
  final long windowNanos;
  final long now;
  final long w;
  /** Of the current window, ns. */
  final long remaining;
  final long leaseEnd;
  final Duration ttl;
  final long staticShare;
  final Map<String, long[]> known;
  final boolean[] reachable;
  List<String> keyList;
  List<Map<String, KeyState>> states;
  long[][] targetNow;
  long[][] targetLater;
  long[][] heldNow;
  long[][] heldLaterMin;
  long[][] heldLaterMax;
  long[][] admitted;
  /**
   * Sliding quotas: per key and region, the most the region may weigh until its nodes read this
   * round's shares (see {@link Allocator#committed}); a share written below it still counts at it.
   */
  long[][] weighs;
  /** The index of each key in {@link #keyList}, for the second phase. */
  private Map<String, Integer> keyIndex;
  /** Per region, the shares the first phase wrote (null: none written, the region keeps what it holds). */
  long[][] written;
  long[][] writtenLater;
  /** The newer epoch a region refused this replica's writes for; 0 while none did. */
  private long refusedFor;

  QuotaRound(GlobalQuota q, CoordinatorConfig config, Ticker ticker, RegionLinks links, ShareMemory memory,
      boolean[] silent, boolean[] reachedSinceTakeOver, LongSupplier epoch) {
    this.config = config;
    this.links = links;
    this.memory = memory;
    this.silent = silent;
    this.reachedSinceTakeOver = reachedSinceTakeOver;
    this.epoch = epoch;
    this.q = q;
    this.limit = q.limit();
    this.n = links.size();
    this.counter = Counter.regional(limit, n);
    this.ticker = ticker;
    this.windowNanos = q.window().toNanos();
    this.now = ticker.read();
    this.w = Math.floorDiv(now, windowNanos);
    this.remaining = (w + 1) * windowNanos - now;
    long leaseWindows = Math.max(1, (config.lease().toNanos() + windowNanos - 1) / windowNanos);
    this.leaseEnd = w + leaseWindows;
    this.ttl = Duration.ofNanos((leaseEnd + 2) * windowNanos - now);
    this.staticShare = q.quota() / n;
    this.known = memory.known(q.name());
    this.reachable = new boolean[n];
  }

  /** The newer epoch a region accepted, once {@link #shrink} or {@link #grow} returned true. */
  long refusedFor() {
    return refusedFor;
  }

  /** Which keys (those any region flushed lately, and those a lease still covers somewhere), and their state per region. */
  void read() {
    Set<String> keys = new LinkedHashSet<>();
    for (int r = 0; r < n; r++) {
      try {
        for (String key : links.client(r).keys(limit, w, config.maxKeysPerQuota())) {
          if (q.matches(key)) {
            keys.add(key);
          }
        }
        reachable[r] = true;
        reachedSinceTakeOver[r] = true;
      } catch (RuntimeException e) {
        links.failed();
      }
    }
    for (int r = 0; r < n; r++) {
      // (its keys still count: another region's demand for them does)
      reachable[r] &= !silent[r];
    }
    for (Map.Entry<String, long[]> e : known.entrySet()) {
      for (int r = 0; r < n; r++) {
        if (e.getValue()[r * FIELDS + 3] >= w) {
          keys.add(e.getKey());
          break;
        }
      }
    }
    memory.retain(q.name(), keys);
    keyList = new ArrayList<>(keys);
    readStates();
  }

  private void readStates() {
    states = new ArrayList<>(n);
    for (int r = 0; r < n; r++) {
      Map<String, KeyState> byKey = new HashMap<>();
      if (reachable[r] && !keyList.isEmpty()) {
        try {
          for (KeyState s : links.client(r).read(limit, w, keyList)) {
            byKey.put(s.key(), s);
          }
        } catch (RuntimeException e) {
          reachable[r] = false;
          links.failed();
        }
      }
      states.add(byKey);
    }
  }

  /** The targets, and the first phase: every share that shrinks, written; true when a region fenced this leader. */
  boolean shrink() {
    int k = keyList.size();
    targetNow = new long[k][];
    targetLater = new long[k][];
    heldNow = new long[k][n];
    heldLaterMin = new long[k][n];
    heldLaterMax = new long[k][n];
    admitted = new long[k][n];
    weighs = new long[k][n];
    List<List<ShareWrite>> shrink = perRegion();
    for (int i = 0; i < k; i++) {
      Allocator.Target t = target(i);
      for (int r = 0; r < n; r++) {
        if (reachable[r]) {
          shrink.get(r).add(new ShareWrite(keyList.get(i), Math.min(t.now()[r], heldNow[i][r]),
              Math.min(t.later()[r], heldLaterMin[i][r]), leaseEnd));
        }
      }
    }
    written = new long[n][];
    writtenLater = new long[n][];
    for (int r = 0; r < n; r++) {
      if (!reachable[r] || shrink.get(r).isEmpty()) {
        continue;
      }
      WriteResult res = links.write(r, epoch.getAsLong(), counter, w, micros(now), ttl, shrink.get(r));
      if (res == null) {
        reachable[r] = false; // held stays as it was: a shrink not confirmed may not have happened
      } else if (!res.accepted()) {
        refusedFor = res.epoch();
        return true;
      } else {
        written[r] = res.shares();
        writtenLater[r] = res.nextShares();
        for (int i = 0; i < k; i++) {
          long atLeast = weighs[i][r];
          ShareArithmetic.record(known.get(keyList.get(i)), r, w, Math.max(atLeast, res.shares()[i]),
              Math.max(atLeast, res.nextShares()[i]), leaseEnd);
          notePeak(keyList.get(i), r, Math.max(atLeast, res.shares()[i]), Math.max(atLeast, res.nextShares()[i]));
        }
      }
    }
    return false;
  }

  private List<List<ShareWrite>> perRegion() {
    List<List<ShareWrite>> lists = new ArrayList<>(n);
    for (int r = 0; r < n; r++) {
      lists.add(new ArrayList<>());
    }
    return lists;
  }

  /** Key i: what each region holds now and later, its demand, and the allocator's target. */
  private Allocator.Target target(int i) {
    String key = keyList.get(i);
    long[] m = known.computeIfAbsent(key, x -> ShareArithmetic.fresh(n));
    double[] rates = new double[n];
    long[] p = peaksOf(key);
    for (int r = 0; r < n; r++) {
      int b = r * FIELDS;
      KeyState s = states.get(r).get(key);
      if (reachable[r] && s != null) {
        takeRegionsRecord(m, b, s);
        admitted[i][r] = counted(s);
      }
      held(i, r, m, b);
      rates[r] = Math.max(0, Double.longBitsToDouble(m[b + 7])); // -1: no rate observed yet
      if (!q.sliding() && !q.bucket()) {
        // (a token-bucket quota's rates are split whole at every round, as a sliding window's: a region
        // leaves unused whatever margin it was given, and no later round takes it back)
        rates[r] = ShareArithmetic.plannedRate(rates[r], Double.longBitsToDouble(m[b + 9]));
      } else if (q.sliding() && reachable[r] && s != null) {
        rates[r] = slidingRate(s);
      }
      applyPeaks(i, r, m, b, p);
    }
    ShareArithmetic.assumeTheMostOfUnknownRegions(q.quota(), m, reachable, reachedSinceTakeOver, heldNow[i],
        heldLaterMax[i]);
    Allocator.RegionView[] views = new Allocator.RegionView[n];
    for (int r = 0; r < n; r++) {
      views[r] = new Allocator.RegionView(reachable[r], admitted[i][r], rates[r],
          ShareArithmetic.floor(q.floor(links.name(r), n), rates[r], windowNanos), heldNow[i][r], heldLaterMin[i][r],
          heldLaterMax[i][r]);
      if (q.sliding() && reachable[r]) {
        // a region whose share is cut below what it weighs is held here at what it weighs, so that
        // once out of reach it is counted at that, as its count fades, not at its smaller share
        weighs[i][r] = Allocator.committed(views[r], READ_LAG_NANOS);
        ShareArithmetic.atLeast(m, r * FIELDS, w, weighs[i][r]);
      }
    }
    // (a sliding window's count goes on weighing across the window's edge, all of it at the next
    // window's start, so a region's share of the next window may be no smaller than what it may count
    // by then, its share now: leases carry the current split, and shares move within a window, as
    // what the regions counted before fades)
    Allocator.Target t = q.bucket() ? Allocator.bucketTarget(q.quota(), windowNanos, views)
        : q.sliding() ? Allocator.slidingTarget(q.quota(), windowNanos, views, READ_LAG_NANOS)
        : Allocator.target(q.quota(), remaining, windowNanos, views, READ_LAG_NANOS,
            FLUSH_LAG_NANOS);
    targetNow[i] = t.now();
    targetLater[i] = t.later();
    return t;
  }

  /**
   * A sliding quota's region's demand, per ns: its attempts over the last window's length, as its
   * counter weighs them (this window's, and the previous one's at their weight). Its target is a split
   * of a whole window's demand, which this measures whole; the smoothed rate between rounds, made of
   * attempts its nodes flush every 100 ms read every 250 ms, swung by a fifth from round to round with
   * the number of flushes a round saw (in the simulated rig, where they align exactly: 731 and 952 a
   * second for a demand of 840), and a swing there moves the split at once. The counts reach the
   * region's Redis up to a sync interval late ({@link #FLUSH_LAG_NANOS} on average), so the window is
   * taken as ending that much before the round: measured to the round, demand read 5% low with windows
   * of 1 s and the smallest region got 94% of its max-min fair share. (Never below the previous
   * window's whole count, tried instead: fair to 99.5%, but a region whose demand fell to nothing kept
   * its old split for a whole window, 66.9% of G there in real time.) A region that asked nothing in
   * the previous window (a key new to it) is measured over the part of this window gone by: over the
   * whole length its demand read a quarter of what it was at the first round, its share's floor for
   * the read lag with it, and a new key's first window went 1.2% over G.
   */
  private double slidingRate(KeyState s) {
    long attempts = s.admitted() + s.denied();
    if (s.attemptsBefore() <= 0) {
      return attempts / (double) Math.max(1, windowNanos - remaining - FLUSH_LAG_NANOS);
    }
    double weight = Math.min(1.0, (double) (remaining + FLUSH_LAG_NANOS) / windowNanos);
    return (attempts + s.attemptsBefore() * weight) / windowNanos;
  }

  /**
   * What a region has counted of a key against its share now: window w's count, and for a sliding
   * window also window w - 1's at the weight the counter gives it now (rounded up: the safe side).
   */
  private long counted(KeyState s) {
    if (!q.sliding() || s.admittedBefore() <= 0) {
      return s.admitted();
    }
    return s.admitted() + (long) Math.ceil(s.admittedBefore() * ((double) remaining / windowNanos) - 1e-9);
  }

  /** A reachable region's state of the key: its record of its share, and its demand. */
  private void takeRegionsRecord(long[] m, int b, KeyState s) {
    if (s.shareWindow() >= 0) { // the region's own record is the truth
      m[b] = s.shareWindow();
      m[b + 1] = s.share();
      m[b + 2] = s.nextShare();
      m[b + 3] = s.leaseEnd();
    } else if (m[b + 3] < w) {
      m[b] = -1; // the region has none (never written, or its data was lost): it enforces G / R
    }
    // (else its Redis lost the record while a lease of ours covers the window: its nodes keep the
    // share they read, so the memory of what was written stands until the lease ends)
    ShareArithmetic.observeDemand(m, b, s.admitted() + s.denied(), s.attemptsBefore(), w, windowNanos, now,
        config.smoothing(), config.roundInterval().toNanos());
  }

  /** Key i, region r: the share it holds now, and the least and most it holds in the windows its lease covers. */
  private void held(int i, int r, long[] m, int b) {
    heldNow[i][r] = holds(m, b, w);
    heldLaterMin[i][r] = Long.MAX_VALUE;
    heldLaterMax[i][r] = 0;
    for (long x = w + 1; x <= leaseEnd; x++) {
      long h = holds(m, b, x);
      heldLaterMin[i][r] = Math.min(heldLaterMin[i][r], h);
      heldLaterMax[i][r] = Math.max(heldLaterMax[i][r], h);
    }
  }

  /**
   * What a region may weigh in window x as its record tells: its share there; for a sliding quota also
   * its share of the window before, whose count still weighs (the first window after a lease, where the
   * static share may be less than the leased one the region filled), where the record reaches it (the
   * record's own window holds what the region weighed when it was written, see {@link #weighs}).
   */
  private long holds(long[] m, int b, long x) {
    long share = shareFor(m, b, x, staticShare);
    return q.sliding() && x - 1 >= m[b] && m[b] >= 0 ? Math.max(share, shareFor(m, b, x - 1, staticShare)) : share;
  }

  /** A silent region counts at its peaks; a region heard this round starts its peaks afresh from what it holds. */
  private void applyPeaks(int i, int r, long[] m, int b, long[] p) {
    int pb = r * 3;
    if (silent[r]) {
      long peakNow = p[pb] == w ? p[pb + 1] : p[pb] == w - 1 ? p[pb + 2] : -1;
      heldNow[i][r] = Math.max(heldNow[i][r], peakNow);
      if (p[pb] == w) {
        heldLaterMax[i][r] = Math.max(heldLaterMax[i][r], p[pb + 2]);
      }
    } else {
      p[pb] = w;
      p[pb + 1] = heldNow[i][r];
      p[pb + 2] = shareFor(m, b, w + 1, staticShare);
    }
  }

  /** The key's peaks (see {@link ShareMemory}), per region {window, now, next}. */
  private long[] peaksOf(String key) {
    return memory.peaksOf(q.name(), key, n);
  }

  /** A share written to region r for the key: the peaks keep the larger. */
  private void notePeak(String key, int r, long share, long next) {
    memory.notePeak(q.name(), key, n, r, w, share, next);
  }

  /** The second phase: what grows, from the budget the first left; true when a region fenced this leader. */
  boolean grow() {
    keyIndex = new HashMap<>();
    for (int i = 0; i < keyList.size(); i++) {
      keyIndex.put(keyList.get(i), i);
    }
    List<List<ShareWrite>> grow = perRegion();
    for (int i = 0; i < keyList.size(); i++) {
      growKey(i, grow);
    }
    for (int r = 0; r < n; r++) {
      if (grow.get(r).isEmpty()) {
        continue;
      }
      List<ShareWrite> writes = grow.get(r);
      // (a bucket's share is a rate from the moment it is written: the growth counts from after every
      // shrink of the first phase, not from the round's start)
      WriteResult res = links.write(r, epoch.getAsLong(), counter, w, micros(ticker.read()), ttl, writes);
      if (res != null && !res.accepted()) {
        refusedFor = res.epoch();
        return true;
      }
      for (int j = 0; j < writes.size(); j++) {
        long[] m = known.get(writes.get(j).key());
        long atLeast = weighs[keyIndex.get(writes.get(j).key())][r];
        // not confirmed: count it as written, the larger of the two (the safe side for the others)
        ShareArithmetic.record(m, r, w, Math.max(atLeast, res != null ? res.shares()[j] : writes.get(j).share()),
            Math.max(atLeast, res != null ? res.nextShares()[j] : writes.get(j).nextShare()), leaseEnd);
        notePeak(writes.get(j).key(), r, Math.max(atLeast, Math.max(writes.get(j).share(),
            res != null ? res.shares()[j] : 0)), Math.max(atLeast, Math.max(writes.get(j).nextShare(),
            res != null ? res.nextShares()[j] : 0)));
      }
    }
    return false;
  }

  /**
   * Key i: the increases the budget left by the first phase allows, added to {@code grow} per region.
   * A region counts against the budget at what it holds, or for a sliding quota at what it weighs
   * where that is more (see {@link #weighs}); a share raised to no more than that costs nothing more.
   */
  private void growKey(int i, List<List<ShareWrite>> grow) {
    long budgetNow = q.quota();
    long budgetLater = q.quota();
    long[] baseNow = new long[n];
    long[] baseLater = new long[n];
    long[] countedNow = new long[n];
    long[] countedLater = new long[n];
    long[] wantNow = new long[n];
    long[] wantLater = new long[n];
    for (int r = 0; r < n; r++) {
      if (written[r] != null) {
        baseNow[r] = written[r][i];
        baseLater[r] = writtenLater[r][i];
        wantNow[r] = targetNow[i][r];
        wantLater[r] = targetLater[i][r];
      } else {
        baseNow[r] = heldNow[i][r];
        baseLater[r] = heldLaterMax[i][r];
        wantNow[r] = baseNow[r];
        wantLater[r] = baseLater[r];
      }
      countedNow[r] = Math.max(baseNow[r], weighs[i][r]);
      countedLater[r] = Math.max(baseLater[r], weighs[i][r]);
      budgetNow -= countedNow[r];
      budgetLater -= countedLater[r];
    }
    long[] incNow = Allocator.increases(budgetNow, countedNow, wantNow);
    long[] incLater = Allocator.increases(budgetLater, countedLater, wantLater);
    for (int r = 0; r < n; r++) {
      long now = Math.max(baseNow[r], Math.min(wantNow[r], countedNow[r] + incNow[r]));
      long later = Math.max(baseLater[r], Math.min(wantLater[r], countedLater[r] + incLater[r]));
      if (written[r] != null && (now > baseNow[r] || later > baseLater[r])) {
        grow.get(r).add(new ShareWrite(keyList.get(i), now, later, leaseEnd));
      }
    }
  }

  private static long micros(long nanos) {
    return Math.floorDiv(nanos, 1_000L);
  }

  /** The quota after the round, summed over its keys. */
  QuotaSummary summarize() {
    long[] shares = new long[n];
    long[] later = new long[n];
    long[] counted = new long[n];
    double[] demand = new double[n];
    long total = 0;
    long over = 0;
    for (int i = 0; i < keyList.size(); i++) {
      long[] m = known.get(keyList.get(i));
      long sum = 0;
      for (int r = 0; r < n; r++) {
        shares[r] += shareFor(m, r * FIELDS, w, staticShare);
        later[r] += shareFor(m, r * FIELDS, w + 1, staticShare);
        counted[r] += admitted[i][r];
        sum += admitted[i][r];
        double rate = Double.longBitsToDouble(m[r * FIELDS + 7]);
        demand[r] += Math.max(0, rate) * 1e9;
      }
      total += sum;
      // (a token bucket's window may also hold its burst)
      over = Math.max(over, sum - q.quota() - q.burst());
    }
    List<RegionSummary> per = new ArrayList<>(n);
    for (int r = 0; r < n; r++) {
      per.add(new RegionSummary(links.name(r), reachable[r], shares[r], later[r], counted[r], demand[r]));
    }
    return new QuotaSummary(q.name(), w, keyList.size(), total, Math.max(0, over), per);
  }
}
