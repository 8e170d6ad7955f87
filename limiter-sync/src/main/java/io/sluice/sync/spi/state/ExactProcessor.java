package io.sluice.sync.spi.state;

import io.sluice.node.Algorithm;
import io.sluice.node.Limit;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.ExactArgs;
import io.sluice.sync.spi.ExactResult;
import java.util.Map;

/**
 * The exact scripts for the Hazelcast store ({@code gcra.lua}, {@code fixed_window.lua},
 * {@code sliding_window_counter.lua}, {@code sliding_window_log.lua}): one check-and-take of one key,
 * which Hazelcast runs on the key's owner, one processor at a time per key, so it is atomic. Each
 * method below is its script, step for step, in longs instead of Lua's doubles; the arguments were
 * checked by {@link ExactArgs} so that every value stays below 2^53, where both compute exactly, and
 * the answers are the scripts' to the microsecond. See the scripts for why each step is as it is.
 *
 * <p>The state is the flush's ({@link CounterEntry}: window counts, the GCRA pair) so batched and exact
 * callers of one limit see one budget; a log keeps its permits in the entry's {@link PermitLog}. A
 * denial writes nothing (the log excepted: like ZREMRANGEBYSCORE it drops what left the window). An
 * admission sets the key's time to live to when its state is back at rest, plus five seconds, as the
 * scripts' PEXPIRE. The processor carries the caller's clock, so it is deterministic and Hazelcast
 * runs the very same processor on the backups.
 *
 * <p>Answers {@code {allowed 0/1, remaining, retryAfterMicros, resetMicros, delayMicros}}, as the
 * scripts do; {@link #result} reads it. A key over its limit has 0 remaining, never fewer: a bucket in
 * debt (token claims reaching into the refill to come, flushes of the approximate mode) as {@code
 * gcra.lua} answers; a window over a limit lowered under a live key, where the window scripts would
 * answer a negative remaining (the Redis store then fails on it), here too.
 */
public final class ExactProcessor implements EntryUpdate {
  private static final long serialVersionUID = 1L;
  static final byte METER = 'm';
  static final byte SHAPER = 's';
  static final byte FIXED = 'f';
  static final byte SLIDING = 'w';
  static final byte LOG = 'l';
  /** {@code give_back.lua}: permits an admission took given back to a bucket, or to a window's count. */
  static final byte GIVE_BACK_BUCKET = 'G';
  static final byte GIVE_BACK_WINDOW = 'W';
  /**
   * The scripts' TTL_MARGIN_MS: a key lives five seconds past the moment its state is at rest (as its
   * writer's clock says), so that a node whose clock is a few seconds behind, or a caller stalled
   * between two decisions, still finds the state (a 1 s margin let keys of a busy test expire between
   * two steps of one trace).
   */
  static final long TTL_MARGIN_MILLIS = 5_000;

  private final byte kind;
  private final long now;
  private final long cost;
  private final long capacity;
  /** GCRA: scale (units per us) and interval (units per permit); windows: length (us) and the sliding counter's unit (us). */
  private final long first;
  private final long second;

  private ExactProcessor(byte kind, long now, long cost, long capacity, long first, long second) {
    this.kind = kind;
    this.now = now;
    this.cost = cost;
    this.capacity = capacity;
    this.first = first;
    this.second = second;
  }

  /**
   * The processor of one acquire, whose limit, cost and time {@link ExactArgs#checkAcquire} accepted;
   * throws, naming the field, for a limit the store cannot represent exactly.
   */
  public static ExactProcessor of(Limit limit, long cost, long nowMicros) {
    Algorithm a = limit.algorithm();
    switch (a) {
      case TOKEN_BUCKET:
      case LEAKY_BUCKET:
      case LEAKY_BUCKET_SHAPER: {
        Counter c = Counter.of(limit); // whole microseconds, 53-bit burst: or a message naming the field
        return new ExactProcessor(a == Algorithm.LEAKY_BUCKET_SHAPER ? SHAPER : METER, nowMicros, cost,
            limit.capacity(), c.scale(), c.interval());
      }
      case FIXED_WINDOW:
        return new ExactProcessor(FIXED, nowMicros, cost, limit.capacity(), ExactArgs.windowMicros(limit), 0);
      case SLIDING_WINDOW_LOG:
        return new ExactProcessor(LOG, nowMicros, cost, limit.capacity(), ExactArgs.windowMicros(limit), 0);
      case SLIDING_WINDOW_COUNTER: {
        long window = ExactArgs.windowMicros(limit);
        return new ExactProcessor(SLIDING, nowMicros, cost, limit.capacity(), window,
            ExactArgs.slidingUnitMicros(limit.capacity(), window));
      }
      default:
        throw new IllegalArgumentException("algorithm: " + a + " has no exact script, in limit " + limit.name());
    }
  }

