package io.sluice.sync.redis;

import io.sluice.node.Algorithm;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.StoreKeys;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * {@code flush.lua}'s wire layout, written once: the KEYS and ARGV of a batch, and the answer read
 * back. The head is {@link #HEAD} arguments (sequence, sequence TTL, the node's time, the demand
 * index's TTL, node id, the sequence that created the node's record, and the heartbeat the batch
 * carries: registry name or empty, time, TTL); then per delta its kind and the
 * kind's arguments, {@link Kind#width} in all, as the script's {@code HEAD} and {@code width} table
 * say ({@code FlushWireTest} reads both from the script). The answer is {@code applied, created}, then
 * per delta {@link Kind#answerWidth} values: its count and the previous window's, for a window limit
 * the node's claim, its split, whether a take was counted and the claim granted on the windows ahead
 * of it, and for a region its shares of that
 * window and the next; last, for a batch that carries a heartbeat, the nodes alive.
 */
final class FlushWire {
  /** Arguments before the first delta's: flush.lua's {@code HEAD}. */
  static final int HEAD = 9;

  private static final byte[] ZERO = {'0'};
  private static final byte[] ONE = {'1'};
  private static final byte[] EMPTY = {};

  /** A delta's kind as the script names it, with its arguments' and answer's widths. */
  enum Kind {
    /**
     * A sliding window's counts and claims: kind, window, TTL, amount, want, capacity, nodes, window us,
     * need, token, settle, windows ahead, claim wanted ahead, keep, allowed, spent, reserve ({@link
     * Delta#allowing}, 0 here), and whether the claim holds a part of the fading (1, or 0: {@link
     * Delta#withoutFadingPart}).
     */
    SLIDING('w', 18, 6),
    /** A fixed window's: the same arguments as {@link #SLIDING} but the last (a fixed window has no fading). */
    FIXED('f', 17, 6),
    /**
     * A fixed window's permits sent after the window ({@link Delta#afterItsWindow()}): kind, window,
     * TTL, amount; answered as {@link #FIXED} (claim, split, take and ahead 0).
     */
    FIXED_OVER('o', 4, 6),
    /** A GCRA backlog (token and leaky buckets): kind, scale, interval, amount. */
    GCRA('g', 4, 2),
    /** A region's count of a global quota: kind, window, TTL, amount, denied. */
    REGION('r', 5, 4);

    /** The kind's name in the script's {@code width} table. */
    final String letter;
    /** Arguments of a delta of this kind, its kind included. */
    final int width;
    /** Values the script answers per delta of this kind. */
    final int answerWidth;
    private final byte[] wire;

    Kind(char letter, int width, int answerWidth) {
      this.letter = String.valueOf(letter);
      this.width = width;
      this.answerWidth = answerWidth;
      this.wire = new byte[] {(byte) letter};
    }

    /** The kind a delta of this counter goes as. */
    static Kind of(Counter c) {
      if (c.regional()) {
        return REGION;
      }
      if (c.kind() != Counter.Kind.WINDOW) {
        return GCRA;
      }
      return c.limit().algorithm() == Algorithm.FIXED_WINDOW ? FIXED : SLIDING;
    }

    /** The kind {@code d} goes as. */
    static Kind of(Delta d) {
      return d.isAfterItsWindow() ? FIXED_OVER : of(d.counter());
    }
  }

  private FlushWire() {
  }

  /** A batch as the script takes it. */
  record Call(byte[][] keys, byte[][] args) {
  }

  /**
   * The KEYS and ARGV of {@code batch}: the node's sequence key first, a counter key per delta, and
   * the regional limit's demand index last when the batch has regional deltas ({@code regional}, the
   * counter of that limit, or null). {@code slotTag}: the sequence key's hash tag on a cluster, or null.
   */
  static Call encode(Batch batch, String prefix, String slotTag, byte[] sequenceTtlSeconds, long created,
      Counter regional) {
    List<Delta> deltas = batch.deltas();
    int argCount = HEAD;
    for (Delta d : deltas) {
      argCount += Kind.of(d).width;
    }
    byte[][] keys = new byte[deltas.size() + 1 + (regional != null ? 1 : 0) + (batch.beats() ? 1 : 0)][];
    byte[][] args = new byte[argCount][];
    keys[0] = StoreKeys.sequenceKey(prefix, batch.nodeId(), batch.group(), slotTag);
    args[0] = RedisCounterStore.ascii(batch.sequence());
    args[1] = sequenceTtlSeconds;
    args[2] = RedisCounterStore.ascii(batch.nowMicros());
    args[3] = regional != null ? RedisCounterStore.ascii(regional.windowTtlMillis()) : ZERO;
    if (regional != null) {
      keys[deltas.size() + 1] = StoreKeys.demandIndexKey(prefix, regional.limit().name());
    }
    args[4] = batch.nodeId().getBytes(StandardCharsets.UTF_8);
    args[5] = batch.claimOnly() ? ZERO : RedisCounterStore.ascii(created);
    if (batch.beats()) {
      keys[keys.length - 1] = StoreKeys.registryKey(prefix);
      args[6] = batch.beatNode().getBytes(StandardCharsets.UTF_8);
      args[7] = RedisCounterStore.ascii(batch.beatNowMillis());
      args[8] = RedisCounterStore.ascii(batch.beatTtlMillis());
    } else {
      args[6] = EMPTY;
      args[7] = ZERO;
      args[8] = ZERO;
    }
    int a = HEAD;
    for (int i = 0; i < deltas.size(); i++) {
      Delta d = deltas.get(i);
      Counter c = d.counter();
      keys[i + 1] = StoreKeys.counterKey(prefix, c.limit(), d.key());
      Kind kind = Kind.of(d);
      args[a] = kind.wire;
      switch (kind) {
        case GCRA -> gcra(args, a + 1, c, d);
        case REGION -> region(args, a + 1, c, d);
        case SLIDING -> {
          window(args, a + 1, c, d);
          args[a + 17] = d.holdsFadingPart() ? ONE : ZERO;
        }
        case FIXED -> window(args, a + 1, c, d);
        case FIXED_OVER -> over(args, a + 1, c, d);
      }
      a += kind.width;
    }
    return new Call(keys, args);
  }

  private static void window(byte[][] args, int a, Counter c, Delta d) {
    args[a++] = RedisCounterStore.ascii(d.window());
    args[a++] = RedisCounterStore.ascii(c.windowTtlMillis());
    args[a++] = RedisCounterStore.ascii(d.amount());
    args[a++] = RedisCounterStore.ascii(d.want());
    args[a++] = RedisCounterStore.ascii(c.limit().capacity());
    args[a++] = RedisCounterStore.ascii(d.nodes());
    args[a++] = RedisCounterStore.ascii(c.windowNanos() / 1_000);
    args[a++] = RedisCounterStore.ascii(d.need());
    args[a++] = RedisCounterStore.ascii(d.token());
    args[a++] = RedisCounterStore.ascii(d.settle());
    args[a++] = RedisCounterStore.ascii(d.aheadWindows());
    args[a++] = RedisCounterStore.ascii(d.aheadWant());
    args[a++] = RedisCounterStore.ascii(d.keep());
    args[a++] = RedisCounterStore.ascii(d.allowed());
    args[a++] = RedisCounterStore.ascii(d.spent());
    args[a] = RedisCounterStore.ascii(d.reserve());
  }

  private static void over(byte[][] args, int a, Counter c, Delta d) {
    args[a++] = RedisCounterStore.ascii(d.window());
    args[a++] = RedisCounterStore.ascii(c.windowTtlMillis());
    args[a] = RedisCounterStore.ascii(d.amount());
  }

  private static void region(byte[][] args, int a, Counter c, Delta d) {
    args[a++] = RedisCounterStore.ascii(d.window());
    args[a++] = RedisCounterStore.ascii(c.windowTtlMillis());
    args[a++] = RedisCounterStore.ascii(d.amount());
    args[a] = RedisCounterStore.ascii(d.denied());
  }

  private static void gcra(byte[][] args, int a, Counter c, Delta d) {
    args[a++] = RedisCounterStore.ascii(c.scale());
    args[a++] = RedisCounterStore.ascii(c.interval());
    args[a] = RedisCounterStore.ascii(d.amount());
  }

  /** The script's answer for {@code batch} (see the class doc for its layout). */
  static FlushResult decode(List<Object> reply, Batch batch) {
    FlushResult result = decode(reply, batch.deltas());
    return batch.beats() ? result.withAlive(((Long) reply.get(reply.size() - 1)).intValue()) : result;
  }

  /** The script's answer for {@code deltas}, a heartbeat's left out (see the class doc for its layout). */
  static FlushResult decode(List<Object> reply, List<Delta> deltas) {
    long[] values = new long[2 * deltas.size()];
    long[] shares = null;
    long[] claims = new long[deltas.size()];
    long[] splits = new long[deltas.size()];
    long[] taken = new long[deltas.size()];
    long[] ahead = new long[deltas.size()];
    int at = 2; // (applied, created)
    for (int i = 0; i < deltas.size(); i++) {
      Kind kind = Kind.of(deltas.get(i));
      values[2 * i] = (Long) reply.get(at);
      values[2 * i + 1] = (Long) reply.get(at + 1);
      claims[i] = -1;
      switch (kind) {
        case SLIDING, FIXED, FIXED_OVER -> {
          claims[i] = (Long) reply.get(at + 2);
          splits[i] = (Long) reply.get(at + 3);
          taken[i] = (Long) reply.get(at + 4);
          ahead[i] = (Long) reply.get(at + 5);
        }
        case REGION -> {
          if (shares == null) {
            shares = new long[2 * deltas.size()];
            Arrays.fill(shares, -1);
          }
          shares[2 * i] = (Long) reply.get(at + 2);
          shares[2 * i + 1] = (Long) reply.get(at + 3);
        }
        case GCRA -> {
          // the backlog, and a 0 where a window has its previous count: no more
        }
      }
      at += kind.answerWidth;
    }
    return new FlushResult(((Long) reply.get(0)) == 1L, values, shares, claims, splits, taken).withAhead(ahead);
  }
}
