package io.sluice.chaos;

import io.sluice.node.Limit;
import io.sluice.sync.StoreBreaker;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * One limiter node: its own Redis connection through its own proxy, two limits sharing the node's id
 * (as the limits of one process do), and one load thread calling them at a steady pace.
 *
 * <ul>
 *   <li>{@code rate}: a fixed window of one second that the nodes together ask twice of: over-admission
 *       is read per window from what the load threads counted.</li>
 *   <li>{@code ledger}: a one-hour window never reached: every hit it admitted must be in the store
 *       exactly once after the fault heals (lost or double-counted hits).</li>
 * </ul>
 * Everything the load thread counts is written by that thread only and read after it stopped.
 */
final class ChaosNode implements AutoCloseable {
  /** The rate limit's window (one second unless a scenario says otherwise). */
  final Duration rateWindow;
  static final String[] RATE_KEYS = {"r0", "r1"};
  static final int LEDGER_KEYS = 8;
  /** A decision at least this slow is counted: one that waited on Redis would take that long. */
  static final long SLOW_DECISION_NANOS = TimeUnit.MILLISECONDS.toNanos(300);
  static final int PHASES = Phase.values().length;

  enum Phase { WARMUP, BASELINE, FAULT, RECOVERY, AFTER }

  final String name;
  final int index;
  final StoreFailurePolicy policy;
  final ChaosRig.Link link;
  final CountingStore store;
  final SyncedLimiter rate;
  final SyncedLimiter ledger;
  private final long rateLimit;
  private final int nodes;
  private final long opsPerSecond;
  private final ChaosRun run;

  // written by the load thread only
  final Map<Long, long[]> rateAdmitted = new HashMap<>();
  /**
   * The first rate key's admissions per second (its epoch second): by the store's budget, and by the
   * failure policy. Where a window of several seconds went over, which node admitted when, and how.
   */
  final Map<Long, long[]> firstKeyPerSecond = new HashMap<>();
  final long[] ledgerAdmitted = new long[LEDGER_KEYS];
  final Histogram[] latency = new Histogram[PHASES];
  final long[] slowDecisions = new long[PHASES];
  final long[] decisions = new long[PHASES];
  final long[] maxDecisionNanos = new long[PHASES];
  /**
   * Ledger requests denied (the ledger's limit is never reached: every denial is the store's fault or
   * the policy's), and the longest run of them in a row on this node, as the time from the first to
   * the last denial of the run, per phase (the run's phase is where it began).
   */
  final long[] ledgerDenied = new long[PHASES];
  final long[] longestLedgerDenialRunNanos = new long[PHASES];
  private long denialRunStart = Long.MIN_VALUE;
  private int denialRunPhase;

  // the key flood (scenario 8), written by the flood thread only
  long floodAdmitted;
  long floodAsked;
  volatile boolean flooding;
  private final int floodPerSecond;

  final LongAdder breakerOpens = new LongAdder();
  final LongAdder slowCallRateExceeded = new LongAdder();
  final LongAdder failureRateExceeded = new LongAdder();
  final List<String> transitions = new java.util.concurrent.CopyOnWriteArrayList<>();
  long ackedBeforeLoss = -1;

  private volatile boolean stop;
  private volatile boolean paused;
  private final AtomicInteger pausedAck = new AtomicInteger();
  private Thread load;
  private Thread flood;

  ChaosNode(ChaosRun run, StoreFailurePolicy policy, int index, int nodes, ChaosRig.Link link, String keyPrefix,
      long rateLimit, int ledgerMaxKeys, int floodPerSecond) {
    this.run = run;
    this.policy = policy;
    this.index = index;
    this.nodes = nodes;
    this.name = "n" + index;
    this.link = link;
    this.rateLimit = rateLimit;
    this.rateWindow = run.rateWindow;
    this.floodPerSecond = floodPerSecond;
    // demand twice the limit over all nodes, on each rate key; twice as many ledger decisions
    this.opsPerSecond = 3L * RATE_KEYS.length * rateLimit * 2 * 1_000 / nodes / rateWindow.toMillis();
    // the rig's timeouts: a command times out after 1 s, a flush after 800 ms, so a call slower than
    // 400 ms counts as slow for the breaker (half the flush timeout) before it counts as failed
    RedisStoreConfig config = RedisStoreConfig.builder(link.uri()).keyPrefix(keyPrefix)
        .commandTimeout(Duration.ofSeconds(1)).connectTimeout(Duration.ofSeconds(1)).build();
    this.store = new CountingStore(RedisCounterStore.connect(config));
    Limit rateLimitDef = Limit.fixedWindow("rate").limit(rateLimit).window(rateWindow).build();
    Limit ledgerLimit = Limit.fixedWindow("ledger").limit(1_000_000_000L).window(Duration.ofHours(1)).build();
    this.rate = SyncedLimiter.builder(rateLimitDef, store).nodeId(name).onStoreFailure(policy)
        .ticker(RecordingTicker.INSTANCE).flushTimeout(Duration.ofMillis(800)).build();
    this.ledger = SyncedLimiter.builder(ledgerLimit, store).nodeId(name).onStoreFailure(policy)
        .ticker(RecordingTicker.INSTANCE).flushTimeout(Duration.ofMillis(800)).maxKeys(ledgerMaxKeys).build();
    watch(rate.storeBreaker(), "rate");
    watch(ledger.storeBreaker(), "ledger");
    for (int p = 0; p < PHASES; p++) {
      latency[p] = new Histogram(TimeUnit.SECONDS.toNanos(60), 2);
    }
  }

