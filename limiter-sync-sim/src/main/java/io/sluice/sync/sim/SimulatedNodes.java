package io.sluice.sync.sim;

import io.sluice.node.Decision;
import io.sluice.node.Durations;
import io.sluice.node.ManualTicker;
import io.sluice.node.Ticker;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.CounterStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.Semaphore;
import java.util.function.IntFunction;

/**
 * N nodes of the real {@link SyncedLimiter} on one simulated clock ({@link ManualTicker}), their syncs
 * and heartbeats driven as each node's flusher thread would drive them, in simulated time: each node
 * syncs on its own timer (every sync interval from a random phase) and runs a sync a decision asked for
 * one simulated millisecond later (the flusher's wake-up); before each sync it runs the flusher's own
 * heartbeat step ({@link SyncedLimiter#heartbeatIfDue()}): once its heartbeat interval (a second) has
 * gone by, the beat rides on the node's next flush or claim call, is a call of its own only when none
 * carried it within half a heartbeat interval (a sync interval until the registry has answered twice),
 * and a node quiet since its last beat does not beat. Same inputs,
 * same decisions: nothing here reads the wall clock.
 *
 * <h2>The store's round trip</h2>
 * With a round trip of 0, syncs run on the caller's thread and every store call is answered at once
 * (the accuracy kit's model). With a round trip R above 0, each node's syncs run on a thread of its own
 * and every store call a sync makes (flushes, heartbeats, leases) travels: the call sent at t is
 * applied to the store at t + R/2, with the times the node put in it (as the scripts take the node's
 * clock), and its answer is back at t + R. Meanwhile simulated time goes on: the other nodes decide,
 * sync and reach the store, and this node decides from what it held when it sent. Only one thread runs
 * at a time (the caller's, or one node's sync until it waits for the store or ends), and simulated
 * time moves only while every sync is waiting for the store or idle, so the result does not depend on
 * how the threads are scheduled.
 *
 * <p>What a round trip does not delay: a decision that asks the store (a take on a cold key, a claim a
 * large cost needs, an exact-mode check) is answered at once, applied at its own moment; in a real
 * deployment it waits one round trip ({@link SyncedLimiter#waitedDecisions()} counts them). A decision
 * that its claim cannot pay, on a key whose claim a sync on its way gives up, waits for that sync's
 * answer, as the limiter makes it wait: it is decided when the answer is back ({@link
 * #deferredDecisions()}), at that moment.
 *
 * <p>The node registry of an in-memory store runs on the simulated clock (the limiter beats with the
 * wall clock's time, which a simulation of many nodes runs far behind); a real store's stays on the
 * wall clock, as its keys' TTLs do (see {@link LatentStore}). Each node's claims are sized partly from
 * its flusher's measured cycle and store round trip, both on the wall clock: the simulated syncs do not
 * feed the cycle, and the round trip a node measures is the wall-clock time its simulated call took.
 *
 * <p>Not thread-safe: one caller thread drives it ({@link #advanceTo}, {@link #decide}, {@link #close}).
 */
public final class SimulatedNodes implements AutoCloseable {
  /** Most nodes one simulation runs. */
  public static final int MAX_NODES = 1_024;
  /** A sync a decision asks for runs this long after it: the flusher thread's wake-up. */
  static final long ASKED_SYNC_DELAY_NANOS = 1_000_000L;
  /** A sync thread needs little stack: the limiter's sync and a store call. */
  private static final long SYNC_THREAD_STACK = 512 * 1024;

  /** What builds node {@code index}'s limiter on {@code store}; the simulation sets ticker, auto sync and interval. */
  @FunctionalInterface
  public interface NodeBuilder {
    SyncedLimiter.Builder builder(int index, CounterStore store);
  }

