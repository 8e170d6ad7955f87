package io.sluice.sync.spi;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a store instance remembers having recorded: that the store answered a node's numbered batch on
 * a group, when, and (Redis) which batch had created the store's record of the node. The store keeps each node's last sequence for a while (its sequence TTL); a batch
 * that finds no record although one was written within that time means the store lost its data (a
 * restart without persistence, {@code FLUSHALL}, a whole Hazelcast cluster started again), and with it
 * the counts it had acknowledged from the node. The answer then says so ({@link FlushResult#storeForgot()})
 * and the node sends those counts again. A record that merely expired (a node idle for longer than the
 * TTL) is not a loss: nothing it vouched for still weighs.
 *
 * <p>Concurrency: the answers of a store's calls arrive on its I/O threads, several at once. Both
 * tables are concurrent maps and every record is replaced whole (an immutable {@code Record}), so a
 * reader sees one answer's record or the next one's, never half of each; a node's flusher numbers its
 * batches one at a time, so the records of one node and group are written in order.
 */
public final class SequenceWitness {
  /** Records kept at most; beyond that, those older than the TTL go (limiters come and go with node ids). */
  private static final int MAX_RECORDS = 65_536;
  private final long memoryNanos;
  private final ConcurrentHashMap<String, Record> records = new ConcurrentHashMap<>();
  /** Per node and group, the newest batch whose answer found the loss, until a newer batch is answered. */
  private final ConcurrentHashMap<String, Long> lossAt = new ConcurrentHashMap<>();

  /** When a batch was last recorded, and what the store said created the record (0: not told). */
  private record Record(long at, long created) { }

  /**
   * @param sequenceTtl how long the store keeps a node's sequence; a record absent within a second of
   *     its expiry is taken as expired (clocks and the store's TTL granularity), not as lost
   */
  public SequenceWitness(Duration sequenceTtl) {
    this.memoryNanos = sequenceTtl.compareTo(Duration.ofDays(365 * 100)) > 0 ? Long.MAX_VALUE
        : Math.max(0, sequenceTtl.minusSeconds(1).toNanos());
  }

  /** The store recorded a numbered batch of {@code nodeId} on {@code group}. */
  public void recorded(String nodeId, int group) {
    put(nodeId, group, 0);
  }

  /**
   * The store had no record of {@code nodeId}'s sequence on {@code group}: whether it had one this
   * instance saw recorded within the TTL (a loss), rather than none yet or one that expired.
   */
  public boolean forgot(String nodeId, int group) {
    Record r = records.get(keyOf(nodeId, group));
    return r != null && System.nanoTime() - r.at < memoryNanos;
  }

  /** The record's creator as last told ({@link #recreated}), 0 if none. */
  public long created(String nodeId, int group) {
    Record r = records.get(keyOf(nodeId, group));
    return r == null ? 0 : r.created;
  }

  /**
   * The store recorded a numbered batch and said which batch created the record: whether that is
   * another one than it said before, within the TTL of the last batch recorded (the record was lost
   * and created again, by this batch or by an earlier one replayed after a reconnect).
   */
  public boolean recreated(String nodeId, int group, long created) {
    Record r = records.get(keyOf(nodeId, group));
    boolean lost = r != null && r.created != 0 && r.created != created && System.nanoTime() - r.at < memoryNanos;
    put(nodeId, group, created);
    return lost;
  }

  /**
   * Whether the answer to batch {@code sequence} of {@code nodeId} on {@code group} must tell its node
   * that the store lost its data: {@code seenNow} (this answer found it), or an earlier answer found it
   * for this batch or a later one (an answer that came after the caller stopped waiting is read by no
   * one, and the caller retries the same batch, whose own answer could no longer find the loss). The
   * caller moves on to a newer batch only once it has read an answer, so the first answer of a newer
   * batch ends it.
   */
  public boolean lossToTell(String nodeId, int group, long sequence, boolean seenNow) {
    String key = keyOf(nodeId, group);
    if (seenNow) {
      lossAt.merge(key, sequence, Math::max);
      return true;
    }
    Long at = lossAt.get(key);
    if (at == null) {
      return false;
    }
    if (sequence > at) {
      lossAt.remove(key, at);
      return false;
    }
    return true;
  }

  private static String keyOf(String nodeId, int group) {
    return nodeId + '\u0000' + group;
  }

  private void put(String nodeId, int group, long created) {
    long now = System.nanoTime();
    records.put(keyOf(nodeId, group), new Record(now, created));
    if (records.size() > MAX_RECORDS) {
      records.values().removeIf(r -> now - r.at >= memoryNanos);
    }
  }
}