  private void watch(StoreBreaker breaker, String limiter) {
    breaker.onStateChange((from, to, failureRate, slowCallRate) -> {
      transitions.add(limiter + ":State transition from " + from + " to " + to);
      if (to == StoreBreaker.State.OPEN) {
        breakerOpens.increment();
        // (what opened it: the breaker's thresholds are 50% of either, as configured by default)
        if (slowCallRate >= 50) {
          slowCallRateExceeded.increment();
        }
        if (failureRate >= 50) {
          failureRateExceeded.increment();
        }
      }
    });
  }

  void start() {
    load = new Thread(this::loadLoop, "chaos-load-" + policy + "-" + name);
    load.setDaemon(true);
    load.start();
    if (floodPerSecond > 0) {
      flood = new Thread(this::floodLoop, "chaos-flood-" + policy + "-" + name);
      flood.setDaemon(true);
      flood.start();
    }
  }

  private void loadLoop() {
    long started = System.nanoTime();
    long done = 0;
    while (!stop) {
      if (paused) {
        pausedAck.set(1);
        LockSupport.parkNanos(1_000_000L);
        started = System.nanoTime();
        done = 0;
        continue;
      }
      long due = (System.nanoTime() - started) * opsPerSecond / 1_000_000_000L;
      if (due - done > opsPerSecond / 10) {
        done = due - opsPerSecond / 10; // fell behind (a stall): do not burst more than 100 ms of demand
      }
      while (done < due && !stop && !paused) {
        op(done++);
      }
      LockSupport.parkNanos(1_000_000L);
    }
  }

  private void op(long k) {
    int phase = run.phase().ordinal();
    int slot = (int) (k % 3);
    long t0 = System.nanoTime();
    if (slot == 0) {
      int r = (int) ((k / 3) % RATE_KEYS.length);
      long fallbacks = r == 0 ? rate.fallbackDecisions() : 0;
      boolean allowed = rate.tryAcquire(RATE_KEYS[r]);
      long took = System.nanoTime() - t0;
      if (allowed) {
        long w = Math.floorDiv(RecordingTicker.INSTANCE.lastRead(), rateWindow.toNanos());
        rateAdmitted.computeIfAbsent(w, x -> new long[RATE_KEYS.length])[r]++;
        if (r == 0) {
          long second = Math.floorDiv(RecordingTicker.INSTANCE.lastRead(), 1_000_000_000L);
          firstKeyPerSecond.computeIfAbsent(second, x -> new long[2])[rate.fallbackDecisions() != fallbacks ? 1 : 0]++;
        }
      }
      record(phase, took);
    } else {
      int j = (int) ((k / 3 * 2 + slot - 1) % LEDGER_KEYS);
      boolean allowed = ledger.tryAcquire(ledgerKey(j));
      long took = System.nanoTime() - t0;
      if (allowed) {
        ledgerAdmitted[j]++;
        denialRunStart = Long.MIN_VALUE;
      } else {
        ledgerDenied[phase]++;
        long end = t0 + took;
        if (denialRunStart == Long.MIN_VALUE) {
          denialRunStart = t0;
          denialRunPhase = phase;
        }
        longestLedgerDenialRunNanos[denialRunPhase] =
            Math.max(longestLedgerDenialRunNanos[denialRunPhase], end - denialRunStart);
      }
      record(phase, took);
    }
  }

  private void record(int phase, long took) {
    latency[phase].recordValue(Math.min(took, latency[phase].getHighestTrackableValue()));
    decisions[phase]++;
    if (took >= SLOW_DECISION_NANOS) {
      slowDecisions[phase]++;
    }
    if (took > maxDecisionNanos[phase]) {
      maxDecisionNanos[phase] = took;
    }
  }

  static String ledgerKey(int j) {
    return "ledger-" + j;
  }

  private void floodLoop() {
    long started = System.nanoTime();
    long done = 0;
    while (!stop) {
      if (!flooding) {
        LockSupport.parkNanos(5_000_000L);
        started = System.nanoTime();
        done = 0;
        continue;
      }
      long due = (System.nanoTime() - started) * floodPerSecond / 1_000_000_000L;
      while (done < due && flooding && !stop) {
        done++;
        floodAsked++;
        if (ledger.tryAcquire("flood-" + name + "-" + floodAsked)) {
          floodAdmitted++;
        }
      }
      LockSupport.parkNanos(1_000_000L);
    }
  }

  /** Stops the load thread at its next decision boundary and waits until it has. */
  void pause() {
    pausedAck.set(0);
    paused = true;
    while (pausedAck.get() == 0 && load.isAlive()) {
      LockSupport.parkNanos(1_000_000L);
    }
  }

  void resume() {
    paused = false;
  }

  /** Ledger hits admitted so far; only while paused (or stopped). */
  long ledgerAdmittedTotal() {
    long sum = 0;
    for (long a : ledgerAdmitted) {
      sum += a;
    }
    return sum + floodAdmitted;
  }

  long pending() {
    return rate.pending() + ledger.pending();
  }

  boolean breakersClosed() {
    return rate.storeBreaker().state() == StoreBreaker.State.CLOSED
        && ledger.storeBreaker().state() == StoreBreaker.State.CLOSED;
  }

  void stopLoad() throws InterruptedException {
    stop = true;
    if (load != null) {
      load.join();
    }
    if (flood != null) {
      flood.join();
    }
  }

  /** The rate limit each node's share of demand is computed from. */
  long rateLimit() {
    return rateLimit;
  }

  int nodes() {
    return nodes;
  }

  @Override
  public void close() {
    stop = true;
    rate.close();
    ledger.close();
    store.close();
  }
}