  private final ManualTicker clock;
  private final long roundTripNanos;
  private final long intervalNanos;
  private final List<SyncedLimiter> limiters = new ArrayList<>();
  private final Node[] nodes;
  private final PriorityQueue<Event> events = new PriorityQueue<>();
  private long eventSeq;
  /** Handed back to the caller's thread by a sync thread that waits for the store or has ended. */
  private final Semaphore control = new Semaphore(0);
  private boolean draining;
  private boolean closed;
  private long deferredDecisions;
  private long deferredNanos;

  /**
   * Builds {@code count} nodes on the stores {@code storeOf} gives (one per node, as each node has its
   * own connection; the same one for all is fine), with sync phases drawn from {@code phases}, on a
   * clock that starts at {@code startNanos}; each node beats into the registry once before it starts.
   */
  public SimulatedNodes(int count, Duration syncInterval, Duration roundTrip, long startNanos, SplittableRandom phases,
      IntFunction<? extends CounterStore> storeOf, NodeBuilder builder) {
    this(count, syncInterval, roundTrip, startNanos, phases, storeOf, builder, null);
  }

  /**
   * As above, with node i's clock {@code clockOffsetsNanos[i]} ahead of the simulation's (behind where
   * negative; null: every node on the simulation's clock): nodes whose clocks are not quite in step, as
   * NTP keeps real ones. The simulation's events (requests, syncs, the store's round trips) run on its
   * own clock; each node reads the time, for its windows and the times it sends the store, from its own.
   */
  public SimulatedNodes(int count, Duration syncInterval, Duration roundTrip, long startNanos, SplittableRandom phases,
      IntFunction<? extends CounterStore> storeOf, NodeBuilder builder, long[] clockOffsetsNanos) {
    if (clockOffsetsNanos != null && clockOffsetsNanos.length != count) {
      throw new IllegalArgumentException("clockOffsetsNanos: one per node (" + count + "), got " + clockOffsetsNanos.length);
    }
    if (count < 1 || count > MAX_NODES) {
      throw new IllegalArgumentException("nodes: must be between 1 and " + MAX_NODES + ", got " + count);
    }
    if (syncInterval == null || syncInterval.isNegative() || syncInterval.isZero()) {
      throw new IllegalArgumentException("syncInterval: must be positive, got " + Durations.format(syncInterval));
    }
    if (roundTrip == null || roundTrip.isNegative()) {
      throw new IllegalArgumentException("roundTrip: must not be negative, got " + Durations.format(roundTrip));
    }
    this.clock = new ManualTicker(startNanos);
    this.roundTripNanos = roundTrip.toNanos();
    this.intervalNanos = syncInterval.toNanos();
    this.nodes = new Node[count];
    try {
      for (int i = 0; i < count; i++) {
        Node node = new Node(i);
        nodes[i] = node;
        CounterStore store = storeOf.apply(i);
        long offset = clockOffsetsNanos == null ? 0 : clockOffsetsNanos[i];
        Ticker ticker = offset == 0 ? clock : () -> clock.read() + offset;
        node.limiter = builder.builder(i, new LatentStore(store, node, this)).ticker(ticker).autoSync(false)
            .syncInterval(syncInterval).build();
        limiters.add(node.limiter);
        schedule(startNanos + phases.nextLong(intervalNanos), Event.SYNC, i);
      }
      // as each flusher does when it starts (its first beat is a call of its own): the first nodes see
      // fewer nodes than there are
      for (SyncedLimiter l : limiters) {
        l.heartbeatIfDue();
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  public ManualTicker clock() {
    return clock;
  }

  /** The simulated time now, nanoseconds. */
  public long now() {
    return clock.read();
  }

  public int size() {
    return nodes.length;
  }

  public SyncedLimiter node(int index) {
    return nodes[index].limiter;
  }

  public List<SyncedLimiter> limiters() {
    return List.copyOf(limiters);
  }

  /**
   * Runs every sync, heartbeat and store arrival due until {@code atNanos}, in time order, and moves
   * the clock there (never back).
   */
  public void advanceTo(long atNanos) {
    for (Event e; (e = events.peek()) != null && e.at <= atNanos; ) {
      events.poll();
      moveClock(e.at);
      handle(e);
    }
    moveClock(atNanos);
  }

  /**
   * Node {@code index} decides {@code cost} permits of {@code key} now, and asks for a sync if the
   * decision wants one. A decision that would wait for a sync's answer on its way is decided when
   * that answer is back: read {@link #now()} afterwards for the moment it was decided.
   */
  public Decision decide(int index, String key, long cost) {
    Node node = nodes[index];
    long arrived = clock.read();
    Decision d = null;
    // (only a decision that would wait is deferred, as the limiter makes it wait: one its claim pays is
    // decided now, while its node's flush travels. Deferring every decision on a key whose claim was
    // being given up hid what such decisions did: admitted under a claim the store had handed on)
    while (node.answerAt != Long.MIN_VALUE && (d = node.limiter.acquireUnlessAwaitingRelease(key, cost)) == null) {
      advanceTo(node.answerAt);
    }
    if (clock.read() != arrived) {
      deferredDecisions++;
      deferredNanos += clock.read() - arrived;
    }
    if (d == null) {
      d = node.limiter.acquire(key, cost);
    }
    syncIfAsked(index, node);
    return d;
  }

  /** After a decision of node {@code index}: the sync it asked for, if any, one simulated millisecond on. */
  private void syncIfAsked(int index, Node node) {
    if (node.limiter.takeSyncRequest() && node.askedAt == Long.MAX_VALUE) {
      node.askedAt = clock.read() + ASKED_SYNC_DELAY_NANOS;
      schedule(node.askedAt, Event.ASKED, index);
    }
  }

  /**
   * {@link #decide}, as a caller that wants only the verdict makes it ({@code tryAcquire}: the path that
   * takes a key's credit without the view's monitor where it pays); while a sync of the node is on its
   * way, as {@link #decide} does (a decision that would wait for its answer is decided when it is back).
   */
  public boolean decideBare(int index, String key, long cost) {
    Node node = nodes[index];
    if (node.answerAt != Long.MIN_VALUE) {
      return decide(index, key, cost).allowed();
    }
    boolean allowed = node.limiter.tryAcquire(key, cost);
    syncIfAsked(index, node);
    return allowed;
  }

  /** Decisions that waited for a sync's answer (see {@link #decide}); 0 without a round trip. */
  public long deferredDecisions() {
    return deferredDecisions;
  }

  /** How long those decisions waited, simulated nanoseconds in all. */
  public long deferredNanos() {
    return deferredNanos;
  }

  public long roundTripNanos() {
    return roundTripNanos;
  }

  /** Store calls of every node (flushes, claims, exact checks, leases, heartbeats). */
  public long storeCalls() {
    long sum = 0;
    for (SyncedLimiter l : limiters) {
      sum += l.storeCalls();
    }
    return sum;
  }

  /** Decisions of every node that asked the store (each one round trip in a real deployment). */
  public long waitedDecisions() {
    long sum = 0;
    for (SyncedLimiter l : limiters) {
      sum += l.waitedDecisions();
    }
    return sum;
  }

  /**
   * Lets every sync under way get its answers (no new sync starts), then closes the nodes (each
   * flushes what is left, answered at once) and ends the sync threads.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    draining = true;
    RuntimeException failure = null;
    try {
      while (anyBusy()) {
        Event e = events.poll();
        if (e == null) {
          throw new IllegalStateException("a sync waits for the store with nothing scheduled to answer it");
        }
        moveClock(e.at);
        handle(e);
      }
    } catch (RuntimeException e) {
      failure = e;
    }
    for (SyncedLimiter l : limiters) {
      try {
        l.close();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        }
      }
    }
    for (Node node : nodes) {
      if (node != null && node.thread != null) {
        node.stopping = true;
        node.resume.release();
        try {
          node.thread.join(10_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  private boolean anyBusy() {
    for (Node node : nodes) {
      if (node != null && node.busy) {
        return true;
      }
    }
    return false;
  }

  private void moveClock(long at) {
    long d = at - clock.read();
    if (d > 0) {
      clock.advanceNanos(d);
    }
  }

  private void schedule(long at, int kind, int node) {
    events.add(new Event(at, eventSeq++, kind, node));
  }

  private void handle(Event e) {
    Node node = nodes[e.node];
    switch (e.kind) {
      case Event.SYNC -> {
        if (!draining) {
          schedule(e.at + intervalNanos, Event.SYNC, e.node);
          startSync(node);
        }
      }
      case Event.ASKED -> {
        // (a sync since the request, regular or asked, took it: askedAt was cleared then)
        if (!draining && node.askedAt == e.at) {
          startSync(node);
        }
      }
      case Event.RESUME -> handOver(node);
      default -> throw new AssertionError(e.kind);
    }
  }

  private void startSync(Node node) {
    if (node.busy) {
      node.syncAgain = true; // the flusher syncs again as soon as it is done
      return;
    }
    node.askedAt = Long.MAX_VALUE;
    if (roundTripNanos == 0) {
      node.sync();
      return;
    }
    node.busy = true;
    if (node.thread == null) {
      node.start();
    }
    handOver(node);
  }

  /** Lets the node's sync thread run until it waits for the store or ends; then what its end asks for. */
  private void handOver(Node node) {
    node.resume.release();
    control.acquireUninterruptibly();
    if (node.failure != null) {
      Throwable t = node.failure;
      node.failure = null;
      throw new IllegalStateException("node " + node.index + "'s sync failed: " + t, t);
    }
    if (!node.busy && node.syncAgain && !draining) {
      node.syncAgain = false;
      startSync(node);
    }
  }

  /**
   * On node's sync thread, in a store call: hands the caller's thread the clock until simulated time
   * {@code at}, then goes on ({@code answerAt}: when the call's answer is back).
   */
  void waitUntil(Node node, long at, long answerAt) {
    node.answerAt = answerAt;
    schedule(at, Event.RESUME, node.index);
    control.release();
    node.resume.acquireUninterruptibly();
    if (clock.read() >= answerAt) {
      node.answerAt = Long.MIN_VALUE;
    }
  }

  /** One node: its limiter, and its sync thread's state (written by the thread that holds the turn). */
  final class Node {
    final int index;
    SyncedLimiter limiter;
    /** When the sync a decision asked for runs, MAX_VALUE when none is asked for. */
    long askedAt = Long.MAX_VALUE;
    /** A sync runs (on its thread: between the hand-over and its end). */
    boolean busy;
    boolean syncAgain;
    /** When the answer of the store call its sync waits for is back, MIN_VALUE when none travels. */
    long answerAt = Long.MIN_VALUE;
    final Semaphore resume = new Semaphore(0);
    Thread thread;
    boolean stopping;
    Throwable failure;

    Node(int index) {
      this.index = index;
    }

    boolean onSyncThread() {
      return Thread.currentThread() == thread;
    }

    /** What the flusher thread does when it wakes: its heartbeat step (the flusher's own code), then the sync. */
    void sync() {
      limiter.heartbeatIfDue();
      limiter.takeSyncRequest();
      limiter.syncNow();
    }

    void start() {
      thread = new Thread(null, this::run, "sluice-sim-sync-" + index, SYNC_THREAD_STACK);
      thread.setDaemon(true);
      thread.start();
    }

    private void run() {
      while (true) {
        resume.acquireUninterruptibly();
        if (stopping) {
          return;
        }
        try {
          sync();
        } catch (Throwable t) {
          failure = t;
        }
        busy = false;
        answerAt = Long.MIN_VALUE;
        control.release();
      }
    }
  }

  /** A point of simulated time: a node's regular sync, a sync asked for, or a store call's arrival or answer. */
  private record Event(long at, long seq, int kind, int node) implements Comparable<Event> {
    static final int SYNC = 0;
    static final int ASKED = 1;
    static final int RESUME = 2;

    @Override
    public int compareTo(Event o) {
      int c = Long.compare(at, o.at);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }
  }
}
