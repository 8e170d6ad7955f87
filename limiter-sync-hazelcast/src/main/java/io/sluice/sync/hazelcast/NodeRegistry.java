package io.sluice.sync.hazelcast;

import com.hazelcast.core.ReadOnly;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.IMap;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * The node registry of a {@link HazelcastCounterStore}: one entry of its {@code nodes} map (node id to
 * deadline), as {@code heartbeat.lua} keeps one sorted set, updated by an entry processor per beat or
 * departure.
 *
 * <p>Concurrency: flushers and nodes' beats call it at once. Its fields are final: Hazelcast's map
 * (thread-safe; the processors of the one entry run one at a time on its owner) and the store's
 * callback executor.
 */
final class NodeRegistry {
  private final IMap<String, HashMap<String, Long>> registry;
  private final Executor callbacks;

  NodeRegistry(IMap<String, HashMap<String, Long>> registry, Executor callbacks) {
    this.registry = registry;
    this.callbacks = callbacks;
  }

  /** {@link Heartbeat}: the nodes alive, this one included; the arguments checked already. */
  CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
    try {
      return KeyCalls.onCompletion(registry.submitToKey("nodes", new Heartbeat(nodeId, nowMillis, ttl.toMillis())),
          callbacks);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** {@link Leave}; the node id checked already. */
  CompletionStage<Void> leave(String nodeId) {
    try {
      return KeyCalls.onCompletion(registry.submitToKey("nodes", new Leave(nodeId)), callbacks).thenApply(left -> null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * {@link ReadClock}: the clock of the member that owns the registry, which every node of the cluster
   * reads (as {@code time.lua} reads the registry key's Redis server).
   */
  CompletionStage<Long> timeMicros() {
    try {
      return KeyCalls.onCompletion(registry.submitToKey("nodes", new ReadClock()), callbacks);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * {@code time.lua}: the member's clock, microseconds since the epoch (java.time's system clock, which
   * reads microseconds where the platform does, Linux among them); the entry is left as it is.
   */
  static final class ReadClock implements EntryProcessor<String, HashMap<String, Long>, Long>, ReadOnly {
    private static final long serialVersionUID = 1L;

    @Override
    public Long process(Map.Entry<String, HashMap<String, Long>> entry) {
      Instant now = Instant.now();
      return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    @Override
    public EntryProcessor<String, HashMap<String, Long>, Long> getBackupProcessor() {
      return null;
    }
  }

  /** {@code heartbeat.lua}: records a node's deadline, forgets nodes past theirs, answers how many are left. */
  static final class Heartbeat implements EntryProcessor<String, HashMap<String, Long>, Integer> {
    private static final long serialVersionUID = 1L;
    private final String nodeId;
    private final long nowMillis;
    private final long ttlMillis;

    Heartbeat(String nodeId, long nowMillis, long ttlMillis) {
      this.nodeId = nodeId;
      this.nowMillis = nowMillis;
      this.ttlMillis = ttlMillis;
    }

    @Override
    public Integer process(Map.Entry<String, HashMap<String, Long>> entry) {
      HashMap<String, Long> alive = entry.getValue() == null ? new HashMap<>() : new HashMap<>(entry.getValue());
      alive.put(nodeId, nowMillis + ttlMillis);
      alive.values().removeIf(deadline -> deadline <= nowMillis);
      // the registry itself goes away when every node has stopped beating
      HazelcastCounterStore.setWithTtl(entry, alive, 2 * ttlMillis);
      return alive.size();
    }
  }

  /** {@code leave.lua}'s registry half: the node is no longer alive. */
  static final class Leave implements EntryProcessor<String, HashMap<String, Long>, Integer> {
    private static final long serialVersionUID = 1L;
    private final String nodeId;

    Leave(String nodeId) {
      this.nodeId = nodeId;
    }

    @Override
    public Integer process(Map.Entry<String, HashMap<String, Long>> entry) {
      if (entry.getValue() == null || !entry.getValue().containsKey(nodeId)) {
        return 0;
      }
      HashMap<String, Long> alive = new HashMap<>(entry.getValue());
      alive.remove(nodeId);
      entry.setValue(alive);
      return alive.size();
    }
  }
}