  /**
   * The processor that gives back {@code cost} permits an exact admission of the limit took, at
   * {@code nowMicros}, in {@code window} (window limits); see {@code give_back.lua}. Not for logs.
   */
  public static ExactProcessor givingBack(Limit limit, long cost, long nowMicros, long window) {
    switch (limit.algorithm()) {
      case TOKEN_BUCKET:
      case LEAKY_BUCKET: {
        Counter c = Counter.of(limit);
        return new ExactProcessor(GIVE_BACK_BUCKET, nowMicros, cost, limit.capacity(), c.scale(), c.interval());
      }
      case FIXED_WINDOW:
      case SLIDING_WINDOW_COUNTER:
        return new ExactProcessor(GIVE_BACK_WINDOW, nowMicros, cost, limit.capacity(), window,
            ExactArgs.windowMicros(limit));
      default:
        throw new IllegalArgumentException("algorithm: " + limit.algorithm() + " takes nothing back, in limit "
            + limit.name());
    }
  }

  /** The answer as an {@link ExactResult}. */
  public static ExactResult result(long[] out) {
    return new ExactResult(out[0] == 1, out[1], out[2], out[3], out[4], out.length > 5 ? out[5] : -1);
  }

  @Override
  public long[] process(Map.Entry<byte[], CounterEntry> entry) {
    CounterEntry state = entry.getValue() == null ? CounterEntry.EMPTY : entry.getValue();
    switch (kind) {
      case METER:
      case SHAPER:
        return gcra(entry, state);
      case FIXED:
        return fixedWindow(entry, state);
      case SLIDING:
        return slidingWindowCounter(entry, state);
      case LOG:
        return slidingWindowLog(entry, state);
      case GIVE_BACK_BUCKET:
        return giveBackToBucket(entry, state);
      case GIVE_BACK_WINDOW:
        return giveBackToWindow(entry, state);
      default:
        throw new IllegalArgumentException("exact: unknown kind " + kind);
    }
  }

  /** {@code gcra.lua}: a token bucket or leaky bucket meter, or the leaky bucket shaper. */
  private long[] gcra(Map.Entry<byte[], CounterEntry> entry, CounterEntry state) {
    long scale = first;
    long interval = second;
    long burst = capacity * interval; // at most 2^52: Counter.of checked it
    long at = state.bucketTime(now);
    long backlog = state.backlogAt(at, scale);
    long after = CounterEntry.saturatedAdd(backlog, cost * interval);
    if (after > burst) {
      return new long[] {0, Math.max(0, Math.floorDiv(burst - backlog, interval)), ceilDiv(after - burst, scale),
          ceilDiv(backlog, scale), 0};
    }
    // the state is at rest (equal to a fresh key, a full bucket) once the backlog has drained
    long drainMicros = ceilDiv(after, scale);
    write(entry, state.withBucket(at, after), drainMicros);
    return new long[] {1, Math.floorDiv(burst - after, interval), 0, drainMicros,
        kind == SHAPER ? ceilDiv(backlog, scale) : 0};
  }

  /**
   * {@code give_back.lua}, a bucket: its backlog, drained to the caller's time as an admission would,
   * less {@code cost} permits, never below empty (a full bucket) nor below the highest point token
   * claims took it to, drained to then (claimed tokens rest on what is under them: given back, the
   * claimants' tokens would look covered after the bucket refilled past them). Answers the backlog left.
   */
  private long[] giveBackToBucket(Map.Entry<byte[], CounterEntry> entry, CounterEntry state) {
    long scale = first;
    long interval = second;
    if (!state.hasBucket()) {
      return new long[] {0};
    }
    long at = state.bucketTime(now);
    long backlog = state.backlogAt(at, scale);
    long after = Math.max(backlog - cost * interval, Math.min(backlog, state.claimsFloorAt(at, scale)));
    write(entry, state.withBucket(at, after), ceilDiv(after, scale));
    return new long[] {after};
  }

  /**
   * {@code give_back.lua}, a window: its count less {@code cost}, never below 0 (a count the window
   * no longer has is left alone). Answers the count left.
   */
  private long[] giveBackToWindow(Map.Entry<byte[], CounterEntry> entry, CounterEntry state) {
    long w = first;
    long windowMicros = second;
    long count = state.count(w);
    if (count <= 0) {
      return new long[] {0};
    }
    long back = Math.min(cost, count);
    CounterEntry lowered = state.addToWindow(w, -back);
    // HINCRBY keeps the key's time to live: so does this (the admission set it to when the count rests)
    ExpiringEntry.write(entry, lowered, 0);
    return new long[] {count - back};
  }

  /** {@code fixed_window.lua}. */
  private long[] fixedWindow(Map.Entry<byte[], CounterEntry> entry, CounterEntry state) {
    long window = first;
    long index = now / window; // now >= 0
    // a caller whose clock is ahead has opened the next window: count there (windows further ahead are ignored)
    long w = state.hasWindow(index + 1) ? index + 1 : index;
    long count = state.count(w);
    long untilEnd = (w + 1) * window - now;
    if (CounterEntry.saturatedAdd(count, cost) > capacity) {
      return new long[] {0, Math.max(0, capacity - count), untilEnd, untilEnd, 0};
    }
    write(entry, state.addToWindow(w, cost).dropOlderThan(w), untilEnd);
    return new long[] {1, capacity - count - cost, 0, untilEnd, 0, w};
  }

