package io.sluice.cli.tune;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.node.RateLimiter;
import io.sluice.node.Ticker;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.CounterStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.HdrHistogram.Histogram;

/**
 * Replays one trace with one setting: N simulated nodes, each a real {@link SyncedLimiter} with its
 * own store, each driven by its own thread through the requests the trace sends to that node; and
 * decides the same trace with the exact algorithm on a simulated clock, the reference ({@link #model()}).
 *
 * <h2>Real time, on purpose</h2>
 * The replay runs on the wall clock: every request waits until its time in the trace, and the
 * limiters read the default {@link Ticker#cached()} clock. A simulated clock ({@code ManualTicker})
 * would make the admitted counts repeatable, but not honest: SyncedLimiter's flusher wakes on real
 * time (its sync interval, and at once when a batch fills), sizes its allowances from measured
 * round trips, and the store answers in real time. Under a simulated clock the store calls per
 * 1,000 decisions and the error would describe a machine with an instant store, and latency and
 * decisions/s cannot be measured on it at all. So the trace (the requests, their times, keys and
 * nodes) is repeatable from the seed, while what the limiters make of it is measured as it happens;
 * repeated runs differ by a little scheduling noise. What runs on a simulated clock is the exact
 * algorithm each replay is compared with ({@link #exactAt}): it is fed the moments at which the nodes
 * actually decided, so a replay that falls behind the trace (a busy machine) is not counted as error.
 *
 * <p>A request is counted in the window its decision was made in, read from the limiters' own clock
 * just before the decision, so that counts and the limiters agree on window edges. The run starts on
 * a window edge (windows are aligned to the epoch, as the limiters' are).
 */
final class Simulation {
  /** Earliest start after the nodes are ready: every node has heartbeated and seen the others. */
  private static final long START_MARGIN_NANOS = 300_000_000L;

  private final Trace trace;
  private final Limit limit;
  private final int[][] eventsOfNode;
  private final String[] keyNames;
  private final String[] throughputKeyNames;
  private final long throughputNanos;

  Simulation(Trace trace, Limit limit, long throughputNanos) {
    this.trace = trace;
    this.limit = limit;
    this.throughputNanos = throughputNanos;
    int[] counts = new int[trace.nodes];
    for (int n : trace.node) {
      counts[n]++;
    }
    eventsOfNode = new int[trace.nodes][];
    for (int n = 0; n < trace.nodes; n++) {
      eventsOfNode[n] = new int[counts[n]];
    }
    int[] fill = new int[trace.nodes];
    for (int i = 0; i < trace.size(); i++) {
      int n = trace.node[i];
      eventsOfNode[n][fill[n]++] = i;
    }
    keyNames = new String[trace.keys];
    throughputKeyNames = new String[trace.keys];
    for (int k = 0; k < trace.keys; k++) {
      keyNames[k] = "k" + k;
      throughputKeyNames[k] = "tp-k" + k;
    }
  }

  /** One simulated node. */
  interface Node {
    /** One permit of the key, as the throughput pass asks (allocation-free). */
    boolean tryAcquire(String key);

    /** One permit of the key with the decision, which says the window a permit was counted in. */
    Decision acquire(String key);

    long storeCalls();

    long storeFailures();

    /** How far the node's clock is set from the wall clock's, to agree with its store's (SyncedLimiter#clockOffset). */
    long clockOffsetNanos();

    void close();
  }

  /**
   * The reference: the exact algorithm (limiter-node's in-process limiter, the same semantics as the
   * store's exact scripts) deciding every request of the trace in order, at the time the trace gives
   * it, on a simulated clock: one limiter for all nodes, as if every node asked one exact store with
   * no delay. Deterministic: the same seed gives the same counts. It has no store, latency or rate.
   */
  Measurement model() {
    return exactAt(trace.at, null, cellsOf(trace.at), new Setting(1, java.time.Duration.ZERO), MODEL_MODE);
  }

  /** The (key, window) cell of each request decided at the given moments ({@link Measurement#cell}). */
  private int[] cellsOf(long[] when) {
    int[] cell = new int[when.length];
    for (int i = 0; i < when.length; i++) {
      long w = when[i] == NOT_DECIDED ? -1 : Math.floorDiv(when[i], trace.windowNanos);
      cell[i] = w >= 0 && w < trace.windows ? trace.key[i] * trace.windows + (int) w : Measurement.late(trace.key[i]);
    }
    return cell;
  }

