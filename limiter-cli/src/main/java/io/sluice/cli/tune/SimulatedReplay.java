package io.sluice.cli.tune;

import io.sluice.node.Limit;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.sim.SimulatedNodes;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;
import org.HdrHistogram.Histogram;

/**
 * {@code tune --simulate}: replays the trace through N real {@link SyncedLimiter}s on a simulated
 * clock ({@link SimulatedNodes}) against one in-memory store that keeps claims as the scripts do
 * ({@link MemoryStore}, the Hazelcast store's entry processors on a map), with a store round trip of
 * {@code roundTrip}. Every request goes to the node the trace gives it at its time in the trace; the
 * decision's moment is the simulated time it was decided (later than the trace's only when it waited
 * for a sync's answer, see {@link SimulatedNodes#decide}). Deterministic: the same options give the
 * same figures. No wall-clock figure comes out of it (latency, decisions/s): those need {@code tune}
 * without {@code --simulate}.
 */
final class SimulatedReplay {
  /** Simulated time starts near real epoch time, on a window edge (windows are aligned to the epoch). */
  static final long START_NANOS = 1_764_547_200_000_000_000L; // 2025-12-01T00:00:00Z
  /** Node ids in a simulated run. */
  static final String NODE_PREFIX = "sim-node-";
  /**
   * How long a flush may take, in wall-clock time: a sync thread waits for the others' simulated time
   * to pass, so its calls take far longer on the wall clock than their round trip, and the default (2
   * s, slow calls above half of it) would let the circuit breaker open on a busy machine.
   */
  static final Duration FLUSH_TIMEOUT = Duration.ofMinutes(1);

  private final Trace trace;
  private final Limit limit;
  private final Simulation simulation;
  private final Duration roundTrip;
  private final String[] keyNames;

  SimulatedReplay(Trace trace, Limit limit, Simulation simulation, Duration roundTrip) {
    this.trace = trace;
    this.limit = limit;
    this.simulation = simulation;
    this.roundTrip = roundTrip;
    this.keyNames = new String[trace.keys];
    for (int k = 0; k < trace.keys; k++) {
      keyNames[k] = "k" + k;
    }
  }

  /** What one simulated replay found besides its measurement. */
  record Extra(long waitedDecisions, long deferredDecisions, long deferredNanos, long wallNanos) {
  }

  /** One replay's measurement and its extras; null when {@code stop} turned true first. */
  record Result(Measurement measurement, Extra extra) {
  }

  Result run(Setting setting, long seed, BooleanSupplier stop, Progress progress) {
    long wallStart = System.nanoTime();
    long start = Math.floorDiv(START_NANOS, trace.windowNanos) * trace.windowNanos + trace.windowNanos;
    int keys = trace.keys;
    int windows = trace.windows;
    long[] attempts = new long[keys * windows];
    long[] admitted = new long[keys * windows];
    long[] when = new long[trace.size()];
    Arrays.fill(when, Simulation.NOT_DECIDED);
    byte[] outcome = new byte[trace.size()];
    int[] done = new int[trace.size()];
    int[] cellOf = new int[trace.size()];
    long late = 0;
    SimulatedNodes nodes = nodes(setting, seed, start);
    long waited;
    long deferred;
    long deferredNanos;
    long storeCalls;
    long storeFailures = 0;
    try {
      for (int i = 0; i < trace.size(); i++) {
        if ((i & 1023) == 0) {
          if (stop.getAsBoolean()) {
            return null;
          }
          progress.replay((double) i / trace.size());
        }
        nodes.advanceTo(start + trace.at[i]);
        boolean ok = nodes.decide(trace.node[i], keyNames[trace.key[i]], 1).allowed();
        long moment = nodes.now() - start;
        when[i] = moment;
        done[i] = i;
        outcome[i] = ok ? Measurement.ADMITTED : Measurement.DENIED;
        if (!count(i, moment, ok, cellOf, attempts, admitted)) {
          late++;
        }
      }
      storeCalls = nodes.storeCalls();
      waited = nodes.waitedDecisions();
      deferred = nodes.deferredDecisions();
      deferredNanos = nodes.deferredNanos();
      for (SyncedLimiter l : nodes.limiters()) {
        storeFailures += l.storeFailures();
      }
    } finally {
      nodes.close();
    }
    Measurement sameMoments = simulation.exactAt(when, done, cellOf, setting,
        "exact algorithm at this simulated replay's moments");
    Measurement m = new Measurement(setting, mode(setting), keys, windows, attempts, admitted, late, storeCalls,
        storeFailures, new Histogram(3), new Histogram(3), Double.NaN, sameMoments, outcome, cellOf,
        OwnCount.overLimitWorstPct(limit, windows, trace.windowNanos, when, done, outcome, cellOf));
    return new Result(m, new Extra(waited, deferred, deferredNanos, System.nanoTime() - wallStart));
  }

  /** N real limiters on a simulated clock, sharing one in-memory store. */
  private SimulatedNodes nodes(Setting setting, long seed, long start) {
    MemoryStore store = new MemoryStore();
    // the phases of the nodes' sync timers, from the seed and the setting: every setting its own, the
    // same for the same options
    SplittableRandom phases = new SplittableRandom(seed * 31 + trace.nodes * 7919L + setting.batchSize());
    return new SimulatedNodes(trace.nodes, setting.syncInterval(), roundTrip, start, phases,
        n -> store, (n, s) -> {
          SyncedLimiter.Builder b = SyncedLimiter.builder(limit, s)
              .nodeId(NODE_PREFIX + n)
              .batchSize(setting.batchSize())
              .onStoreFailure(StoreFailurePolicy.LOCAL_SHARE)
              .flushTimeout(FLUSH_TIMEOUT)
              .maxKeys(2 * Trace.MAX_KEYS + 16);
          return setting.reservation() ? b.reservation() : b;
        });
  }

  /**
   * Counts request i, decided at {@code moment} (after the start), in its (key, window) cell; false
   * when it was decided outside the run's windows (its cell is then {@link Measurement#late}).
   */
  private boolean count(int i, long moment, boolean ok, int[] cellOf, long[] attempts, long[] admitted) {
    long w = Math.floorDiv(moment, trace.windowNanos);
    if (w >= 0 && w < trace.windows) {
      int cell = trace.key[i] * trace.windows + (int) w;
      cellOf[i] = cell;
      attempts[cell]++;
      if (ok) {
        admitted[cell]++;
      }
      return true;
    }
    cellOf[i] = Measurement.late(trace.key[i]);
    return false;
  }

  private String mode(Setting setting) {
    String trip = "round trip " + io.sluice.node.Durations.format(roundTrip);
    return (setting.exact() ? "exact (batch 1), simulated, "
        : setting.reservation() ? "reservation, simulated, " : "batched, simulated, ") + trip;
  }
}
