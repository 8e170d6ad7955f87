package io.sluice.region;

import io.sluice.node.Ticker;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 *
 * <p>This class owns leadership, epochs and the schedule of rounds; one quota's round is a
 * {@link QuotaRound} (its arithmetic in {@link ShareArithmetic}), what the leader remembers between
 * rounds is {@link ShareMemory}, which regions are silent is {@link NodeHeartbeats}, and the regions'
 * Redis connections are {@link RegionLinks}.
 *
 * <h2>Concurrency</h2>
 * Rounds run on the scheduler's one thread, or on a tool's or test's thread through {@link #round()};
 * {@code round} is {@code synchronized}, which guards the leader's state ({@code fenced}, {@code
 * fencedAtMembership}, {@code epochUnverified}, {@code reachedSinceTakeOver}) and the parts it drives
 * ({@link ShareMemory}, {@link NodeHeartbeats}, {@link QuotaRound}). {@code epoch} and {@code
 * summaries} are volatile, written by rounds and read by any thread (the status of {@code sluice
 * coordinator}, tests); the counters are atomic. Hazelcast's own threads only count membership
 * changes ({@link Leadership}).
 */
public final class RegionCoordinator implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(RegionCoordinator.class.getName());
  private static final String EPOCH_KEY = "epoch";
  /** Low bits of an epoch that belong to the replica that took it (see {@link #takeOver()}). */
  static final int EPOCH_OWNER_BITS = 16;

  private final CoordinatorConfig config;
  private final Ticker ticker;
  private final RegionLinks links;
  private final Leadership leadership;
  private final ScheduledExecutorService scheduler;
  private final NodeHeartbeats heartbeats;
  private final ShareMemory memory;

  /** The epoch this replica writes with while it leads; 0 when it does not. */
  private volatile long epoch;
  private boolean fenced;
  private long fencedAtMembership;
  /** A region could not be asked for its epoch when this replica took over. */
  private boolean epochUnverified;
  /** Per region: reached at least once since this replica took over (its records are then known). */
  private boolean[] reachedSinceTakeOver = new boolean[0];
  private volatile Map<String, QuotaSummary> summaries = Map.of();

  private final AtomicLong rounds = new AtomicLong();
  private final AtomicLong leaderships = new AtomicLong();

  RegionCoordinator(CoordinatorConfig config, Ticker ticker, Function<Region, RegionClient> connect,
      boolean scheduleRounds) {
    this.config = config;
    this.ticker = ticker;
    this.links = new RegionLinks(config.regions(), connect);
    this.leadership = new Leadership(config);
    this.heartbeats = new NodeHeartbeats(config, links);
    this.memory = new ShareMemory(leadership, config.regions().size());
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
   * One round: splits the quotas if this replica leads; a replica standing by only keeps its links to
   * the regions warm ({@code RegionLinks.keepWarm}). Returns whether it led. Public for tools and tests
   * that drive rounds themselves.
   */
  public synchronized boolean round() {
    if (!leadership.oldest()) {
      epoch = 0;
      links.keepWarm(ticker.read());
      return false;
    }
    if (fenced && leadership.membershipChanges() == fencedAtMembership) {
      return false; // refused by a region as stale: stand down until the cluster changes
    }
    if (epoch == 0 || fenced) {
      takeOver();
    }
    rounds.incrementAndGet();
    heartbeats.listen(ticker.read());
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
    reachedSinceTakeOver = new boolean[links.size()];
    for (int i = 0; i < links.size(); i++) {
      try {
        seen = Math.max(seen, links.client(i).epoch());
      } catch (RuntimeException e) {
        links.failed();
        epochUnverified = true; // if it accepted a newer epoch (a leader before a restart), it will refuse us
      }
    }
    long owner = 1 + Math.floorMod(leadership.memberId().hashCode(), (1 << EPOCH_OWNER_BITS) - 1);
    epoch = ((seen >>> EPOCH_OWNER_BITS) + 1 << EPOCH_OWNER_BITS) | owner;
    fenced = false;
    leadership.state().put(EPOCH_KEY, new long[] {epoch});
    leaderships.incrementAndGet();
    memory.reloadReplicated();
  }

  /**
   * One round for one quota: the keys and what each region holds and asked ({@link QuotaRound#read}),
   * the targets and the shares that shrink, written first ({@link QuotaRound#shrink}), then the shares
   * that grow from the budget the first phase left ({@link QuotaRound#grow}). Null when a region
   * refused this replica for a newer epoch (see {@link #fence}): the round stops there.
   */
  private QuotaSummary allocate(GlobalQuota q) {
    QuotaRound round = new QuotaRound(q, config, ticker, links, memory, heartbeats.silent(), reachedSinceTakeOver,
        () -> epoch);
    round.read();
    if (round.shrink() || round.grow()) {
      fence(round.refusedFor());
      return null;
    }
    memory.replicate(q, round.known);
    return round.summarize();
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
    return links.refusedWrites();
  }

  /** Calls to a region's Redis that failed or timed out. */
  public long regionErrors() {
    return links.regionErrors();
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
    links.close();
  }
}