  /** Marks a request of the trace that a replay did not decide (it was stopped). */
  static final long NOT_DECIDED = Long.MIN_VALUE;
  private static final int INDEX_BITS = 25;

  /**
   * {@code order}'s first n requests (as decided) regrouped window by window, each window's in the
   * order decided: a request decided after one of the next window, by a node whose clock read a little
   * earlier, would make the exact limiter count it in that next window (it does not turn back), while
   * the replay counts it in its own; the two counts of a key-window then differ by the requests that
   * crossed, which showed as a permit or two over (or short) in a key-window that no node passed.
   * Decided window by window, the exact algorithm counts every request in the window the node decided
   * it in, as the node did.
   */
  private long[] windowByWindow(long[] order, int n, long[] when) {
    int buckets = trace.windows + 2; // (before the first window, each window, after the last)
    int[] bucketOf = new int[n];
    int[] starts = new int[buckets + 1];
    for (int o = 0; o < n; o++) {
      long w = Math.floorDiv(when[(int) (order[o] & ((1L << INDEX_BITS) - 1))], trace.windowNanos) + 1;
      bucketOf[o] = (int) Math.max(0, Math.min(buckets - 1, w));
      starts[bucketOf[o] + 1]++;
    }
    for (int b = 0; b < buckets; b++) {
      starts[b + 1] += starts[b];
    }
    long[] regrouped = new long[order.length];
    for (int o = 0; o < n; o++) {
      regrouped[starts[bucketOf[o]]++] = order[o];
    }
    return regrouped;
  }

  /**
   * The exact algorithm deciding the trace's requests at the given moments (nanoseconds after the
   * start, as the nodes' clock read them just before deciding, or the edge of the window a node
   * counted an admission in when that is another), in the order of those moments (or of the
   * decisions, below), on a simulated clock, counted in the windows of those moments. Given a replay's own moments, this is
   * what an exact limiter would have admitted had it seen the very requests the nodes saw, when they
   * saw them: the difference is the setting's own error, whatever the replay's lag or jitter. Each
   * request is counted in {@code cell[i]} (the cell the replay counted it in) and its decision is kept,
   * for the request-by-request comparison.
   *
   * <p>With {@code done} (a replay's), requests are decided in the order the nodes finished deciding
   * them rather than in the order of their moments, each at its own moment: nodes read a clock that
   * moves in steps of a millisecond, so many requests share a moment, and a node may be descheduled
   * between reading it and deciding. The order in which they were really decided (in exact mode, about
   * the order the store applied them, each with the time its node read) is then the one the exact
   * algorithm must follow to decide "the same requests": in moment order, two requests of a key at its
   * limit decided by two nodes in the same millisecond would come out swapped half of the time (a false
   * denial and a false admission that no limiter could avoid). That order is kept within each window,
   * and the windows are decided one after the other ({@link #windowByWindow}): a request decided after
   * one of the next window is decided in its own, as the node that read its moment decided it.
   */
  Measurement exactAt(long[] when, int[] done, int[] cell, Setting setting, String mode) {
    int keys = trace.keys;
    int windows = trace.windows;
    long windowNanos = trace.windowNanos;
    // a replay's clock may read a little before its start (the cached clock trails by up to 1 ms)
    long start = (Math.floorDiv(new ManualTicker().read(), windowNanos) + 2) * windowNanos;
    long origin = start - windowNanos;
    SetTicker clock = new SetTicker(origin);
    RateLimiter exact = RateLimiter.builder(limit).ticker(clock).maxKeys(2 * Trace.MAX_KEYS + 16).build();
    // order by moment (microseconds, then trace order), or as decided, in one primitive sort: 2^25 > MAX_REQUESTS
    long[] order = new long[when.length];
    int n = 0;
    for (int i = 0; i < when.length; i++) {
      if (when[i] != NOT_DECIDED) {
        long rank = done != null ? done[i] : Math.max(0, when[i] + windowNanos) / 1_000;
        order[n++] = (rank << INDEX_BITS) | i;
      }
    }
    java.util.Arrays.sort(order, 0, n);
    if (done != null) {
      order = windowByWindow(order, n, when);
    }
    long[] attempts = new long[keys * windows];
    long[] admitted = new long[keys * windows];
    byte[] outcome = new byte[when.length];
    long outside = 0;
    for (int o = 0; o < n; o++) {
      int i = (int) (order[o] & ((1L << INDEX_BITS) - 1));
      clock.now = Math.max(origin, start + when[i]);
      boolean ok = exact.tryAcquire(keyNames[trace.key[i]]);
      outcome[i] = ok ? Measurement.ADMITTED : Measurement.DENIED;
      int c = cell[i];
      if (c >= 0) {
        attempts[c]++;
        if (ok) {
          admitted[c]++;
        }
      } else {
        outside++;
      }
    }
    return new Measurement(setting, mode, keys, windows, attempts, admitted, outside, -1, 0, new Histogram(3),
        new Histogram(3), Double.NaN, null, outcome, cell, Double.NaN);
  }

