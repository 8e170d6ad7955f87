package io.sluice.sync.internal;

import io.sluice.node.Ticker;
import io.sluice.sync.SyncConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * One limiter's heartbeat into the store's node registry, and the node count it learns from it: a
 * beat every interval while the limiter works (none while it is quiet), riding on a flush or a
 * decision's claim call where the store takes it there, a call of its own otherwise; shared with the
 * node's other limiters on the same store ({@link SharedBeat}).
 *
 * <p>Concurrency: the times of the last beat and of the beat asked for, and the calls counted at the
 * last beat, are the flusher thread's (or the thread that runs the syncs in its stead); {@code asked}
 * is taken by whichever call carries the beat (a compare-and-set); {@code registeredNodes} is volatile,
 * read by deciding threads; the beat calls are counted in an adder.
 */
final class NodeBeat {
  /** A regional quota's node: the beat interval its registry entry's time to live is three of (see ttlNanos). */
  private static final long REGIONAL_TTL_BEAT_NANOS = 400_000_000L;
  private final StoreCalls calls;
  private final CounterStore store;
  private final String nodeId;
  private final boolean regional;
  private final long intervalNanos;
  /**
   * How long a beat keeps the node in the registry: three intervals, so one late beat does not drop
   * it; for a regional quota's node, three of the 400 ms it beat at before it beat at every sync, so
   * that a flusher a few syncs late does not drop out of its region's count.
   */
  private final long ttlNanos;
  private final long syncIntervalNanos;
  /**
   * How long a beat asked for waits for a store call to carry it before it is a call of its own, once
   * the node's count is confirmed: half a beat interval, at least a sync interval. A node with a few
   * decisions a second that ask the store (many nodes sharing a limit) made most of its beats calls of
   * their own when they waited one sync interval (tune --simulate, 1,024 nodes on a sliding window of
   * 1,000 a second at twice its limit, 10 s: 1,498 store calls per 1,000 decisions, 1,293 waiting half
   * an interval). The registry still hears from the node within 1.5 intervals of a beat plus a round,
   * inside the beat's time to live of three. Until the count is confirmed, one sync interval: the
   * second answer is what a starting node's claims wait for.
   */
  private final long rideNanos;
  private final Ticker ticker;
  /** This limiter's calls for the store's time, which are not work. */
  private final LongAdder clockCalls;
  private final ConcurrentLinkedQueue<KeyView> dirty;
  private final ConcurrentLinkedQueue<Delta> orphans;
  /**
   * Whether a beat asked for can ride on a store call: a flush or a claim call. An exact-mode limiter
   * makes neither (its scripts carry no beat), so its beats are calls of their own at once: waiting a
   * ride for nothing put a regional quota's exact-mode node's beats 200 ms apart, and its coordinator,
   * rounds every 250 ms, took its region for silent in about half of its rounds (a token-bucket quota
   * in real time, where a fixed window's nodes, beating on their flushes, were silent in 9 rounds of 99).
   */
  private final boolean rides;
  /** Whether the limiter has a flusher thread of its own: the beats' clock is then System.nanoTime. */
  private final boolean ownThread;
  /** This node's beat on this store, shared with its other limiters (see SharedBeat). */
  private final SharedBeat shared;
  /** Nodes alive as the registry last answered; 0 until it has (a node alone must not assume it is). */
  private volatile int registeredNodes;
  /** 0 before the registry's first answer, 1 after it, 2 once an answer confirms the count (see {@link #countConfirmed}). */
  private volatile int answers;
  /** The beats' clock at the registry's first answer to this limiter (see {@link #countedByOthers}). */
  private volatile long firstAnswerAt;
  /** The beats' clock at the registry answer that last lowered the count, and at the last answer (see Allowances#countShared, LimiterSetup#countCurrent). */
  private volatile long countFellAt = Long.MIN_VALUE;
  private volatile long countedAt = Long.MIN_VALUE;
  /** Set once an answer comes two beat intervals after the first (see {@link #countedByOthers()}). */
  private volatile boolean countedByOthers;
  /** The flusher thread's: when it last beat. */
  private long lastHeartbeat = Long.MIN_VALUE;
  /** The flusher thread's: whether the early second beat ({@link #beatDueNanos}) has been made. */
  private boolean earlyBeatDone;
  /** The flusher thread's: this limiter's store calls other than heartbeats as counted at its last beat. */
  private long callsAtBeat;
  /** Heartbeat calls of their own made ({@link #beatNow}). */
  private final LongAdder beatCalls = new LongAdder();
  /**
   * A beat is due and rides on the next store call that can carry it ({@link CounterStore#beatsInFlush}):
   * this round's flush, or a decision's claim call; the flusher makes it a call of its own when none
   * did within {@link #rideNanos}. Set by the flusher thread, taken by whichever call carries it.
   */
  private final AtomicBoolean beatAsked = new AtomicBoolean();
  /** The flusher thread's: when the beat now asked for was (System.nanoTime). */
  private long beatAskedAt;

