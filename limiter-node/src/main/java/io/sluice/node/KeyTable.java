package io.sluice.node;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The bounded table of per-key states of one limit.
 *
 * <p>Eviction only removes keys <em>at rest</em> (whose state equals a fresh one: bucket full again,
 * window over), so evicting never hands a key a budget it did not have. The state is first retired
 * by a CAS inside the kernel, then removed; a decision that still holds a retired state looks the key
 * up again. Sweeps are amortised over insertions: one every {@code sweepEvery} new keys, and when
 * the table is full, at most one per {@link #FULL_SWEEP_INTERVAL_NANOS}.
 *
 * <p>When the table is full of keys that are not at rest, a new key is charged to one shared
 * overflow state instead of getting a fresh budget: a flood of unique keys then shares one budget and
 * cannot grow the heap.
 *
 * <p>Concurrency: any number of deciding threads at once, without a lock: the map is concurrent, a
 * state is retired by CAS before it is removed, and {@code sweeping} lets one thread sweep at a time
 * (the others skip the sweep rather than wait for it).
 */
final class KeyTable {
  static final long FULL_SWEEP_INTERVAL_NANOS = 100_000_000L;

  private final ConcurrentHashMap<String, KeyState> map;
  private final Kernel kernel;
  private final int maxKeys;
  private final int sweepEvery;
  private final KeyState overflow;
  private final AtomicBoolean sweeping = new AtomicBoolean();
  private final AtomicInteger insertsSinceSweep = new AtomicInteger();
  private final LongAdder overflowed = new LongAdder();
  private final LongAdder evicted = new LongAdder();
  private volatile long lastFullSweep = Long.MIN_VALUE;

  KeyTable(Kernel kernel, int maxKeys, long now) {
    this.kernel = kernel;
    this.maxKeys = maxKeys;
    this.sweepEvery = Math.max(1024, maxKeys / 4);
    this.map = new ConcurrentHashMap<>(Math.min(maxKeys, 1 << 16));
    this.overflow = kernel.newState(now);
  }

  KeyState get(String key, long now) {
    KeyState state = map.get(key);
    return state != null ? state : insert(key, now);
  }

  /** The state already held for the key (not creating one), or null. */
  KeyState peek(String key) {
    return map.get(key);
  }

  /** The key's state, or the shared overflow state for a key the full table did not take. */
  KeyState peekOrOverflow(String key) {
    KeyState state = map.get(key);
    return state != null ? state : overflow;
  }

  private KeyState insert(String key, long now) {
    if (map.size() >= maxKeys) {
      long last = lastFullSweep;
      if (last == Long.MIN_VALUE || now - last >= FULL_SWEEP_INTERVAL_NANOS) {
        lastFullSweep = now;
        sweep(now);
      }
      if (map.size() >= maxKeys) {
        overflowed.increment();
        return overflow;
      }
    } else if (insertsSinceSweep.incrementAndGet() >= sweepEvery) {
      sweep(now);
    }
    KeyState fresh = kernel.newState(now);
    KeyState prior = map.putIfAbsent(key, fresh);
    return prior != null ? prior : fresh;
  }

  /** Evicts every key at rest; returns how many. Only one thread sweeps at a time. */
  int sweep(long now) {
    if (!sweeping.compareAndSet(false, true)) {
      return 0;
    }
    int removed = 0;
    try {
      insertsSinceSweep.set(0);
      for (Map.Entry<String, KeyState> e : map.entrySet()) {
        KeyState state = e.getValue();
        if (kernel.retireIfAtRest(state, now) && map.remove(e.getKey(), state)) {
          removed++;
        }
      }
    } finally {
      sweeping.set(false);
    }
    evicted.add(removed);
    return removed;
  }

  int size() {
    return map.size();
  }

  long overflowed() {
    return overflowed.sum();
  }

  long evicted() {
    return evicted.sum();
  }
}
