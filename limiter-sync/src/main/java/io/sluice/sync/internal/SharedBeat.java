package io.sluice.sync.internal;

import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.CounterStore;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * The registry heartbeat of one node on one store, shared by that node's limiters: every limit of a
 * process (a sidecar's, a service's rules) beats with the same node id into the same registry, so one
 * beat answers for all of them. A limiter's flusher whose beat is due takes a beat another limiter of
 * the node made within half its own interval instead of calling the store: a node with ten limits
 * beats once a second, not ten times ({@link SyncedLimiter#heartbeatNow()} always calls).
 *
 * <p>Concurrency: the map is synchronized (stores held weakly, so a closed store's entry goes with it);
 * a beat's time and answer are volatiles written together by whichever flusher made the call (a reader
 * may pair a new time with the previous answer for a moment: the node count of one beat earlier).
 */
final class SharedBeat {
  private static final Map<CounterStore, Map<String, SharedBeat>> BY_STORE =
      Collections.synchronizedMap(new WeakHashMap<>());

  /** When the last beat was answered (see {@link #recent(long, long)}); Long.MIN_VALUE before the first. */
  private volatile long beatAt = Long.MIN_VALUE;
  /** Nodes alive as that beat's answer said. */
  private volatile int alive;
  /** The node's limiters on the store that are open (guarded by this object). */
  private int open;

  private SharedBeat() {
  }

  static SharedBeat of(CounterStore store, String nodeId) {
    synchronized (BY_STORE) {
      return BY_STORE.computeIfAbsent(store, s -> new HashMap<>()).computeIfAbsent(nodeId, n -> new SharedBeat());
    }
  }

  /** The nodes alive as a beat at most {@code maxAgeNanos} old answered, or -1 when there is none that recent. */
  int recent(long maxAgeNanos) {
    return recent(maxAgeNanos, System.nanoTime());
  }

  /**
   * {@link #recent(long)} at {@code now}, on the clock the node's beats are answered on (System.nanoTime;
   * a limiter without a flusher thread, its own clock: see NodeBeat#round). A beat answered on the
   * other clock, far from {@code now} either way, is not recent.
   */
  int recent(long maxAgeNanos, long now) {
    long at = beatAt;
    return at != Long.MIN_VALUE && Math.abs(now - at) < maxAgeNanos ? alive : -1;
  }

  /** One more limiter of the node on the store. */
  synchronized void opened() {
    open++;
  }

  /**
   * A limiter of the node closed: whether it was the last one, so that the node may leave the
   * registry (while another limiter of it still runs, the node is still admitting).
   */
  synchronized boolean closedLast() {
    open = Math.max(0, open - 1);
    return open == 0;
  }

  /** A beat of this node was answered: {@code alive} nodes. */
  void answered(int alive) {
    answered(alive, System.nanoTime());
  }

  /** {@link #answered(int)} at {@code at} (see {@link #recent(long, long)}). */
  void answered(int alive, long at) {
    this.alive = alive;
    this.beatAt = at;
  }
}
