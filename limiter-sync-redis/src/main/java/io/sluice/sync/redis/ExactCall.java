package io.sluice.sync.redis;

import io.sluice.node.Algorithm;
import io.sluice.node.Limit;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.ExactArgs;
import io.sluice.sync.spi.ExactResult;
import io.sluice.sync.spi.StoreKeys;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * What every exact call ({@code ExactStore.acquire}) of one limit sends alike, encoded once: the
 * script, the counter key's bytes before the user key, and the arguments the limit decides (its
 * capacity, window and unit, or a bucket's mode and rates). A call then encodes only its key, its
 * time and its cost. Immutable, so shared by every deciding thread; its {@link Cache} is an atomic
 * array whose slots are replaced whole (a race encodes the same call twice, harmlessly).
 */
final class ExactCall {
  private static final byte[] METER = "meter".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] SHAPER = "shaper".getBytes(StandardCharsets.US_ASCII);

  final Limit limit;
  final LuaScript script;
  private final byte[] keyHeader;
  /** The arguments, with null where the call's time and cost go. */
  private final byte[][] template;
  private final int nowAt;
  private final int costAt;
  /** A window limit's window, microseconds (0 for a bucket): a one-integer answer's reset and window come from it. */
  private final long windowMicros;

  private ExactCall(Limit limit, LuaScript script, byte[] keyHeader, byte[][] template, int nowAt, int costAt,
      long windowMicros) {
    this.limit = limit;
    this.windowMicros = windowMicros;
    this.script = script;
    this.keyHeader = keyHeader;
    this.template = template;
    this.nowAt = nowAt;
    this.costAt = costAt;
  }

  /**
   * The call of {@code limit}'s algorithm under {@code prefix}.
   *
   * @throws IllegalArgumentException for a limit the store cannot represent (the message starts with
   *     the field) or an algorithm without an exact script
   */
  static ExactCall of(String prefix, Limit limit, LuaScript gcra, LuaScript fixedWindow, LuaScript slidingCounter,
      LuaScript slidingLog) {
    byte[] header = StoreKeys.counterKeyHeader(prefix, limit);
    Algorithm a = limit.algorithm();
    switch (a) {
      case TOKEN_BUCKET:
      case LEAKY_BUCKET:
      case LEAKY_BUCKET_SHAPER: {
        Counter c = Counter.of(limit); // whole microseconds, 53-bit burst: or a message naming the field
        return new ExactCall(limit, gcra, header, new byte[][] {a == Algorithm.LEAKY_BUCKET_SHAPER ? SHAPER : METER,
            null, null, ascii(limit.capacity()), ascii(c.scale()), ascii(c.interval())}, 1, 2, 0);
      }
      case FIXED_WINDOW: {
        long window = ExactArgs.windowMicros(limit);
        return new ExactCall(limit, fixedWindow, header, new byte[][] {null, null, ascii(limit.capacity()),
            ascii(window)}, 0, 1, window);
      }
      case SLIDING_WINDOW_LOG: {
        long window = ExactArgs.windowMicros(limit);
        return new ExactCall(limit, slidingLog, header, new byte[][] {null, null, ascii(limit.capacity()),
            ascii(window)}, 0, 1, window);
      }
      case SLIDING_WINDOW_COUNTER: {
        long window = ExactArgs.windowMicros(limit);
        return new ExactCall(limit, slidingCounter, header, new byte[][] {null, null, ascii(limit.capacity()),
            ascii(window), ascii(ExactArgs.slidingUnitMicros(limit.capacity(), window))}, 0, 1, window);
      }
      default:
        throw new IllegalArgumentException("algorithm: " + a + " has no exact script, in limit " + limit.name());
    }
  }

  /**
   * The answer of a call made at {@code nowMicros}: the script's list as it is, or, for a window
   * script's admission in the caller's own window, the one integer it answers with (fixed window: the
   * window's count after it; sliding window counter: the permits remaining), completed here with what
   * the call knows (the limit, the window, the time).
   */
  ExactResult result(Object reply, long nowMicros) {
    // (Lettuce's OBJECT output hands an integer reply over as a list of that one integer: the list
    // answers have five or six elements)
    Object one = reply instanceof Long ? reply
        : reply instanceof List && ((List<?>) reply).size() == 1 ? ((List<?>) reply).get(0)
        : null;
    if (one != null) {
      long n = (Long) one;
      long index = Math.floorDiv(nowMicros, windowMicros);
      switch (limit.algorithm()) {
        case FIXED_WINDOW:
          return new ExactResult(true, limit.capacity() - n, 0, (index + 1) * windowMicros - nowMicros, 0, index);
        case SLIDING_WINDOW_COUNTER:
          return new ExactResult(true, n, 0, (index + 2) * windowMicros - nowMicros, 0, index);
        default:
          throw new IllegalStateException(script.name() + " answered " + n + " where it answers a list");
      }
    }
    @SuppressWarnings("unchecked")
    List<Object> r = (List<Object>) reply;
    return new ExactResult((Long) r.get(0) == 1L, (Long) r.get(1), (Long) r.get(2), (Long) r.get(3), (Long) r.get(4),
        r.size() > 5 ? (Long) r.get(5) : -1);
  }

  /** KEYS of a call: the counter key of {@code key}. */
  byte[][] keys(String key) {
    return new byte[][] {StoreKeys.counterKey(keyHeader, key)};
  }

  /** ARGV of a call at {@code nowMicros} for {@code cost} permits. */
  byte[][] args(long nowMicros, long cost) {
    byte[][] args = template.clone();
    args[nowAt] = ascii(nowMicros);
    args[costAt] = ascii(cost);
    return args;
  }

  /** Small numbers' digits, made once: costs are mostly 1. */
  private static final byte[][] SMALL = new byte[256][];

  static {
    for (int i = 0; i < SMALL.length; i++) {
      SMALL[i] = Long.toString(i).getBytes(StandardCharsets.US_ASCII);
    }
  }

  /**
   * A number as Redis takes it in ARGV: its decimal digits in ASCII, written straight into the array
   * (no String on the way). Shared arrays for 0 to 255: never written to after they are made.
   */
  static byte[] ascii(long v) {
    if (v >= 0 && v < SMALL.length) {
      return SMALL[(int) v];
    }
    if (v == Long.MIN_VALUE) {
      return Long.toString(v).getBytes(StandardCharsets.US_ASCII);
    }
    boolean negative = v < 0;
    long rest = negative ? -v : v;
    int digits = 1;
    for (long t = rest; t >= 10; t /= 10) {
      digits++;
    }
    byte[] out = new byte[digits + (negative ? 1 : 0)];
    for (int i = out.length - 1; i >= (negative ? 1 : 0); i--) {
      out[i] = (byte) ('0' + rest % 10);
      rest /= 10;
    }
    if (negative) {
      out[0] = '-';
    }
    return out;
  }

  /**
   * The calls of the limits a store decides for, found by the limit's identity without a lock or an
   * allocation: one slot per identity hash (16 slots; a limit whose slot another limit took since is
   * encoded again, which a store serving a few limiters seldom sees). Concurrency: deciding threads
   * read and fill the slots at once; a slot holds an immutable call, and a race to fill it only
   * encodes a limit twice.
   */
  static final class Cache {
    private final AtomicReferenceArray<ExactCall> slots = new AtomicReferenceArray<>(16);

    /** The slot's call when it is this limit's, else null. */
    ExactCall get(Limit limit) {
      ExactCall c = slots.get(slot(limit));
      return c != null && c.limit == limit ? c : null;
    }

    void put(ExactCall call) {
      slots.set(slot(call.limit), call);
    }

    private int slot(Limit limit) {
      return System.identityHashCode(limit) & (slots.length() - 1);
    }
  }
}