  /** The exact run's clock: set to each request's moment (in moment order it only moves forward). */
  private static final class SetTicker implements Ticker {
    long now;

    SetTicker(long now) {
      this.now = now;
    }

    @Override
    public long read() {
      return now;
    }
  }

  static final String MODEL_MODE = "exact model: the trace decided in order on a simulated clock";

  /**
   * Warms the JVM and the store up (compiles the decision and flush paths, opens the store's
   * structures) so that the first setting measured is not the one that pays for it: nodes with this
   * setting deciding flat out for a moment under a throwaway prefix. Nothing is recorded.
   */
  void warmUp(Setting setting, Backend backend, String prefix, long nanos, BooleanSupplier stop)
      throws InterruptedException {
    List<Node> nodes = new ArrayList<>();
    try {
      for (int n = 0; n < trace.nodes; n++) {
        nodes.add(syncedNode(setting, backend.open(prefix, n), n, backend.regions()));
      }
      flatOut(nodes, stop, nanos);
    } finally {
      for (Node node : nodes) {
        try {
          node.close();
        } catch (RuntimeException e) {
          // nothing was measured
        }
      }
      backend.drop(prefix);
    }
  }

  /**
   * Runs the setting on fresh nodes, each with its own store under {@code prefix}. Returns null when
   * {@code stop} turned true before the replay ended.
   */
  Measurement run(Setting setting, Backend backend, String prefix, BooleanSupplier stop, Progress progress)
      throws InterruptedException {
    List<Node> nodes = new ArrayList<>();
    try {
      for (int n = 0; n < trace.nodes; n++) {
        nodes.add(syncedNode(setting, backend.open(prefix, n), n, backend.regions()));
      }
      // every node learns how many share the limit before the first request (the allowances divide by it)
      for (int round = 0; round < 2; round++) {
        for (Node node : nodes) {
          ((SyncedNode) node).limiter.heartbeatNow();
        }
      }
      try (AutoCloseable coordinator = backend.coordinate(prefix, limit)) {
        return replay(setting, setting.exact() ? "exact (batch 1)" : setting.reservation() ? "reservation"
            : backend.regions() > 1 ? "batched, " + backend.regions() + " regions" : "batched", nodes, stop, progress);
      } catch (InterruptedException | RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IllegalStateException("stopping the region coordinator: " + e.getMessage(), e);
      }
    } finally {
      for (Node node : nodes) {
        try {
          node.close();
        } catch (RuntimeException e) {
          // closing flushes what is left; a failure here changes nothing already measured
        }
      }
      backend.drop(prefix);
    }
  }

  private Measurement replay(Setting setting, String mode, List<Node> nodes, BooleanSupplier stop, Progress progress)
      throws InterruptedException {
    long now = Ticker.system().read();
    long start = (Math.floorDiv(now + START_MARGIN_NANOS, trace.windowNanos) + 1) * trace.windowNanos;
    Replayed r = new Replayed(nodes.size(), trace.size(), trace.keys * trace.windows);
    Thread[] threads = new Thread[nodes.size()];
    for (int i = 0; i < threads.length; i++) {
      int node = i;
      threads[i] = new Thread(() -> {
        try {
          replayNode(node, nodes.get(node), start, r, stop);
        } catch (Throwable t) {
          r.failure.compareAndSet(null, t);
        }
      }, "tune-node-" + i);
      threads[i].setDaemon(true);
    }
    for (Thread t : threads) {
      t.start();
    }
    awaitReplay(threads, start, progress);
    if (r.failure.get() != null) {
      throw new IllegalStateException("a simulated node failed: " + r.failure.get(), r.failure.get());
    }
    if (stop.getAsBoolean()) {
      return null;
    }
    long storeCalls = 0;
    long storeFailures = 0;
    for (Node node : nodes) {
      storeCalls += node.storeCalls();
      storeFailures += node.storeFailures();
    }
    double rate = throughputNanos > 0 ? flatOut(nodes, stop, throughputNanos) : Double.NaN;
    if (stop.getAsBoolean()) {
      return null;
    }
    return r.measurement(setting, mode, storeCalls, storeFailures, rate);
  }