  /**
   * {@code sliding_window_counter.lua}: admitted when
   * {@code (current + cost) * W + previous * (W - elapsed) <= limit * W}, W and elapsed in units.
   */
  private long[] slidingWindowCounter(Map.Entry<byte[], CounterEntry> entry, CounterEntry state) {
    long window = first;
    long unit = second;
    long units = window / unit;
    long index = now / window;
    long w;
    long cur;
    long prev;
    long elapsed;
    if (state.hasWindow(index + 1)) {
      // a caller whose clock is ahead has started the next window: count there, at its start
      w = index + 1;
      cur = state.count(index + 1);
      prev = state.count(index);
      elapsed = 0;
    } else {
      w = index;
      cur = state.count(index);
      prev = state.count(index - 1);
      elapsed = (now % window) / unit;
    }
    long weightedPrev = CounterEntry.saturatedMultiply(prev, units - elapsed);
    long used = CounterEntry.saturatedAdd(CounterEntry.saturatedMultiply(CounterEntry.saturatedAdd(cur, cost), units),
        weightedPrev);
    long budget = capacity * units; // 3 * limit * units fits 2^53: the unit was chosen so
    if (used > budget) {
      // when cost more would fit, assuming no other admission meanwhile (the kernel's retryAfter)
      long retry;
      long free = capacity - cur - cost;
      if (free >= 0) {
        // in this window, once the previous window's weight has decayed enough (prev > 0 here)
        long elapsedNeeded = units - Math.floorDiv(free * units, prev);
        retry = Math.max(1, (elapsedNeeded - elapsed) * unit);
      } else {
        // in the next window, where this window's count becomes the weighted one
        long fit = capacity - cost;
        long elapsedNeeded = cur > 0 ? Math.max(0, units - Math.floorDiv(fit * units, cur)) : 0;
        retry = (w + 1) * window - now + elapsedNeeded * unit;
      }
      long usedNow = CounterEntry.saturatedAdd(CounterEntry.saturatedMultiply(cur, units), weightedPrev);
      long remaining = budget > usedNow ? Math.floorDiv(budget - usedNow, units) : 0;
      long reset = cur > 0 ? (w + 2) * window - now : prev > 0 ? (w + 1) * window - now : 0;
      return new long[] {0, remaining, retry, reset, 0};
    }
    // this window's count weighs on the next window, until its end
    long reset = (w + 2) * window - now;
    write(entry, state.addToWindow(w, cost).dropBefore(w), reset);
    return new long[] {1, Math.floorDiv(budget - used, units), 0, reset, 0, w};
  }

  /**
   * {@code sliding_window_log.lua}: a permit taken at ts counts while ts > now - W; admitted when the
   * permits counting and the cost fit the limit. New permits are stamped max(now, newest), so the log
   * stays sorted when a caller's clock is a little behind the last writer.
   */
  private long[] slidingWindowLog(Map.Entry<byte[], CounterEntry> entry, CounterEntry state) {
    long window = first;
    PermitLog log = state.log();
    PermitLog live = log.trimThrough(now - window);
    long size = live.size();
    if (size + cost > capacity) {
      if (live != log) {
        // the script's ZREMRANGEBYSCORE also runs on a denial (some permits are left: size > 0 here)
        CounterEntry trimmed = state.withLog(live);
        ExpiringEntry.write(entry, trimmed, 0);
      }
      // the permit whose expiry frees enough room for cost more
      long retry = Math.max(0, live.timeAt(size + cost - capacity - 1) + window - now);
      return new long[] {0, Math.max(0, capacity - size), retry, live.newest() + window - now, 0};
    }
    long ts = size > 0 && live.newest() >= now ? live.newest() : now;
    // the log is at rest (empty, as a fresh key) once its newest permit has left the window
    long reset = ts + window - now;
    write(entry, state.withLog(live.append(ts, cost)), reset);
    return new long[] {1, capacity - size - cost, 0, reset, 0};
  }

  /** Stores the new state, to live until it is at rest ({@code restMicros} from now) and a second more. */
  /**
   * Writes {@code state} with a time to live of {@code restMicros} (when the state is at rest: equal to
   * a fresh key) plus the margin, as the scripts' PEXPIRE.
   */
  static void write(Map.Entry<byte[], CounterEntry> entry, CounterEntry state, long restMicros) {
    ExpiringEntry.write(entry, state, ceilDiv(restMicros, 1_000) + TTL_MARGIN_MILLIS);
  }

  /** The scripts' ceildiv; Math.ceilDiv is Java 18. */
  static long ceilDiv(long a, long b) {
    return -Math.floorDiv(-a, b);
  }
}