  NodeBeat(LimiterSetup l, SyncConfig c, FlushQueue queue, boolean ownThread) {
    this.calls = l.calls;
    this.store = l.store;
    this.nodeId = l.nodeId;
    this.regional = l.regional;
    // a regional quota's coordinator takes a region whose node it did not hear since its last round for
    // cut off (silent: counted at the most it may hold, no writes), so such a node beats at every sync
    // (on its flush, no call of its own while it flushes). Beating every 400 ms, a region's nodes fell
    // between two rounds of 250 ms most of the time, and between rounds of 1 s now and then on a busy
    // machine: its shares froze (real time, rounds every 250 ms: 88-94% of G used, the regions falling
    // back to G / R as their leases ran out; 99.7% beating at every sync)
    this.intervalNanos = l.regional
        ? Math.min(c.heartbeatInterval().toNanos(), l.syncIntervalNanos) : c.heartbeatInterval().toNanos();
    this.ttlNanos = 3 * (l.regional ? Math.max(intervalNanos, Math.min(c.heartbeatInterval().toNanos(),
        REGIONAL_TTL_BEAT_NANOS)) : intervalNanos);
    this.syncIntervalNanos = l.syncIntervalNanos;
    this.rideNanos = Math.max(l.syncIntervalNanos, intervalNanos / 2);
    this.rides = l.exact == null;
    this.ticker = l.ticker;
    this.clockCalls = l.clockCalls;
    this.dirty = queue.dirty;
    this.orphans = queue.orphans;
    this.ownThread = ownThread;
    this.shared = SharedBeat.of(store, nodeId);
    shared.opened();
  }

  /** Nodes alive as the registry last answered (0 until it has). */
  int registeredNodes() {
    return registeredNodes;
  }

  /**
   * Whether the registry's count is one this node can act on: a second answer that counts other nodes
   * (the early second beat, {@link #SECOND_BEAT_SYNCS} sync intervals after the first: nodes started
   * together beat one after the other, and the first one's first answer counts it alone; by its second,
   * every node started with it has beaten), or, alone, an answer a beat interval after the first (a node
   * started a few hundred milliseconds later beats by then).
   */
  boolean countConfirmed() {
    return answers >= 2;
  }

  /**
   * Whether every node alive counts this one by now: the registry answered it two beat intervals after
   * its first answer, so every node that beat since (each does within an interval and a half) has heard
   * the registry count it. A node's allowances (see Allowances) wait for that: the
   * other nodes' claims keep a reserve for as many allowances as they count nodes.
   */
  boolean countedByOthers() {
    return countedByOthers;
  }

  /**
   * How long the other nodes have counted this one as {@link #countedByOthers} judges it (since two beat
   * intervals after the registry's first answer), in nanoseconds; -1 while they do not.
   */
  long countedForNanos() {
    return countedByOthers ? Math.max(0, clock() - firstAnswerAt - 2 * intervalNanos) : -1;
  }

  /** How long ago the registry's answer last lowered the count, nanoseconds (Long.MAX_VALUE: never). */
  long countFellNanosAgo() {
    return ago(countFellAt);
  }

  private long ago(long at) {
    return at == Long.MIN_VALUE ? Long.MAX_VALUE : clock() - at;
  }

