package io.sluice.sync.internal;

import io.sluice.node.Ticker;
import io.sluice.sync.SyncedLimiter;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Collection;
import java.util.Iterator;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.ObjLongConsumer;

/**
 * The views of one {@link SyncedLimiter}'s keys, bounded: at most {@code maxKeys}; a full table is
 * swept whole at most every 100 ms, and between sweeps new keys share one overflow view (a flood of
 * new keys costs O(1) each, cannot grow memory and gets no fresh budgets); the flusher drops idle
 * views a few thousand at a time ({@link #sweepSome}), so idle keys give their memory back before the
 * table fills.
 *
 * <p>Concurrency: the table is a {@link ConcurrentHashMap} read and filled by deciding threads. A view
 * is dropped under its own monitor, with {@code remove(key, view)} and then marked retired, so a
 * decision that found it before it went decides again on the key's new view. The sweep's cursor is the
 * regular sync's alone (under the flusher's sync lock); a full table's sweep is claimed by one thread
 * with a CAS on its time.
 */
final class ViewTable {
  /** The key of the view that new keys share while the table is full (no caller's key starts with NUL). */
  static final String OVERFLOW_KEY = "\u0000overflow";
  private static final int SWEEP_PER_SYNC = 4_096;
  private static final long FULL_SWEEP_NANOS = 100_000_000L;
  /** The most slots the table of keys seen has (128 KB), and the fewest. */
  private static final int SEEN_MAX_SLOTS = 16_384;
  private static final int SEEN_MIN_SLOTS = 64;
  private static final int SEEN_MS_BITS = 44;
  private static final long SEEN_MS_MASK = (1L << SEEN_MS_BITS) - 1;
  private static final VarHandle LAST_FULL_SWEEP;