  /** Node {@code node} deciding its requests of the trace, each at its time; returns early on {@code stop}. */
  private void replayNode(int node, Node d, long start, Replayed r, BooleanSupplier stop) {
    int windows = trace.windows;
    long windowNanos = trace.windowNanos;
    long[] att = r.attempts[node];
    long[] adm = r.admitted[node];
    Histogram lat = r.latency[node];
    Histogram behind = r.lag[node];
    long[] when = r.when;
    byte[] outcome = r.outcome;
    int[] done = r.done;
    int[] cellOf = r.cellOf;
    long[] late = r.late;
    long firstWindow = Math.floorDiv(start, windowNanos); // (the trace's first window, as the limiters index it)
    java.util.concurrent.atomic.AtomicInteger finished = r.finished;
    int count = 0;
    for (int e : eventsOfNode[node]) {
      if ((++count & 63) == 0 && stop.getAsBoolean()) {
        return;
      }
      long due = start + trace.at[e];
      waitUntil(due);
      behind.recordValue(Math.max(0, Ticker.system().read() - due));
      // (the limiter's own clock: the wall clock set to the store's)
      long moment = Ticker.cached().read() + d.clockOffsetNanos() - start;
      long w = Math.floorDiv(moment, windowNanos);
      String key = keyNames[trace.key[e]];
      long t0 = System.nanoTime();
      Decision decision = d.acquire(key);
      lat.recordValue(System.nanoTime() - t0);
      boolean ok = decision.allowed();
      if (ok && decision.window() != Long.MIN_VALUE && decision.window() - firstWindow != w) {
        // counted in another window than the one the moment before the call falls in: the decision
        // waited across a window's edge (for its key's monitor or a store call, the view rolled
        // meanwhile) or the thread was descheduled between the two clock reads. Taken by the moment,
        // it showed as a permit over in one window and one short in the other (tune --algorithm fixed:
        // 20-25 such decisions a run, 1-3% "over" in a key-window the limiter never passed); the
        // reference decides it in the window the limiter counted it in, at that window's edge
        w = decision.window() - firstWindow;
        moment = Math.min(Math.max(moment, w * windowNanos), (w + 1) * windowNanos - 1);
      }
      when[e] = moment;
      done[e] = finished.getAndIncrement();
      outcome[e] = ok ? Measurement.ADMITTED : Measurement.DENIED;
      if (w >= 0 && w < windows) {
        int cell = trace.key[e] * windows + (int) w;
        cellOf[e] = cell;
        att[cell]++;
        if (ok) {
          adm[cell]++;
        }
      } else {
        cellOf[e] = Measurement.late(trace.key[e]);
        late[node]++;
      }
    }
  }

  /** Waits for the node threads to end, reporting the replay's progress meanwhile. */
  private void awaitReplay(Thread[] threads, long start, Progress progress) throws InterruptedException {
    long end = start + trace.durationNanos();
    while (true) {
      boolean alive = false;
      for (Thread t : threads) {
        t.join(200);
        alive |= t.isAlive();
      }
      progress.replay(Math.min(1.0, Math.max(0.0, (double) (Ticker.system().read() - start) / (end - start))));
      if (!alive) {
        break;
      }
    }
  }

  /**
   * What one replay recorded: per node, its counts per (key, window) cell, requests decided after the
   * last window, latency and lag (each node writes only its own); per request, the node's decision, the
   * cell it was counted in, and the order in which the decisions were finished over all nodes (each
   * node writes only its own requests).
   */
  private final class Replayed {
    final long[][] attempts;
    final long[][] admitted;
    final long[] late;
    final Histogram[] latency;
    final Histogram[] lag;
    final long[] when;
    final byte[] outcome;
    final int[] done;
    final java.util.concurrent.atomic.AtomicInteger finished = new java.util.concurrent.atomic.AtomicInteger();
    final int[] cellOf;
    final AtomicReference<Throwable> failure = new AtomicReference<>();

    Replayed(int nodes, int requests, int cells) {
      attempts = new long[nodes][cells];
      admitted = new long[nodes][cells];
      late = new long[nodes];
      when = new long[requests];
      java.util.Arrays.fill(when, NOT_DECIDED);
      outcome = new byte[requests];
      done = new int[requests];
      cellOf = new int[requests];
      latency = new Histogram[nodes];
      lag = new Histogram[nodes];
      for (int i = 0; i < nodes; i++) {
        latency[i] = new Histogram(3);
        lag[i] = new Histogram(3);
      }
    }