  /** How long ago the registry last answered, nanoseconds (Long.MAX_VALUE before it has). */
  long countAgeNanos() {
    return ago(countedAt);
  }

  /** Whether a beat is asked for and waits for a call to carry it. */
  boolean asked() {
    return beatAsked.get();
  }

  /** Whether this limiter was the last open one of its node on its store (see SharedBeat#closedLast). */
  boolean closedLast() {
    return shared.closedLast();
  }

  /**
   * The heartbeat of a round, before its sync, at {@code now}: System.nanoTime on the flusher thread;
   * without one ({@code autoSync(false)}), the limiter's clock, on the thread that runs the syncs in its
   * stead ({@link SyncedLimiter#heartbeatIfDue()}).
   */
  void round(long now) {
    long ride = countConfirmed() ? rideNanos : syncIntervalNanos;
    if (beatAsked.get() && now - beatAskedAt >= ride && beatAsked.compareAndSet(true, false)) {
      beatNow(); // no store call carried the beat asked for a round ago
    }
    long due = beatDueNanos();
    if ((lastHeartbeat == Long.MIN_VALUE || now - lastHeartbeat >= due) && !quietSinceBeat()) {
      boolean firstBeat = lastHeartbeat == Long.MIN_VALUE;
      lastHeartbeat = now;
      earlyBeatDone |= !firstBeat && due < intervalNanos;
      // (another limiter of this node beat into this store within half an interval: its answer stands;
      // not for a limiter whose breaker is not closed, whose own beat is the call that tries the store)
      int recent = calls.closed() ? shared.recent(due / 2, now) : -1;
      if (recent > 0) {
        nodesCounted(recent);
      } else if (firstBeat || !rides) {
        beatNow(); // (before any claim: a node must be counted before it sizes its claims)
      } else {
        beatAskedAt = now;
        beatAsked.set(true);
      }
    }
    if (lastHeartbeat == now) {
      callsAtBeat = workCalls(); // (before the sync: what it sends is work)
    }
  }

  /**
   * How long after its last beat the node beats again: the beat interval, but for the second beat,
   * {@link #SECOND_BEAT_SYNCS} sync intervals after the first. Nodes started together beat one after
   * the other at their first rounds, each counting those before it: the first counts itself alone. It
   * divided by that count until its second beat, a whole interval later, and its claims took all of
   * the half of what was free that claims may hold, where the other nodes' took an even part: a node of
   * eight held a claim of 100 on a burst key at its limit while the seven others were denied
   * (the accuracy kit's shapes profile, fixed window, 8 nodes, tryAcquire, seed 76097: 42 requests not
   * made up in their window). By the second beat, every node started with it has beaten.
   */
  private long beatDueNanos() {
    return answers > 0 && !earlyBeatDone ? Math.min(intervalNanos, SECOND_BEAT_SYNCS * syncIntervalNanos)
        : intervalNanos;
  }

  /** Sync intervals from a node's first beat to its second (see {@link #beatDueNanos}). */
  static final long SECOND_BEAT_SYNCS = 2;

  /**
   * Flusher thread, before each batch of a sync: asks for the beat that has come due since the round
   * began, so that it rides on the sync's next batch. A sync that outlasts the beat interval (a node
   * sending 100,000 keys' counts a second to a busy Redis, batch after batch) beat only at its next
   * round otherwise, and a count of nodes older than two beat intervals withholds every allowance
   * (Allowances#countShared): each key's first request in a window then waited for a claim call, behind
   * the same busy store, and the node decided 2 to 10 times fewer keys a second than while it kept up.
   */
  void duringSync() {
    long now = clock();
    if (rides && lastHeartbeat != Long.MIN_VALUE && now - lastHeartbeat >= intervalNanos && !beatAsked.get()) {
      lastHeartbeat = now;
      beatAskedAt = now;
      beatAsked.set(true);
    }
  }

