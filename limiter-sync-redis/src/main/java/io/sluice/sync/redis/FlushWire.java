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
 * back. The head is six arguments (sequence, sequence TTL, the node's time, the demand index's TTL,
 * node id, the sequence that created the node's record); then per delta its kind and the kind's
 * arguments, as many as the script's {@code width} table says ({@code FlushWireTest} reads that table
 * from the script). The answer is {@code applied, created}, then per delta its count and the previous
 * window's, for a window limit the node's claim, its split and whether a take was counted, and for a
 * region its shares of that window and the next.
 */
final class FlushWire {
  /** Arguments before the first delta's. */
  static final int HEAD = 6;
  /** Arguments of a window delta ('w', 'f'): kind, window, TTL, amount, want, capacity, nodes, window us, need, token, settle. */
  static final int WINDOW_WIDTH = 11;
  /** Arguments of a GCRA delta ('g'): kind, scale, interval, amount. */
  static final int GCRA_WIDTH = 4;
  /** Arguments of a region's delta ('r'): kind, window, TTL, amount, denied. */
  static final int REGION_WIDTH = 5;

  private static final byte[] SLIDING = {'w'};
  private static final byte[] FIXED = {'f'};
  private static final byte[] GCRA = {'g'};
  private static final byte[] REGION = {'r'};
  private static final byte[] ZERO = {'0'};

  private FlushWire() {
  }

  /** A batch as the script takes it. */
  record Call(byte[][] keys, byte[][] args) {
  }

  /** The kind a delta of this counter goes as, as the script names it. */
  static String kindOf(Counter c) {
    if (c.regional()) {
      return "r";
    }
    if (c.kind() != Counter.Kind.WINDOW) {
      return "g";
    }
    return c.limit().algorithm() == Algorithm.FIXED_WINDOW ? "f" : "w";
  }

  /** How many arguments a delta of this counter takes, its kind included. */
  static int width(Counter c) {
    return c.regional() ? REGION_WIDTH : c.kind() == Counter.Kind.WINDOW ? WINDOW_WIDTH : GCRA_WIDTH;
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
      argCount += width(d.counter());
    }
    byte[][] keys = new byte[deltas.size() + (regional != null ? 2 : 1)][];
    byte[][] args = new byte[argCount][];
    keys[0] = StoreKeys.sequenceKey(prefix, batch.nodeId(), batch.group(), slotTag);
    args[0] = RedisCounterStore.ascii(batch.sequence());
    args[1] = sequenceTtlSeconds;
    args[2] = RedisCounterStore.ascii(batch.nowMicros());
    args[3] = regional != null ? RedisCounterStore.ascii(regional.windowTtlMillis()) : ZERO;
    if (regional != null) {
      keys[keys.length - 1] = StoreKeys.demandIndexKey(prefix, regional.limit().name());
    }
    args[4] = batch.nodeId().getBytes(StandardCharsets.UTF_8);
    args[5] = batch.claimOnly() ? ZERO : RedisCounterStore.ascii(created);
    int a = HEAD;
    for (int i = 0; i < deltas.size(); i++) {
      Delta d = deltas.get(i);
      Counter c = d.counter();
      keys[i + 1] = StoreKeys.counterKey(prefix, c.limit(), d.key());
      a = c.kind() == Counter.Kind.WINDOW ? window(args, a, c, d) : gcra(args, a, c, d);
    }
    return new Call(keys, args);
  }

  private static int window(byte[][] args, int a, Counter c, Delta d) {
    args[a++] = c.regional() ? REGION : c.limit().algorithm() == Algorithm.FIXED_WINDOW ? FIXED : SLIDING;
    args[a++] = RedisCounterStore.ascii(d.window());
    args[a++] = RedisCounterStore.ascii(c.windowTtlMillis());
    args[a++] = RedisCounterStore.ascii(d.amount());
    if (c.regional()) {
      args[a++] = RedisCounterStore.ascii(d.denied());
      return a;
    }
    args[a++] = RedisCounterStore.ascii(d.want());
    args[a++] = RedisCounterStore.ascii(c.limit().capacity());
    args[a++] = RedisCounterStore.ascii(d.nodes());
    args[a++] = RedisCounterStore.ascii(c.windowNanos() / 1_000);
    args[a++] = RedisCounterStore.ascii(d.need());
    args[a++] = RedisCounterStore.ascii(d.token());
    args[a++] = RedisCounterStore.ascii(d.settle());
    return a;
  }

  private static int gcra(byte[][] args, int a, Counter c, Delta d) {
    args[a++] = GCRA;
    args[a++] = RedisCounterStore.ascii(c.scale());
    args[a++] = RedisCounterStore.ascii(c.interval());
    args[a++] = RedisCounterStore.ascii(d.amount());
    return a;
  }

  /** The script's answer for {@code deltas} (see the class doc for its layout). */
  static FlushResult decode(List<Object> reply, List<Delta> deltas) {
    long[] values = new long[2 * deltas.size()];
    long[] shares = null;
    long[] claims = new long[deltas.size()];
    long[] splits = new long[deltas.size()];
    long[] taken = new long[deltas.size()];
    int at = 2; // (applied, created)
    for (int i = 0; i < deltas.size(); i++) {
      values[2 * i] = (Long) reply.get(at++);
      values[2 * i + 1] = (Long) reply.get(at++);
      Counter c = deltas.get(i).counter();
      boolean claimed = c.kind() == Counter.Kind.WINDOW && !c.regional();
      claims[i] = claimed ? (Long) reply.get(at++) : -1;
      splits[i] = claimed ? (Long) reply.get(at++) : 0;
      taken[i] = claimed ? (Long) reply.get(at++) : 0;
      if (c.regional()) {
        if (shares == null) {
          shares = new long[2 * deltas.size()];
          Arrays.fill(shares, -1);
        }
        shares[2 * i] = (Long) reply.get(at++);
        shares[2 * i + 1] = (Long) reply.get(at++);
      }
    }
    return new FlushResult(((Long) reply.get(0)) == 1L, values, shares, claims, splits, taken);
  }
}