    /** The nodes' counts added up, with the exact algorithm at this replay's moments. */
    Measurement measurement(Setting setting, String mode, long storeCalls, long storeFailures, double rate) {
      long[] att = new long[trace.keys * trace.windows];
      long[] adm = new long[trace.keys * trace.windows];
      Histogram lat = new Histogram(3);
      Histogram behind = new Histogram(3);
      long lateSum = 0;
      for (int i = 0; i < attempts.length; i++) {
        for (int c = 0; c < att.length; c++) {
          att[c] += attempts[i][c];
          adm[c] += admitted[i][c];
        }
        lat.add(latency[i]);
        behind.add(lag[i]);
        lateSum += late[i];
      }
      // the threads were joined: their writes to outcome, cellOf and when are visible here
      Measurement sameMoments = exactAt(when, done, cellOf, setting, "exact algorithm at this replay's moments");
      return new Measurement(setting, mode, trace.keys, trace.windows, att, adm, lateSum, storeCalls, storeFailures,
          lat, behind, rate, sameMoments, outcome, cellOf,
          OwnCount.overLimitWorstPct(limit, trace.windows, trace.windowNanos, when, done, outcome, cellOf));
    }
  }

  /**
   * Decisions per second with every node thread deciding as fast as it can, cycling through the keys
   * the trace sent it (under other key names, so that the replay's counts are not disturbed).
   */
  private double flatOut(List<Node> nodes, BooleanSupplier stop, long nanos) throws InterruptedException {
    int n = nodes.size();
    long[] decisions = new long[n];
    CountDownLatch go = new CountDownLatch(1);
    Thread[] threads = new Thread[n];
    long[] startEnd = new long[2];
    for (int i = 0; i < n; i++) {
      int node = i;
      threads[i] = new Thread(() -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          return;
        }
        Node d = nodes.get(node);
        int[] events = eventsOfNode[node];
        if (events.length == 0) {
          return;
        }
        long deadline = startEnd[0] + nanos;
        long count = 0;
        int j = 0;
        while (true) {
          d.tryAcquire(throughputKeyNames[trace.key[events[j]]]);
          count++;
          if (++j == events.length) {
            j = 0;
          }
          if ((count & 255) == 0 && (System.nanoTime() >= deadline || stop.getAsBoolean())) {
            break;
          }
        }
        decisions[node] = count;
      }, "tune-flat-out-" + i);
      threads[i].setDaemon(true);
      threads[i].start();
    }
    startEnd[0] = System.nanoTime();
    go.countDown();
    for (Thread t : threads) {
      t.join();
    }
    long elapsed = System.nanoTime() - startEnd[0];
    long sum = 0;
    for (long d : decisions) {
      sum += d;
    }
    return sum * 1e9 / elapsed;
  }

  private static void waitUntil(long due) {
    for (long d; (d = due - Ticker.system().read()) > 20_000; ) {
      LockSupport.parkNanos(d);
    }
  }

  private Node syncedNode(Setting setting, CounterStore store, int index, int regions) {
    try {
      SyncedLimiter.Builder b = SyncedLimiter.builder(limit, store);
      if (regions > 1) {
        b.regionalQuota(regions);
      }
      if (setting.reservation()) {
        b.reservation();
      }
      SyncedLimiter limiter = b
          .nodeId("tune-node-" + index)
          .batchSize(setting.batchSize())
          .syncInterval(setting.syncInterval())
          .onStoreFailure(StoreFailurePolicy.LOCAL_SHARE)
          .maxKeys(2 * Trace.MAX_KEYS + 16)
          .build();
      return new SyncedNode(limiter, store);
    } catch (RuntimeException e) {
      store.close();
      throw e;
    }
  }

  static final class SyncedNode implements Node {
    final SyncedLimiter limiter;
    private final CounterStore store;

    SyncedNode(SyncedLimiter limiter, CounterStore store) {
      this.limiter = limiter;
      this.store = store;
    }

    @Override
    public boolean tryAcquire(String key) {
      return limiter.tryAcquire(key);
    }

    @Override
    public Decision acquire(String key) {
      return limiter.acquire(key);
    }

    @Override
    public long storeCalls() {
      return limiter.storeCalls();
    }

    @Override
    public long storeFailures() {
      return limiter.storeFailures();
    }

    @Override
    public long clockOffsetNanos() {
      return limiter.clockOffset().toNanos();
    }

    @Override
    public void close() {
      try {
        limiter.close();
      } finally {
        store.close();
      }
    }
  }
}
