package io.sluice.region;

import io.sluice.node.Limit;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.redis.LuaScript;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.StoreKeys;
import io.sluice.sync.spi.StoreUnavailableException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The region coordinator's side of a region's Redis: it reads each regional quota's demand (what the
 * region's nodes admitted and denied, flushed by {@link SyncedLimiter} with
 * {@link SyncedLimiter.Builder#regionalQuota(int)}) and writes the region's shares, fenced by the
 * coordinator's epoch. Shares sit in the quota's counter keys, so every flush reads them back with
 * the counts at no extra cost. Calls are synchronous (the coordinator runs rounds on its own thread)
 * and bounded by the store's command timeout.
 */
public final class RegionShareStore implements AutoCloseable {
  private static final LuaScript DEMAND = LuaScript.load(RegionShareStore.class, "region_demand");
  private static final LuaScript SHARE = LuaScript.load(RegionShareStore.class, "region_share");
  private static final LuaScript KEYS = LuaScript.load(RegionShareStore.class, "region_keys");
  private static final LuaScript EPOCH = LuaScript.load(RegionShareStore.class, "region_epoch");
  private static final LuaScript NODES = LuaScript.load(RegionShareStore.class, "region_nodes");

  private final RedisCounterStore store;
  private final String prefix;
  private final Duration timeout;

  private RegionShareStore(RedisCounterStore store) {
    this.store = store;
    this.prefix = store.config().keyPrefix();
    this.timeout = store.config().commandTimeout().multipliedBy(2);
  }

  /**
   * Connects to one region's Redis (standalone or Sentinel; a cluster cannot hold one quota's demand
   * index).
   *
   * @throws IllegalArgumentException for a cluster configuration or an unparsable URI
   * @throws StoreUnavailableException when Redis cannot be reached
   */
  public static RegionShareStore connect(RedisStoreConfig config) {
    if (config.cluster()) {
      throw new IllegalArgumentException("cluster: a region's shares need a standalone or Sentinel Redis");
    }
    return new RegionShareStore(RedisCounterStore.connect(config));
  }

  /**
   * What a share record gives window w, as {@code flush.lua} reads it for the nodes: the share when the
   * record was written for w, the later share for the windows after it up to the lease's end, else -1
   * (no record, or the lease is over: the static share applies).
   */
  public static long shareFor(long shareWindow, long share, long nextShare, long leaseEnd, long w) {
    if (shareWindow < 0) {
      return -1;
    } else if (w == shareWindow) {
      return share;
    } else if (w > shareWindow && w <= leaseEnd) {
      return nextShare;
    }
    return -1;
  }

  /**
   * One key of a regional quota as a region's Redis holds it: window w's count and denied demand, window
   * w + 1's count, the share record, window w - 1's attempts (count and denied demand) and its count
   * alone (which a sliding window counter still weighs in window w).
   */
  public record KeyState(String key, long admitted, long denied, long admittedNext, long shareWindow, long share,
      long nextShare, long leaseEnd, long epoch, long attemptsBefore, long admittedBefore) {

    /** The share the region's nodes enforce in window w: from the record, or -1 for the static share. */
    public long shareFor(long w) {
      return RegionShareStore.shareFor(shareWindow, share, nextShare, leaseEnd, w);
    }
  }

  /** A share to write: for the current window, for later windows up to the lease's last window. */
  public record ShareWrite(String key, long share, long nextShare, long leaseEnd) {
    public ShareWrite {
      if (key == null || key.isEmpty()) {
        throw new IllegalArgumentException("key: must not be null or empty");
      }
      if (share < 0 || nextShare < 0 || leaseEnd < 0) {
        throw new IllegalArgumentException("share: shares and lease end must not be negative, got " + share + ", "
            + nextShare + ", " + leaseEnd + " for key " + key);
      }
    }
  }

  /**
   * The answer to a write: refused when the region accepted a newer epoch (the writer is a stale
   * leader); else the shares as written, each at least what the region had already counted.
   */
  public record WriteResult(boolean accepted, long epoch, long[] shares, long[] nextShares) {
  }

  /** The highest coordinator epoch this region accepted shares from; 0 before any. */
  public long epoch() {
    List<Object> r = await(store.evalsha(EPOCH, new byte[][] {StoreKeys.epochKey(prefix)}, new byte[0][]));
    return (Long) r.get(0);
  }

  /**
   * The region's node registry as the nodes' heartbeats wrote it ({@code <prefix>:nodes}): each node's
   * heartbeat deadline (ms, the node's clock), a node that stopped beating keeping its last until
   * another node's heartbeat removes it; and the nodes that left on purpose lately ({@code <prefix>:left}).
   */
  public Registry nodes() {
    byte[][] keys = {StoreKeys.registryKey(prefix),
        (prefix + ":left").getBytes(StandardCharsets.UTF_8)};
    List<Object> r = await(store.evalsha(NODES, keys, new byte[0][]));
    List<?> alive = (List<?>) r.get(0);
    Map<String, Long> deadlines = new HashMap<>();
    for (int i = 0; i + 1 < alive.size(); i += 2) {
      deadlines.put(new String((byte[]) alive.get(i), StandardCharsets.UTF_8), (Long) alive.get(i + 1));
    }
    Set<String> left = new HashSet<>();
    for (Object node : (List<?>) r.get(1)) {
      left.add(new String((byte[]) node, StandardCharsets.UTF_8));
    }
    return new Registry(deadlines, left);
  }

  /** A region's node registry: heartbeat deadlines by node, and the nodes that left on purpose. */
  public record Registry(Map<String, Long> deadlines, Set<String> left) {
    public static final Registry EMPTY = new Registry(Map.of(), Set.of());
  }

  /**
   * Keys of a quota the region's nodes flushed in window w or the one before, at most
   * {@code maxKeys}, the most recent first.
   */
  public List<String> keys(Limit limit, long window, int maxKeys) {
    if (maxKeys < 1 || maxKeys > 1_000_000) {
      throw new IllegalArgumentException("maxKeys: must be between 1 and 1,000,000, got " + maxKeys);
    }
    byte[] index = StoreKeys.demandIndexKey(prefix, limit.name());
    List<Object> keys = await(store.evalsha(KEYS, new byte[][] {index},
        new byte[][] {RedisCounterStore.ascii(Math.max(0, window - 1)), RedisCounterStore.ascii(maxKeys)}));
    List<String> out = new ArrayList<>(keys.size());
    for (Object k : keys) {
      try {
        out.add(StoreKeys.keyOf(prefix, StoreKeys.storeName(limit), (byte[]) k));
      } catch (IllegalArgumentException notThisLayout) {
        // a key indexed by a node of a version before the limit name was length-prefixed (the index
        // lives about two windows): its counter is not one this version reads or writes
      }
    }
    return out;
  }

  /** The region's counts of window w and share records for these keys of a quota, in order. */
  public List<KeyState> read(Limit limit, long window, List<String> keys) {
    List<KeyState> out = new ArrayList<>(keys.size());
    if (keys.isEmpty()) {
      return out;
    }
    byte[][] storeKeys = new byte[keys.size()][];
    for (int i = 0; i < keys.size(); i++) {
      storeKeys[i] = StoreKeys.counterKey(prefix, limit, keys.get(i));
    }
    List<Object> r = await(store.evalsha(DEMAND, storeKeys, new byte[][] {RedisCounterStore.ascii(window)}));
    for (int i = 0; i < keys.size(); i++) {
      int b = 10 * i;
      out.add(new KeyState(keys.get(i), l(r, b), l(r, b + 1), l(r, b + 2), l(r, b + 3), l(r, b + 4), l(r, b + 5),
          l(r, b + 6), l(r, b + 7), l(r, b + 8) + l(r, b + 9), l(r, b + 8)));
    }
    return out;
  }

  private static final byte[] WINDOW_KIND = "window".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] BUCKET_KIND = "bucket".getBytes(StandardCharsets.US_ASCII);

  /**
   * Writes shares of window w with the writer's epoch; the keys live at least {@code ttl} (to the end
   * of the lease). Refused as a whole when the region has accepted a newer epoch. A token-bucket
   * quota's ({@link Counter#regionalBucket()}) shares are rates, in force from {@code nowMicros} (the
   * writer's time, us since the epoch: the region's buckets are drained to it at the rates before).
   */
  public WriteResult write(long epoch, Counter counter, long window, long nowMicros, Duration ttl,
      List<ShareWrite> writes) {
    Limit limit = counter.limit();
    if (epoch < 1) {
      throw new IllegalArgumentException("epoch: must be positive, got " + epoch);
    }
    if (writes.isEmpty()) {
      return new WriteResult(true, epoch, new long[0], new long[0]);
    }
    byte[][] keys = new byte[writes.size() + 1][];
    int head = 7;
    byte[][] args = new byte[head + 3 * writes.size()][];
    keys[0] = StoreKeys.epochKey(prefix);
    args[0] = RedisCounterStore.ascii(epoch);
    args[1] = RedisCounterStore.ascii(window);
    args[2] = RedisCounterStore.ascii(Math.max(1, ttl.toMillis()));
    boolean bucket = counter.regionalBucket();
    args[3] = bucket ? BUCKET_KIND : WINDOW_KIND;
    args[4] = RedisCounterStore.ascii(bucket ? nowMicros : 0);
    args[5] = RedisCounterStore.ascii(bucket ? counter.windowNanos() / 1_000 : 0);
    args[6] = RedisCounterStore.ascii(bucket ? counter.staticShare() : 0);
    for (int i = 0; i < writes.size(); i++) {
      ShareWrite w = writes.get(i);
      keys[i + 1] = StoreKeys.counterKey(prefix, limit, w.key());
      args[head + 3 * i] = RedisCounterStore.ascii(w.share());
      args[head + 1 + 3 * i] = RedisCounterStore.ascii(w.nextShare());
      args[head + 2 + 3 * i] = RedisCounterStore.ascii(w.leaseEnd());
    }
    List<Object> r = await(store.evalsha(SHARE, keys, args));
    if ((Long) r.get(0) == 0L) {
      return new WriteResult(false, (Long) r.get(1), null, null);
    }
    long[] shares = new long[writes.size()];
    long[] next = new long[writes.size()];
    for (int i = 0; i < writes.size(); i++) {
      shares[i] = l(r, 2 + 2 * i);
      next[i] = l(r, 3 + 2 * i);
    }
    return new WriteResult(true, (Long) r.get(1), shares, next);
  }

  private static long l(List<Object> r, int i) {
    return (Long) r.get(i);
  }

  private <T> T await(java.util.concurrent.CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("interrupted while waiting for Redis", e);
    } catch (ExecutionException e) {
      throw new StoreUnavailableException("region Redis call failed: " + e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      throw new StoreUnavailableException("region Redis call timed out after " + timeout.toMillis() + " ms", e);
    }
  }

  @Override
  public void close() {
    store.close();
  }
}