  /**
   * Flusher thread: whether this limiter has been quiet since its last beat (no store call, nothing
   * queued to send), so that it need not beat. An idle node then drops out of the registry when its
   * last beat runs out, and the others split what is free between the nodes that are working instead
   * of keeping a part for it: it holds no claim by then (an idle key's claim is given up at the
   * regular sync, which is a store call, so the beat after it still runs; a fixed window's key far
   * below its limit keeps its claim, idle or not, to its window's end, and its view stays queued, so
   * its node beats until then, as a node holding a claim should), and its next decision that
   * asks the store, or its next flush, makes it beat again at the next round. A regional quota's node
   * always beats: the coordinator takes a region it does not hear from for cut off.
   */
  private boolean quietSinceBeat() {
    // (never while the breaker is not closed: a beat is then the call that tries the store again, and
    // a node that denies everything under FAIL_CLOSED has no other call to make)
    return !regional && lastHeartbeat != Long.MIN_VALUE && workCalls() == callsAtBeat && dirty.isEmpty()
        && orphans.isEmpty() && calls.closed();
  }

  /**
   * This limiter's store calls other than heartbeats of their own and readings of the store's clock (a
   * flush that carries a beat is work).
   */
  private long workCalls() {
    return calls.calls() - beatCalls.sum() - clockCalls.sum();
  }

  /**
   * {@code batch} carrying the node's heartbeat when one is asked for and its store takes one in a
   * flush of its group (any thread: the flusher's batches and decisions' claim calls); else {@code batch}.
   */
  Batch withAsked(Batch batch) {
    if (beatAsked.get() && store.beatsInFlush(batch.group()) && beatAsked.compareAndSet(true, false)) {
      return batch.beating(nodeId, System.currentTimeMillis(), ttl());
    }
    return batch;
  }

  /**
   * The answer to a call that carried the node's heartbeat, or null when the call failed (the beat is
   * asked for again); any thread.
   */
  void carried(FlushResult result) {
    if (result == null) {
      beatAsked.set(true);
    } else if (result.alive() > 0) {
      shared.answered(nodesCounted(result.alive()), clock());
    }
  }

  /**
   * The registry counted {@code alive} nodes: what this node divides by from now on. A smaller count
   * than the last is believed only once the store has worked for a beat's time to live and an interval
   * since its last failure. The registry drops a node whose beats stop, and in an outage every node's
   * do: the first beat through after it finds the others gone, although they are still admitting on
   * their local shares. A node that divided by that count then took all of what was free while they
   * spent theirs too (a frozen Redis, thawed: 1,130 admitted in a window of a limit of 600 on three
   * nodes). A node that really left is counted that much longer: a little under-admission, briefly.
   */
  private int nodesCounted(int alive) {
    int counted = Math.max(1, alive);
    if (counted < registeredNodes && calls.troubleWithin(ttlNanos + intervalNanos)) {
      counted = registeredNodes;
    }
    long now = clock();
    if (counted < registeredNodes) {
      countFellAt = now;
    }
    countedAt = now;
    registeredNodes = counted;
    if (answers == 0) {
      firstAnswerAt = now;
      answers = 1;
    } else {
      if (!countedByOthers && now - firstAnswerAt >= 2 * intervalNanos) {
        countedByOthers = true;
      }
      // (the early second beat confirms a count of other nodes; alone, only an answer a beat interval
      // after the first does: a node started a little after this one may not have beaten yet)
      if (answers == 1 && (counted > 1 || now - firstAnswerAt >= intervalNanos)) {
        answers = 2;
      }
    }
    return counted;
  }

  /** How long a beat keeps the node in the registry (see {@link #ttlNanos}). */
  private Duration ttl() {
    return Duration.ofNanos(ttlNanos);
  }

  /** The clock of the beat rounds ({@link #round}): the flusher thread's, else the limiter's. */
  private long clock() {
    return ownThread ? System.nanoTime() : ticker.read();
  }

  /** A beat call of its own: tells the registry this node is alive and learns how many are. */
  int beatNow() {
    beatCalls.increment();
    Integer alive = calls.guarded(() -> store.heartbeat(nodeId, System.currentTimeMillis(), ttl()));
    if (alive != null) {
      shared.answered(nodesCounted(alive), clock());
    }
    return Math.max(1, registeredNodes);
  }
}
