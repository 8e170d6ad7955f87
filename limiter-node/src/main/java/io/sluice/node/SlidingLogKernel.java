package io.sluice.node;

/**
 * Sliding window log: exact, one timestamp per permit admitted in the last window, kept in a ring
 * that grows on demand up to the limit. Changing a ring is a multi-word update, so this is the one
 * algorithm whose per-key state is guarded by a lock (an uncontended monitor per key); its memory
 * cost, {@code 8 * limit} bytes for a busy key, is why the limit is capped at
 * {@link Limit#MAX_LOG_LIMIT}.
 */
final class SlidingLogKernel extends Kernel {
  private static final int INITIAL_CAPACITY = 4;

  private final long window;
  private final long limit;

  SlidingLogKernel(Limit limit) {
    this.window = limit.periodNanos();
    this.limit = limit.capacity();
  }

  static final class Log extends KeyState {
    long[] ring;
    int head;
    int size;
    boolean retired;

    long at(int i) {
      return ring[(head + i) % ring.length];
    }

    void expire(long now, long window) {
      while (size > 0 && ring[head] + window <= now) {
        head = (head + 1) % ring.length;
        size--;
      }
    }

    void append(long ts, long cost, long limit) {
      if (ring == null || size + cost > ring.length) {
        int capacity = ring == null ? INITIAL_CAPACITY : ring.length;
        while (capacity < size + cost) {
          capacity = (int) Math.min(limit, capacity * 2L);
        }
        long[] grown = new long[capacity];
        for (int i = 0; i < size; i++) {
          grown[i] = at(i);
        }
        ring = grown;
        head = 0;
      }
      for (long i = 0; i < cost; i++) {
        ring[(head + size) % ring.length] = ts;
        size++;
      }
    }
  }

  @Override
  KeyState newState(long now) {
    return new Log();
  }

  @Override
  long tryAcquire(KeyState state, long now, long cost) {
    Log log = (Log) state;
    synchronized (log) {
      if (log.retired) {
        return RETIRED;
      }
      log.expire(now, window);
      if (log.size + cost > limit) {
        // the entry whose expiry frees enough room for cost more
        int index = (int) (log.size + cost - limit - 1);
        return denied(log.at(index) + window - now);
      }
      // keep the ring sorted even if this thread read the clock before the last writer
      long ts = log.size == 0 ? now : Math.max(now, log.at(log.size - 1));
      log.append(ts, cost, limit);
      return limit - log.size;
    }
  }

  @Override
  long remaining(KeyState state, long now) {
    Log log = (Log) state;
    synchronized (log) {
      log.expire(now, window);
      return limit - log.size;
    }
  }

  @Override
  long resetNanos(KeyState state, long now) {
    Log log = (Log) state;
    synchronized (log) {
      log.expire(now, window);
      return log.size == 0 ? 0 : log.at(log.size - 1) + window - now;
    }
  }

  @Override
  void refund(KeyState state, long now, long cost) {
    Log log = (Log) state;
    synchronized (log) {
      // the newest entries are the ones this request appended (or as good as them)
      log.size -= (int) Math.min(cost, log.size);
    }
  }

  @Override
  boolean retireIfAtRest(KeyState state, long now) {
    Log log = (Log) state;
    synchronized (log) {
      log.expire(now, window);
      if (log.retired || log.size > 0) {
        return false;
      }
      log.retired = true;
      return true;
    }
  }
}