  static {
    try {
      LAST_FULL_SWEEP = MethodHandles.lookup().findVarHandle(ViewTable.class, "lastFullSweep", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final ConcurrentHashMap<String, KeyView> views = new ConcurrentHashMap<>();
  private final int maxKeys;
  private final long windowNanos;
  private final Ticker ticker;
  /** Under the view's monitor: takes back the credit decisions may still take without it. */
  private final Consumer<KeyView> settle;
  private final LongAdder overflowed = new LongAdder();
  /**
   * With {@code remembers}: when the keys of the views dropped were last asked for, so that a key asked
   * again after its view went (a key asked every few seconds: its view is dropped between requests)
   * is not new to the node ({@link KeyView#seenBefore}). Direct-mapped by the key's hash, each slot a
   * fingerprint of the hash (its top 20 bits) above the time in ms since {@link #origin} (44 bits); a
   * later key of the same slot overwrites it, and a fingerprint shared by two keys makes a guess of
   * their rate, never of what is admitted. Read and written without locks: a slot is one long.
   */
  private final long[] seen;
  private final long origin;
  /** Where the regular sync's sweep of idle views goes on from (under the flusher's sync lock only). */
  private Iterator<KeyView> sweep;
  /** System.nanoTime of the last whole sweep of a full table. */
  private volatile long lastFullSweep = System.nanoTime() - FULL_SWEEP_NANOS;

  /** {@code remembers}: the table remembers when the keys of the views it drops were last asked for ({@link #seen}). */
  ViewTable(int maxKeys, long windowNanos, Ticker ticker, Consumer<KeyView> settle, boolean remembers) {
    this.maxKeys = maxKeys;
    this.windowNanos = windowNanos;
    this.ticker = ticker;
    this.settle = settle;
    this.seen = remembers ? new long[Math.max(SEEN_MIN_SLOTS, Integer.highestOneBit(Math.min(maxKeys, SEEN_MAX_SLOTS)))] : null;
    this.origin = ticker.read();
  }

  /** The key's view, or null when it has none. */
  KeyView get(String key) {
    return views.get(key);
  }

  /** The key's view, made when it has none: the shared overflow view while the table is full. */
  KeyView viewFor(String key) {
    KeyView v = views.get(key);
    if (v != null) {
      return v;
    }
    if (views.size() >= maxKeys) {
      long now = System.nanoTime();
      long last = lastFullSweep;
      if (now - last >= FULL_SWEEP_NANOS && LAST_FULL_SWEEP.compareAndSet(this, last, now)) {
        long at = ticker.read();
        for (KeyView view : views.values()) {
          dropIfOver(view, at, false, NO_VISIT);
        }
      }
    }
    if (views.size() >= maxKeys) {
      overflowed.increment();
      return views.computeIfAbsent(OVERFLOW_KEY, KeyView::new);
    }
    return views.computeIfAbsent(key, this::newView);
  }

  private KeyView newView(String key) {
    KeyView v = new KeyView(key);
    if (seen != null) {
      int h = spread(key.hashCode());
      long slot = seen[h & (seen.length - 1)];
      if (slot != 0 && slot >>> SEEN_MS_BITS == fingerprint(h)) {
        v.seenBefore(origin + (slot & SEEN_MS_MASK) * 1_000_000L);
      }
    }
    return v;
  }

  /** Under the view's monitor, as it is dropped: remembers when its key was last asked for. */
  private void remember(KeyView v) {
    if (seen == null || v.demandAt() == Long.MIN_VALUE) {
      return;
    }
    long ms = (v.demandAt() - origin) / 1_000_000L;
    if (ms < 0 || ms > SEEN_MS_MASK) {
      return;
    }
    int h = spread(v.key().hashCode());
    seen[h & (seen.length - 1)] = fingerprint(h) << SEEN_MS_BITS | ms;
  }

  /** The top 20 bits of the key's (spread) hash: the slot holds them above the time. */
  private static long fingerprint(int h) {
    return h >>> (32 - (64 - SEEN_MS_BITS));
  }

  /** The key's hash with its high bits folded into the low ones (which pick the slot). */
  private static int spread(int h) {
    return h ^ (h >>> 16) ^ (h * 0x9E3779B9);
  }

  /**
   * At the end of each regular sync, under the sync lock: looks at up to {@link #SWEEP_PER_SYNC} more
   * views and drops those whose windows are over with nothing pending (a pass over a million keys
   * takes a few hundred syncs). A pass that ends stops there: the next sync starts the next one. (Going
   * round again in the same call looked at a table of a few keys thousands of times a sync, each time
   * under the view's monitor, taking its credit back: 6% of the Envoy service's CPU on one hot key.)
   */
  void sweepSome() {
    sweepSome(NO_VISIT);
  }

  /**
   * {@link #sweepSome()}, with {@code visit} called under each view's monitor, at the sweep's time,
   * before it is judged (reservation mode gives idle grants back there: WindowLeases#giveBackIdle).
   */
  void sweepSome(ObjLongConsumer<KeyView> visit) {
    long now = ticker.read();
    Iterator<KeyView> it = sweep != null ? sweep : views.values().iterator();
    // (weakly consistent: views added meanwhile are seen on the next pass)
    for (int i = 0; i < SWEEP_PER_SYNC && it.hasNext(); i++) {
      dropIfOver(it.next(), now, true, visit);
    }
    sweep = it.hasNext() ? it : null;
  }

  /** A sweep that only drops. */
  static final ObjLongConsumer<KeyView> NO_VISIT = (v, now) -> { };

  /**
   * Under no monitor: drops the view if nothing of it is pending and its windows no longer weigh; with
   * {@code keepAhead}, not while it holds claims ahead of a window to come (the store counts them
   * against the limit whether or not this node uses them, and only the view knows it holds them; a
   * full table drops it all the same: its claims then lapse unused, which costs under-admission only).
   */
  private void dropIfOver(KeyView v, long now, boolean keepAhead, ObjLongConsumer<KeyView> visit) {
    synchronized (v) {
      if (v.retired()) {
        return; // (a weakly consistent iterator may show a view another sweep already dropped)
      }
      if (v.queued() && visit == NO_VISIT) {
        // (not dropped while queued: the flusher's next drain counts what decisions took of its credit,
        // and leaves them the rest where it keeps the view; taken back here at every visit, a key asked
        // about once a sync interval was decided under the monitor every time)
        return;
      }
      settle.accept(v);
      visit.accept(v, now);
      long current = Math.floorDiv(now, windowNanos);
      // (nor while a local share held since a fault caps the node: a view made anew would hold none, and
      // the node would claim on counts that lack what the nodes still cut off admit on their shares)
      boolean over = v.window() < current - 1 && !(keepAhead && v.aheadClaim() > 0 && v.aheadThrough() >= current)
          && !v.localShareHeld(now);
      // remove(key, value): the iterator's remove would drop whatever view the key has now
      if (v.quiet() && !v.queued() && over && views.remove(v.key(), v)) {
        v.retire();
        remember(v);
      }
    }
  }

  /** Every view now (weakly consistent). */
  Collection<KeyView> all() {
    return views.values();
  }

  int size() {
    return views.size();
  }

  /** New keys charged to the overflow view since the start. */
  long overflowed() {
    return overflowed.sum();
  }
}
