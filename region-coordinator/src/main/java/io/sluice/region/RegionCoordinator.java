package io.sluice.region;

import io.sluice.node.Limit;
import io.sluice.node.Ticker;
import io.sluice.region.RegionShareStore.KeyState;
import io.sluice.region.RegionShareStore.ShareWrite;
import io.sluice.region.RegionShareStore.WriteResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One replica of the region coordinator. Replicas form a Hazelcast cluster; the oldest member leads
 * and, once per round, for every global quota and key: reads each region's counts and denied demand,
 * splits the quota by demand ({@link Allocator}: floors, max-min fair water-filling, smoothing of
 * the demand rates) and writes each region's share with its epoch and a lease.
 *
 * <h2>Why the global sum never passes G</h2>
 * A region enforces, per window, the share its Redis holds for it (read back with every flush), or
 * the static share G / R when no lease covers the window. Shares of the current window are split
 * from what is left of it (G less what regions already counted), and a round writes in two phases:
 * first every share that shrinks (never below what the region already counted: the script clamps
 * it), then the ones that grow, from the budget the first phase left. So the shares held at any
 * moment sum to at most G. A region the coordinator cannot reach counts as holding the most its last
 * lease lets it use, and after the lease the static share. A new leader raises the epoch above any a
 * region has seen; regions refuse writes from an older epoch, and a refused leader stands down until
 * the cluster's membership changes.
 */
