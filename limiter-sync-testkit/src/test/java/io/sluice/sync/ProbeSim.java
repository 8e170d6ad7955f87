package io.sluice.sync;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.node.RateLimiter;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A small simulation for the probe's reproducers: {@link SyncedLimiter} nodes on one {@link MemoryStore}
 * and a simulated clock, each synced as {@link AccuracyKit} syncs them (a regular sync every sync
 * interval, a sync a decision asks for one simulated millisecond later, a heartbeat every simulated
 * second: not the flusher's heartbeat step, whose second beat comes two sync intervals after the first,
 * so that a node started first keeps counting itself alone here as long as a reproducer needs it to, as
 * one whose second beat failed would), and the exact algorithm (limiter-node's in-process limiter) deciding the same requests at
 * the same instants. Time starts at the beginning of a window of the limit.
 */
final class ProbeSim implements AutoCloseable {
  static final long MS = 1_000_000L;

  final Limit limit;
  final MemoryStore store = new MemoryStore();
  final ManualTicker ticker;
  final long start;
  private final ManualTicker exactTicker;
  private final RateLimiter exact;
  private final Duration sync;
  private final boolean reservation;
  /** When the next node started syncs first, after its start (its phase); negative: one sync interval. */
  long firstSyncAfter = -1;
  /** The nodes' batch size: 0 for the default. */
  long batchSize;
  private final List<SyncedLimiter> nodes = new ArrayList<>();
  private final List<long[]> timers = new ArrayList<>(); // {next regular sync, asked sync, next heartbeat, stalled until}
  private final List<Boolean> closed = new ArrayList<>();
  private final List<SyncedLimiter> crashed = new ArrayList<>();
  /** Node decisions and the exact algorithm's, one letter each (A, D), in order. */
  final StringBuilder nodeLetters = new StringBuilder();
  final StringBuilder exactLetters = new StringBuilder();
  Decision lastNode;
  Decision lastExact;

  /** Of the decisions from index {@code first} on, those the exact algorithm admitted and the node denied. */
  long falseDenialsFrom(int first) {
    long n = 0;
    for (int i = first; i < nodeLetters.length(); i++) {
      n += exactLetters.charAt(i) == 'A' && nodeLetters.charAt(i) == 'D' ? 1 : 0;
    }
    return n;
  }

  /** How many of {@code letters} (nodeLetters or exactLetters) from index {@code first} on are admissions. */
  static long admittedFrom(CharSequence letters, int first) {
    return letters.subSequence(first, letters.length()).chars().filter(c -> c == 'A').count();
  }

  ProbeSim(Limit limit, Duration sync, boolean reservation) {
    this.limit = limit;
    this.sync = sync;
    this.reservation = reservation;
    long window = limit.periodNanos();
    this.start = Math.floorDiv(AccuracyKit.START_NANOS, window) * window + window;
    this.ticker = new ManualTicker(start);
    this.exactTicker = new ManualTicker(start);
    this.exact = RateLimiter.builder(limit).ticker(exactTicker).build();
  }

  /** Store calls every node started here has made so far, closed and crashed ones included. */
  long storeCalls() {
    long sum = 0;
    for (SyncedLimiter node : nodes) {
      sum += node.storeCalls();
    }
    return sum;
  }

  /** Starts a node now (it heartbeats at once, as its flusher does when it starts); its index. */
  int startNode() {
    return startNode("node-" + nodes.size());
  }

  /** {@link #startNode()} with the node id {@code nodeId} (a node restarted in another's place may reuse one). */
  int startNode(String nodeId) {
    SyncedLimiter.Builder b = SyncedLimiter.builder(limit, store).nodeId(nodeId).ticker(ticker)
        .autoSync(false).syncInterval(sync);
    if (batchSize > 0) {
      b.batchSize(batchSize);
    }
    SyncedLimiter node = (reservation ? b.reservation() : b).build();
    nodes.add(node);
    closed.add(false);
    timers.add(new long[] {ticker.read() + (firstSyncAfter >= 0 ? firstSyncAfter : sync.toNanos()), Long.MAX_VALUE,
        ticker.read() + 1_000 * MS, Long.MIN_VALUE});
    node.heartbeatNow();
    return nodes.size() - 1;
  }

  /** Every node heartbeats again, so that each counts all the others (as a second after a start). */
  void heartbeatAll() {
    for (int i = 0; i < nodes.size(); i++) {
      if (!closed.get(i)) {
        nodes.get(i).heartbeatNow();
      }
    }
  }

  SyncedLimiter node(int i) {
    return nodes.get(i);
  }

  /** Moves the clock to {@code start + offsetNanos}, running the syncs due before, in time order. */
  void at(long offsetNanos) {
    long to = start + offsetNanos;
    while (true) {
      int due = -1;
      long dueAt = to;
      for (int i = 0; i < nodes.size(); i++) {
        if (closed.get(i)) {
          continue;
        }
        long at = Math.max(Math.min(timers.get(i)[0], timers.get(i)[1]), timers.get(i)[3]);
        if (at <= dueAt) {
          due = i;
          dueAt = at;
        }
      }
      if (due < 0) {
        break;
      }
      advance(ticker, dueAt);
      long[] t = timers.get(due);
      SyncedLimiter node = nodes.get(due);
      if (t[2] <= dueAt) {
        node.heartbeatNow();
        t[2] = dueAt + 1_000 * MS;
      }
      node.takeSyncRequest();
      node.syncNow();
      while (t[0] <= dueAt) {
        t[0] += sync.toNanos();
      }
      t[1] = Long.MAX_VALUE;
    }
    advance(ticker, to);
  }

  /** Node i decides the request now, and the exact algorithm beside it; whether the node admitted it. */
  boolean acquire(int i, String key, long cost) {
    lastNode = nodes.get(i).acquire(key, cost);
    return decided(i, key, cost, lastNode.allowed());
  }

  /**
   * Node i decides the request now through {@code tryAcquire} (a key's credit pays without the view's
   * monitor), and the exact algorithm beside it; whether the node admitted it.
   */
  boolean tryAcquire(int i, String key, long cost) {
    return decided(i, key, cost, nodes.get(i).tryAcquire(key, cost));
  }

  /**
   * After node i's decision: the sync it asked for, one millisecond on, and the exact algorithm's decision
   * beside it; whether the node admitted the request.
   */
  private boolean decided(int i, String key, long cost, boolean allowed) {
    if (nodes.get(i).takeSyncRequest()) {
      timers.get(i)[1] = Math.min(timers.get(i)[1], ticker.read() + MS);
    }
    advance(exactTicker, ticker.read() / 1_000 * 1_000);
    lastExact = exact.acquire(key, cost);
    nodeLetters.append(allowed ? 'A' : 'D');
    exactLetters.append(lastExact.allowed() ? 'A' : 'D');
    return allowed;
  }

  /** Node i gives back what its last decision took, and the exact algorithm what it took, if each did. */
  void releaseLast(int i, String key, long cost) {
    if (lastNode.allowed()) {
      nodes.get(i).release(key, cost, lastNode);
    }
    if (lastExact.allowed()) {
      exact.release(key, cost, lastExact);
    }
  }

  /** Node i's flusher stalls until {@code start + untilOffsetNanos}: its syncs due meanwhile run then. */
  void stall(int i, long untilOffsetNanos) {
    timers.get(i)[3] = start + untilOffsetNanos;
  }

  void close(int i) {
    nodes.get(i).close();
    closed.set(i, true);
  }

  /**
   * Node i stops as a killed process does: no closing flush, nothing given up; what it admitted since
   * its last flush never reaches the store. (Its limiter stays open, unsynced, until the simulation closes.)
   */
  void crash(int i) {
    closed.set(i, true);
    crashed.add(nodes.get(i));
  }

  /** The window index of the clock now. */
  long window() {
    return Math.floorDiv(ticker.read(), limit.periodNanos());
  }

  @Override
  public void close() {
    for (int i = 0; i < nodes.size(); i++) {
      if (!closed.get(i)) {
        close(i);
      }
    }
    for (SyncedLimiter node : crashed) {
      node.close(); // (its flusher thread; the store's counts are no longer looked at)
    }
  }

  private static void advance(ManualTicker ticker, long at) {
    long d = at - ticker.read();
    if (d > 0) {
      ticker.advanceNanos(d);
    }
  }
}
