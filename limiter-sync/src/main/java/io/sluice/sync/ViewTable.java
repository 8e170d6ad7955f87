package io.sluice.sync;

import io.sluice.node.Ticker;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Collection;
import java.util.Iterator;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

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
 * flusher thread's alone; a full table's sweep is claimed by one thread with a CAS on its time.
 */
final class ViewTable {
  /** The key of the view that new keys share while the table is full (no caller's key starts with NUL). */
  static final String OVERFLOW_KEY = "\u0000overflow";
  private static final int SWEEP_PER_SYNC = 4_096;
  private static final long FULL_SWEEP_NANOS = 100_000_000L;
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
  /** Where the flusher's sweep of idle views goes on from (flusher thread only). */
  private Iterator<KeyView> sweep;
  /** System.nanoTime of the last whole sweep of a full table. */
  private volatile long lastFullSweep = System.nanoTime() - FULL_SWEEP_NANOS;

  ViewTable(int maxKeys, long windowNanos, Ticker ticker, Consumer<KeyView> settle) {
    this.maxKeys = maxKeys;
    this.windowNanos = windowNanos;
    this.ticker = ticker;
    this.settle = settle;
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
          dropIfOver(view, at, false);
        }
      }
    }
    if (views.size() >= maxKeys) {
      overflowed.increment();
      return views.computeIfAbsent(OVERFLOW_KEY, KeyView::new);
    }
    return views.computeIfAbsent(key, KeyView::new);
  }

  /**
   * On the flusher thread, at each sync: looks at up to {@link #SWEEP_PER_SYNC} more views and drops
   * those whose windows are over with nothing pending (a pass over a million keys takes a few hundred
   * syncs).
   */
  void sweepSome() {
    long now = ticker.read();
    Iterator<KeyView> it = sweep;
    for (int i = 0; i < SWEEP_PER_SYNC; i++) {
      if (it == null || !it.hasNext()) {
        it = views.values().iterator(); // weakly consistent: views added meanwhile are seen next time round
        if (!it.hasNext()) {
          break;
        }
      }
      dropIfOver(it.next(), now, true);
    }
    sweep = it;
  }

  /**
   * Under no monitor: drops the view if nothing of it is pending and its windows no longer weigh; with
   * {@code keepAhead}, not while it holds claims ahead of a window to come (the store counts them
   * against the limit whether or not this node uses them, and only the view knows it holds them; a
   * full table drops it all the same: its claims then lapse unused, which costs under-admission only).
   */
  private void dropIfOver(KeyView v, long now, boolean keepAhead) {
    synchronized (v) {
      if (v.retired) {
        return; // (a weakly consistent iterator may show a view another sweep already dropped)
      }
      settle.accept(v);
      long current = Math.floorDiv(now, windowNanos);
      boolean over = v.window < current - 1 && !(keepAhead && v.aheadClaim > 0 && v.aheadThrough >= current);
      // remove(key, value): the iterator's remove would drop whatever view the key has now
      if (v.quiet() && !v.queued && over && views.remove(v.key, v)) {
        v.retired = true;
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