public final class RegionCoordinator implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(RegionCoordinator.class.getName());
  private static final String EPOCH_KEY = "epoch";
  /** Per region in a state entry: share window, share, later share, lease end, attempts, window, time, rate. */
  private static final int FIELDS = 8;
  /** Low bits of an epoch that belong to the replica that took it (see {@link #takeOver()}). */
  static final int EPOCH_OWNER_BITS = 16;

  private final CoordinatorConfig config;
  private final Ticker ticker;
  private final List<Region> regions;
  private final RegionClient[] clients;
  private final Leadership leadership;
  private final ScheduledExecutorService scheduler;

  /** The epoch this replica writes with while it leads; 0 when it does not. */
  private volatile long epoch;
  private boolean fenced;
  private long fencedAtMembership;
  /** A region could not be asked for its epoch when this replica took over. */
  private boolean epochUnverified;
  /** Per region: reached at least once since this replica took over (its records are then known). */
  private boolean[] reachedSinceTakeOver = new boolean[0];
  /** Per quota, per key: what this replica knows of every region (see {@link #FIELDS}). */
  private final Map<String, Map<String, long[]>> memory = new HashMap<>();
  /**
   * Per region: its node registry as the last round read it (node to heartbeat deadline), the nodes
   * seen to stop beating (their deadline did not move from one round to the next), and the ticker time
   * until which the region counts as silent: a node of it stopped, and may be deciding by its failure
   * policy on a share it can no longer read (its link to the region's Redis cut) until its lease ends.
   */
  private final List<Map<String, long[]>> registries = new ArrayList<>();
  private final long[] silentUntil;
  /** How long a node's heartbeat deadline may stand still before it counts as stopped (three default beats). */
  static final Duration STALL = Duration.ofSeconds(3);
  /** This round: per region, whether it is silent (counted at the most it may hold, nothing written). */
  private final boolean[] silent;
  /**
   * Per quota, per key, per region {window, now, next}: the most this replica wrote for the window and
   * the next since the round the region was last heard (every registered node beating): what a silent
   * region's nodes may hold, which a later, smaller write they did not read does not lower.
   */
  private final Map<String, Map<String, long[]>> peaks = new HashMap<>();
  private volatile Map<String, QuotaSummary> summaries = Map.of();

  private final AtomicLong rounds = new AtomicLong();
  private final AtomicLong refusedWrites = new AtomicLong();
  private final AtomicLong regionErrors = new AtomicLong();
  private final AtomicLong leaderships = new AtomicLong();

  RegionCoordinator(CoordinatorConfig config, Ticker ticker, Function<Region, RegionClient> connect,
      boolean scheduleRounds) {
    this.config = config;
    this.ticker = ticker;
    this.regions = config.regions();
    this.clients = new RegionClient[regions.size()];
    for (int i = 0; i < clients.length; i++) {
      clients[i] = connect.apply(regions.get(i));
    }
    this.leadership = new Leadership(config);
    this.silentUntil = new long[clients.length];
    this.silent = new boolean[clients.length];
    for (int i = 0; i < clients.length; i++) {
      registries.add(new HashMap<>());
      silentUntil[i] = Long.MIN_VALUE;
    }
    if (scheduleRounds) {
      scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sluice-coordinator-" + config.clusterName());
        t.setDaemon(true);
        return t;
      });
      scheduleNextRound();
    } else {
      scheduler = null;
    }
  }

  /**
   * Starts a replica: joins (or forms) the coordinators' Hazelcast cluster on loopback and runs a
   * round every {@link CoordinatorConfig#roundInterval()}; only the leader's rounds write.
   */
  public static RegionCoordinator start(CoordinatorConfig config) {
    return new RegionCoordinator(config, Ticker.cached(), RegionClient::of, true);
  }

  /**
   * A replica on the given clock; with {@code scheduleRounds} false it runs a round only when
   * {@link #round()} is called: for tools and tests that drive time themselves (simulations).
   */
  public static RegionCoordinator start(CoordinatorConfig config, Ticker ticker, boolean scheduleRounds) {
    if (config == null || ticker == null) {
      throw new IllegalArgumentException((config == null ? "config" : "ticker") + ": must not be null");
    }
    return new RegionCoordinator(config, ticker, RegionClient::of, scheduleRounds);
  }

  private void safeRound() {
    try {
      round();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "coordinator round failed", e);
    }
  }

  /**
   * Rounds run on the clock's grid: just after every multiple of the round interval since the epoch
   * (so at window starts wherever the interval divides the window, as windows are aligned to the epoch too),
   * each round scheduled from the clock when the one before ends. With a fixed delay between rounds
   * instead, each round's own time pushed the next one later: 10-25 ms a round in real time, so rounds
   * fell anywhere in a window and the shares of regions with equal demand swung. A round that takes
   * longer than the interval skips the grid points it missed rather than running late ones back to back.
   */
  private void scheduleNextRound() {
    try {
      long now = ticker.read();
      scheduler.schedule(() -> {
        safeRound();
        scheduleNextRound();
      }, nanosToNextRound(now, config.roundInterval().toNanos(), ROUND_OFFSET_NANOS), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      // (closed or crashed: no more rounds)
    }
  }

  /**
   * How far past each grid point a round runs: the clock it reads is refreshed every millisecond
   * ({@code Ticker.cached()}), and a round woken a moment early by it would be the last round of the
   * window before instead of the first of the new one.
   */
  static final long ROUND_OFFSET_NANOS = 5_000_000L;

  /**
   * Nanoseconds from {@code now} to the next grid point: a multiple of {@code every} since the epoch,
   * plus {@code offset} (a whole interval when {@code now} is on one).
   */
  static long nanosToNextRound(long now, long every, long offset) {
    return (Math.floorDiv(now - offset, every) + 1) * every + offset - now;
  }

  /**
   * One round: does nothing unless this replica leads; returns whether it led. Public for tools and
   * tests that drive rounds themselves.
   */
  public synchronized boolean round() {
    if (!leadership.oldest()) {
      epoch = 0;
      return false;
    }
    if (fenced && leadership.membershipChanges() == fencedAtMembership) {
      return false; // refused by a region as stale: stand down until the cluster changes
    }
    if (epoch == 0 || fenced) {
      takeOver();
    }
    rounds.incrementAndGet();
    listenToNodes(ticker.read());
    Map<String, QuotaSummary> out = new LinkedHashMap<>();
    for (GlobalQuota q : config.quotas()) {
      QuotaSummary s = allocate(q);
      if (s == null) {
        return false; // fenced half way
      }
      out.put(q.name(), s);
    }
    summaries = out;
    return true;
  }

  /**
   * Reads each region's node registry and marks the regions that are silent this round. A node whose
   * heartbeat deadline has not moved since the last round may have stopped beating (cut off from its
   * region's Redis, or crashed: the two look alike from here, unlike a node that left on purpose, see
   * leave.lua): its region is silent for the round, counted at the most it may hold and given no
   * writes, so that budget its nodes may still be spending is not handed to the others (a beat can also
   * just fall between two rounds: that costs the region one round's reallocation). A node whose
   * deadline has not moved for {@link #STALL} (or three rounds) stopped: its region stays silent for a
   * lease and the longest window, time enough for the shares such a node read to have run out (a node
   * of a regional quota that cannot reach its store admits within the share it holds for a window and
   * nothing once none is left, see SyncedLimiter's failure policy). A region whose registry cannot be
   * read is unreachable this round anyway.
   */
  private void listenToNodes(long now) {
    long hold = config.lease().toNanos();
    long longest = 0;
    for (GlobalQuota q : config.quotas()) {
      longest = Math.max(longest, q.window().toNanos());
    }
    hold += longest;
    long stall = Math.max(STALL.toNanos(), 3 * config.roundInterval().toNanos());
    for (int r = 0; r < clients.length; r++) {
      RegionShareStore.Registry registry;
      try {
        registry = clients[r].nodes();
      } catch (RuntimeException e) {
        regionErrors.incrementAndGet();
        silent[r] = now < silentUntil[r];
        continue;
      }
      // per node: {the deadline last read, when (this replica's clock) it was last seen to move}
      Map<String, long[]> known = registries.get(r);
      for (Map.Entry<String, Long> e : registry.deadlines().entrySet()) {
        long[] k = known.get(e.getKey());
        if (k == null) {
          known.put(e.getKey(), new long[] {e.getValue(), now});
        } else if (e.getValue() > k[0]) {
          k[0] = e.getValue();
          k[1] = now;
        }
      }
      boolean unheard = false;
      for (Iterator<Map.Entry<String, long[]>> it = known.entrySet().iterator(); it.hasNext(); ) {
        Map.Entry<String, long[]> e = it.next();
        if (!registry.deadlines().containsKey(e.getKey()) && registry.left().contains(e.getKey())) {
          it.remove(); // it left on purpose (its limiter closed): it admits nothing more
          continue;
        }
        if (e.getValue()[1] < now) {
          unheard = true;
          if (now - e.getValue()[1] > stall) {
            silentUntil[r] = Math.max(silentUntil[r], now + hold);
            it.remove();
            LOG.warning("region " + regions.get(r).name() + ": node " + e.getKey() + " stopped beating; the"
                + " region counts at the most it may hold until its leases have run out");
          }
        }
      }
      silent[r] = unheard || now < silentUntil[r];
    }
  }

  /**
   * A new leader: an epoch above every one seen, and the allocation state the old leader replicated.
   * The low {@link #EPOCH_OWNER_BITS} bits of an epoch are this replica's own (from its member id), so
   * two replicas that take over from the same epoch at once (replicas that cannot see each other)
   * never share one: the higher wins in every region and the other is fenced.
   */
  private void takeOver() {
    long seen = 0;
    long[] stored = leadership.state().get(EPOCH_KEY);
    if (stored != null) {
      seen = stored[0];
    }
    epochUnverified = false;
    reachedSinceTakeOver = new boolean[clients.length];
    for (int i = 0; i < clients.length; i++) {
      try {
        seen = Math.max(seen, clients[i].epoch());
      } catch (RuntimeException e) {
        regionErrors.incrementAndGet();
        epochUnverified = true; // if it accepted a newer epoch (a leader before a restart), it will refuse us
      }
    }
    long owner = 1 + Math.floorMod(leadership.memberId().hashCode(), (1 << EPOCH_OWNER_BITS) - 1);
    epoch = ((seen >>> EPOCH_OWNER_BITS) + 1 << EPOCH_OWNER_BITS) | owner;
    fenced = false;
    leadership.state().put(EPOCH_KEY, new long[] {epoch});
    leaderships.incrementAndGet();
    memory.clear();
    for (Map.Entry<String, long[]> e : leadership.state().entrySet()) {
      String k = e.getKey();
      int bar = k.indexOf('|', 2);
      if (k.startsWith("q|") && bar > 0) {
        memory.computeIfAbsent(k.substring(2, bar), x -> new HashMap<>()).put(k.substring(bar + 1), e.getValue().clone());
      }
    }
  }

  /**
   * One round for one quota: the keys and what each region holds and asked ({@link QuotaRound#read}),
   * the targets and the shares that shrink, written first ({@link QuotaRound#shrink}), then the shares
   * that grow from the budget the first phase left ({@link QuotaRound#grow}). Null when a region
   * refused this replica for a newer epoch (see {@link #fence}): the round stops there.
   */
  private QuotaSummary allocate(GlobalQuota q) {
    QuotaRound round = new QuotaRound(q);
    round.read();
    if (round.shrink() || round.grow()) {
      return null;
    }
    replicate(q, round.known);
    return summarize(q, round.keyList, round.known, round.admitted, round.reachable, round.w, round.staticShare);
  }

  /** The state of one quota's round: the window, the keys, and per key and region what is held and targeted. */
  private final class QuotaRound {
    final GlobalQuota q;
    final Limit limit;
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
    /** Per region, the shares the first phase wrote (null: none written, the region keeps what it holds). */
    long[][] written;
    long[][] writtenLater;

    QuotaRound(GlobalQuota q) {
      this.q = q;
      this.limit = q.limit();
      this.n = regions.size();
      this.windowNanos = q.window().toNanos();
      this.now = ticker.read();
      this.w = Math.floorDiv(now, windowNanos);
      this.remaining = (w + 1) * windowNanos - now;
      long leaseWindows = Math.max(1, (config.lease().toNanos() + windowNanos - 1) / windowNanos);
      this.leaseEnd = w + leaseWindows;
      this.ttl = Duration.ofNanos((leaseEnd + 2) * windowNanos - now);
      this.staticShare = q.quota() / n;
      this.known = memory.computeIfAbsent(q.name(), x -> new HashMap<>());
      this.reachable = new boolean[n];
    }

    /** Which keys (those any region flushed lately, and those a lease still covers somewhere), and their state per region. */
    void read() {
      Set<String> keys = new LinkedHashSet<>();
      for (int r = 0; r < n; r++) {
        try {
          for (String key : clients[r].keys(limit, w, config.maxKeysPerQuota())) {
            if (q.matches(key)) {
              keys.add(key);
            }
          }
          reachable[r] = true;
          reachedSinceTakeOver[r] = true;
        } catch (RuntimeException e) {
          regionErrors.incrementAndGet();
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
      known.keySet().retainAll(keys);
      peaks.computeIfAbsent(q.name(), x -> new HashMap<>()).keySet().retainAll(keys); // (bounded as known is)
      keyList = new ArrayList<>(keys);
      states = new ArrayList<>(n);
      for (int r = 0; r < n; r++) {
        Map<String, KeyState> byKey = new HashMap<>();
        if (reachable[r] && !keyList.isEmpty()) {
          try {
            for (KeyState s : clients[r].read(limit, w, keyList)) {
              byKey.put(s.key(), s);
            }
          } catch (RuntimeException e) {
            reachable[r] = false;
            regionErrors.incrementAndGet();
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
      List<List<ShareWrite>> shrink = new ArrayList<>(n);
      for (int r = 0; r < n; r++) {
        shrink.add(new ArrayList<>());
      }
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
        WriteResult res = write(r, limit, w, ttl, shrink.get(r));
        if (res == null) {
          reachable[r] = false; // held stays as it was: a shrink not confirmed may not have happened
        } else if (!res.accepted()) {
          fence(res.epoch());
          return true;
        } else {
          written[r] = res.shares();
          writtenLater[r] = res.nextShares();
          for (int i = 0; i < k; i++) {
            record(known.get(keyList.get(i)), r, w, res.shares()[i], res.nextShares()[i], leaseEnd);
            notePeak(keyList.get(i), r, res.shares()[i], res.nextShares()[i]);
          }
        }
      }
      return false;
    }

    /** Key i: what each region holds now and later, its demand, and the allocator's target. */
    private Allocator.Target target(int i) {
      String key = keyList.get(i);
      long[] m = known.computeIfAbsent(key, x -> fresh(n));
      double[] rates = new double[n];
      for (int r = 0; r < n; r++) {
        int b = r * FIELDS;
        KeyState s = states.get(r).get(key);
        if (reachable[r] && s != null) {
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
          observeDemand(m, b, s.admitted() + s.denied(), s.attemptsBefore(), w, windowNanos, now);
          admitted[i][r] = s.admitted();
        }
        heldNow[i][r] = shareFor(m, b, w, staticShare);
        heldLaterMin[i][r] = Long.MAX_VALUE;
        heldLaterMax[i][r] = 0;
        for (long x = w + 1; x <= leaseEnd; x++) {
          long h = shareFor(m, b, x, staticShare);
          heldLaterMin[i][r] = Math.min(heldLaterMin[i][r], h);
          heldLaterMax[i][r] = Math.max(heldLaterMax[i][r], h);
        }
        rates[r] = Math.max(0, Double.longBitsToDouble(m[b + 7])); // -1: no rate observed yet
        long[] p = peaksOf(key);
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
      assumeTheMostOfUnknownRegions(q.quota(), m, reachable, heldNow[i], heldLaterMax[i]);
      Allocator.RegionView[] views = new Allocator.RegionView[n];
      for (int r = 0; r < n; r++) {
        views[r] = new Allocator.RegionView(reachable[r], admitted[i][r], rates[r],
            floor(q.floor(regions.get(r).name(), n), rates[r], windowNanos), heldNow[i][r], heldLaterMin[i][r],
            heldLaterMax[i][r]);
      }
      Allocator.Target t = Allocator.target(q.quota(), remaining, windowNanos, views);
      targetNow[i] = t.now();
      targetLater[i] = t.later();
      return t;
    }

    /** The key's peaks (see {@link RegionCoordinator#peaks}), per region {window, now, next}. */
    private long[] peaksOf(String key) {
      return peaks.computeIfAbsent(q.name(), x -> new HashMap<>()).computeIfAbsent(key, x -> {
        long[] p = new long[n * 3];
        for (int r = 0; r < n; r++) {
          p[r * 3] = Long.MIN_VALUE;
        }
        return p;
      });
    }

    /** A share written to region r for the key: the peaks keep the larger. */
    private void notePeak(String key, int r, long share, long next) {
      long[] p = peaksOf(key);
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

    /** The second phase: what grows, from the budget the first left; true when a region fenced this leader. */
    boolean grow() {
      int k = keyList.size();
      List<List<ShareWrite>> grow = new ArrayList<>(n);
      for (int r = 0; r < n; r++) {
        grow.add(new ArrayList<>());
      }
      for (int i = 0; i < k; i++) {
        long budgetNow = q.quota();
        long budgetLater = q.quota();
        long[] baseNow = new long[n];
        long[] baseLater = new long[n];
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
          budgetNow -= baseNow[r];
          budgetLater -= baseLater[r];
        }
        long[] incNow = Allocator.increases(budgetNow, baseNow, wantNow);
        long[] incLater = Allocator.increases(budgetLater, baseLater, wantLater);
        for (int r = 0; r < n; r++) {
          if (written[r] != null && (incNow[r] > 0 || incLater[r] > 0)) {
            grow.get(r).add(new ShareWrite(keyList.get(i), baseNow[r] + incNow[r], baseLater[r] + incLater[r], leaseEnd));
          }
        }
      }
      for (int r = 0; r < n; r++) {
        if (grow.get(r).isEmpty()) {
          continue;
        }
        List<ShareWrite> writes = grow.get(r);
        WriteResult res = write(r, limit, w, ttl, writes);
        if (res != null && !res.accepted()) {
          fence(res.epoch());
          return true;
        }
        for (int j = 0; j < writes.size(); j++) {
          long[] m = known.get(writes.get(j).key());
          // not confirmed: count it as written, the larger of the two (the safe side for the others)
          record(m, r, w, res != null ? res.shares()[j] : writes.get(j).share(),
              res != null ? res.nextShares()[j] : writes.get(j).nextShare(), leaseEnd);
          notePeak(writes.get(j).key(), r, Math.max(writes.get(j).share(), res != null ? res.shares()[j] : 0),
              Math.max(writes.get(j).nextShare(), res != null ? res.nextShares()[j] : 0));
        }
      }
      return false;
    }
  }

  /**
   * A region this replica has not reached since it took over, and of which it has no record (the old
   * leader's last ones may not have been replicated), may hold any share the old leader gave it. The
   * old leader kept the shares held at most G, so it holds at most G less what the regions known
   * here hold: count it at that (at least G / R) until it is reached.
   */
  private void assumeTheMostOfUnknownRegions(long quota, long[] m, boolean[] reachable, long[] now, long[] later) {
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

  private WriteResult write(int r, Limit limit, long w, Duration ttl, List<ShareWrite> writes) {
    try {
      WriteResult res = clients[r].write(epoch, limit, w, ttl, writes);
      if (!res.accepted()) {
        refusedWrites.incrementAndGet();
      }
      return res;
    } catch (RuntimeException e) {
      regionErrors.incrementAndGet();
      return null;
    }
  }

  /**
   * A region refused a write: it accepted a newer epoch. If this replica could not ask every region
   * when it took over, that epoch may be an old leader's (from before a restart, say): take over again
   * above it. Otherwise a newer leader exists: stand down until the cluster's membership changes.
   */
  private void fence(long newerEpoch) {
    if (epochUnverified) {
      LOG.warning("a region unreachable at take-over had accepted epoch " + newerEpoch + ": taking over above it");
      epoch = 0; // the next round takes over again, asking every region
      return;
    }
    LOG.warning("a region accepted epoch " + newerEpoch + ", newer than this replica's " + epoch
        + ": standing down");
    fenced = true;
    fencedAtMembership = leadership.membershipChanges();
    epoch = 0;
  }

  /** Whether a region refused this replica for a newer epoch and it stands down (until membership changes). */
  public boolean fenced() {
    return fenced;
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

  /** Running demand rate per region: attempts (admitted + denied) per nanosecond, smoothed. */
  private void observeDemand(long[] m, int b, long attempts, long attemptsBefore, long w, long windowNanos,
      long now) {
    long[] seen = seenSince(m[b + 5], m[b + 4], m[b + 6], w, attempts, attemptsBefore, windowNanos, now);
    if (seen == null) {
      return;
    }
    double rate = smoothed(Double.longBitsToDouble(m[b + 7]), seen[0], seen[1], config.smoothing(),
        config.roundInterval().toNanos());
    m[b + 4] = attempts;
    m[b + 5] = w;
    m[b + 6] = now;
    m[b + 7] = Double.doubleToLongBits(rate);
  }

  /**
   * What a region asked for since the last round: {attempts, over nanoseconds}, or null when there is
   * no time to measure. The last round saw {@code lastAttempts} in window {@code lastWindow} at
   * {@code lastAt}; now window {@code w} holds {@code attempts} and window w - 1 {@code attemptsBefore}.
   * A round in the window after the last one's counts the rest of that window too (rounds on the
   * clock's grid fall just after window starts: without the previous window's end they saw a few
   * milliseconds of each window, and the estimate froze); a round further on measures from the
   * window's start.
   */
  static long[] seenSince(long lastWindow, long lastAttempts, long lastAt, long w, long attempts, long attemptsBefore,
      long windowNanos, long now) {
    if (lastWindow == w && now > lastAt) {
      return new long[] {Math.max(0, attempts - lastAttempts), now - lastAt};
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

  private static long[] fresh(int n) {
    long[] m = new long[n * FIELDS];
    for (int r = 0; r < n; r++) {
      m[r * FIELDS] = -1;
      m[r * FIELDS + 3] = -1;
      m[r * FIELDS + 5] = Long.MIN_VALUE;
      m[r * FIELDS + 7] = Double.doubleToLongBits(-1);
    }
    return m;
  }

  private static void record(long[] m, int r, long w, long share, long later, long leaseEnd) {
    int b = r * FIELDS;
    m[b] = w;
    m[b + 1] = share;
    m[b + 2] = later;
    m[b + 3] = leaseEnd;
  }

  /** The share region r enforces in window x as far as this replica knows: its record, else G / R. */
  private static long shareFor(long[] m, int b, long x, long staticShare) {
    long share = RegionShareStore.shareFor(m[b], m[b + 1], m[b + 2], m[b + 3], x);
    return share >= 0 ? share : staticShare;
  }

  private void replicate(GlobalQuota q, Map<String, long[]> known) {
    Map<String, long[]> copy = new HashMap<>();
    for (Map.Entry<String, long[]> e : known.entrySet()) {
      copy.put("q|" + q.name() + "|" + e.getKey(), e.getValue().clone());
    }
    leadership.state().putAll(copy);
    String prefix = "q|" + q.name() + "|";
    for (Iterator<String> it = leadership.state().keySet().iterator(); it.hasNext(); ) {
      String key = it.next();
      if (key.startsWith(prefix) && !copy.containsKey(key)) {
        leadership.state().remove(key);
      }
    }
  }

  private QuotaSummary summarize(GlobalQuota q, List<String> keys, Map<String, long[]> known, long[][] admitted,
      boolean[] reachable, long w, long staticShare) {
    int n = regions.size();
    long[] shares = new long[n];
    long[] later = new long[n];
    long[] counted = new long[n];
    double[] demand = new double[n];
    long total = 0;
    long over = 0;
    for (int i = 0; i < keys.size(); i++) {
      long[] m = known.get(keys.get(i));
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
      over = Math.max(over, sum - q.quota());
    }
    List<RegionSummary> per = new ArrayList<>(n);
    for (int r = 0; r < n; r++) {
      per.add(new RegionSummary(regions.get(r).name(), reachable[r], shares[r], later[r], counted[r], demand[r]));
    }
    return new QuotaSummary(q.name(), w, keys.size(), total, Math.max(0, over), per);
  }

  /**
   * One region's part of a quota after a round, summed over the quota's keys: its share of the
   * current window and of the next, what it counted so far, and its smoothed demand.
   */
  public record RegionSummary(String region, boolean reachable, long share, long nextShare, long admitted,
      double demandPerSecond) {
  }

  /**
   * A quota after a round: its keys, what all regions counted in the window so far, the most one key
   * went over G (0 when none did), and each region's part.
   */
  public record QuotaSummary(String quota, long window, int keys, long admitted, long overAdmitted,
      List<RegionSummary> regions) {
  }

  /** What the last round this replica led decided, per quota. */
  public Map<String, QuotaSummary> lastRound() {
    return summaries;
  }

  /** Whether this replica led its last round. */
  public boolean leading() {
    return epoch != 0;
  }

  /** The epoch this replica writes with; 0 when it does not lead. */
  public long epoch() {
    return epoch;
  }

  public long rounds() {
    return rounds.get();
  }

  /** Writes a region refused because it had accepted a newer epoch. */
  public long refusedWrites() {
    return refusedWrites.get();
  }

  /** Calls to a region's Redis that failed or timed out. */
  public long regionErrors() {
    return regionErrors.get();
  }

  /** Times this replica became leader. */
  public long leaderships() {
    return leaderships.get();
  }

  /** Members of the coordinators' cluster as this replica sees it. */
  public int members() {
    return leadership.members();
  }

  public CoordinatorConfig config() {
    return config;
  }

  /** Stops this replica as a crash would (no hand-over), for fail-over tests. */
  void crash() {
    if (scheduler != null) {
      scheduler.shutdownNow();
    }
    leadership.crash();
    epoch = 0;
  }

  @Override
  public void close() {
    if (scheduler != null) {
      scheduler.shutdownNow();
    }
    leadership.close();
    for (RegionClient c : clients) {
      c.close();
    }
  }
}
