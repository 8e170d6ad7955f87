package io.sluice.sync.spi;

import io.sluice.node.Durations;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The narrow port to a shared store (Redis, Hazelcast). Retry, circuit breaking and fallback live
 * above it, once, in the synchronizer.
 *
 * <p>Implementations apply every delta of a {@link Batch} exactly once per (node, group, sequence):
 * a batch whose sequence is not above the last one applied for that node is not applied again (or,
 * if it was applied only in part, only its missing part is), and its answer carries the current
 * values. Each key's update is atomic; the Redis store also applies a whole batch atomically (one
 * script), the Hazelcast store key by key (one entry processor per key).
 */
public interface CounterStore extends AutoCloseable {

  /** The group of a key: keys of one group can be flushed in one atomic batch (a Redis hash slot). */
  int group(Counter counter, String key);

  /** Most deltas one batch may carry. */
  int maxBatchSize();

  /** Applies the batch; the stage fails with the store's error or a timeout. */
  CompletionStage<FlushResult> flush(Batch batch);

  /**
   * The node registry: records that {@code nodeId} is alive for {@code ttl} from {@code nowMillis}
   * and answers how many nodes are alive, itself included.
   */
  CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl);

  /**
   * Whether a batch of {@code group} may carry the node's heartbeat ({@link Batch#beating}): the store
   * then records it with the flush, as {@link #heartbeat} would, and answers
   * {@link FlushResult#alive()}. A node whose flushes carry its beats makes no heartbeat call of its
   * own. False by default: the store ignores a batch's beat and answers {@code alive() == 0}.
   */
  default boolean beatsInFlush(int group) {
    return false;
  }

  /** A heartbeat's arguments, as every store checks them before its call. */
  static void checkHeartbeat(String nodeId, Duration ttl) {
    if (nodeId == null || nodeId.isEmpty()) {
      throw new IllegalArgumentException("nodeId: must not be null or empty");
    }
    if (ttl == null || ttl.toMillis() < 1) {
      throw new IllegalArgumentException("ttl: must be at least 1ms, got " + Durations.format(ttl));
    }
  }

  /**
   * The longest one call can take before the store itself fails it (its command timeout), or null
   * when it has none of its own. The synchronizer's default circuit breaker counts a call as slow
   * below this, so that a slow store opens the breaker before its calls merely time out.
   */
  default Duration callTimeout() {
    return null;
  }

  /**
   * Whether the store counts takes ({@link Delta#taking}) and settles them ({@link Delta#settling}),
   * as {@code flush.lua} does: a decision then asks for a claim and counts its permit in one call. A
   * store that does not (the default) gets claim-only calls without permits.
   */
  default boolean countsTakes() {
    return false;
  }

  /**
   * Whether the store keeps the nodes' claims on the window counters of ordinary limits as {@code
   * flush.lua} does ({@link Delta#claiming}; {@link FlushResult#claim} 0 or more for such a delta):
   * a node then admits within the claims the store granted it, and a decision its claim cannot pay
   * asks the store for one. A store that does not (the default) gets shares instead, as regional
   * quotas do: at each sync, each node's part of what is left. Chosen once, when a limiter is built.
   */
  default boolean keepsClaims() {
    return false;
  }

  /**
   * Whether the store keeps the nodes' allowances on window counters ({@link Delta#allowing}) as {@code
   * flush.lua} does: claims and takes granted out of the capacity less the allowances' reserve, allowed
   * permits counted without charging the node's claim, and on a sliding window a claim's part of the
   * fading started no earlier than {@link Delta#partStartMicros} where the claim found no room, and said
   * in the answer ({@link FlushResult#fadingPartFrom}). Nodes admit under allowances only on a
   * store that does; false by default (a store that ignored the reserve would let them pass the limit).
   */
  default boolean keepsAllowances() {
    return false;
  }

  /**
   * Calls the store refused for want of memory since it was opened (Redis: {@code OOM} answers when
   * {@code maxmemory} is reached under {@code noeviction}); 0 for a store that has no such limit.
   */
  default long outOfMemoryErrors() {
    return 0;
  }

  /**
   * Whether the store keeps regional quotas ({@link Counter#regional}): their denied demand, the
   * demand index a region coordinator reads and the shares it writes. Only a standalone Redis does.
   */
  default boolean sharesRegionalQuotas() {
    return false;
  }

  /**
   * Whether the store has one clock every node can read ({@link #timeMicros}): Redis does (its {@code
   * TIME}); false by default. Nodes that read the wall clock align theirs to it, so that they agree
   * about which window a request falls in however far apart their own clocks are.
   */
  default boolean tellsTime() {
    return false;
  }

  /**
   * The store's clock, microseconds since the epoch, read when the call reaches the store (a node
   * takes the middle of its call's round trip for that moment). Only where {@link #tellsTime()}.
   */
  default CompletionStage<Long> timeMicros() {
    return CompletableFuture.failedFuture(new UnsupportedOperationException("this store does not tell time"));
  }

  /** How long a store remembers that a node left the registry ({@link #leave}). */
  Duration LEFT_MEMORY = Duration.ofMinutes(1);

  /**
   * The node leaves the registry on purpose (its limiter closes): it stops counting as alive at once,
   * and the store remembers for {@link #LEFT_MEMORY} that it left, so that a region coordinator tells
   * a node that left from one that stopped beating (cut off, or crashed), which may still be admitting
   * by its failure policy. A store without a registry of its own does nothing (the default).
   */
  default CompletionStage<Void> leave(String nodeId, long nowMillis) {
    return CompletableFuture.completedFuture(null);
  }

  @Override
  void close();
}
