package io.sluice.sync.spi;

import java.time.Duration;
import java.util.List;

/**
 * One flush: a node's deltas for keys of one store group (a Redis hash slot), with the node's
 * sequence number for that group. A batch is immutable: a retry sends the very same batch, so the
 * store can tell a retry (same sequence) from new work and never apply it twice.
 */
public final class Batch {
  /**
   * The sequence of a claim-only batch: window deltas that ask for claims, without permits or with a
   * take ({@link Delta#taking}: permits counted only if the claim covers them, once per token). The
   * store applies it every time and leaves the node's sequence alone (a take's token keeps it from
   * counting twice), so a decision may ask for a claim while the node's numbered flushes are on their way.
   */
  public static final long CLAIM_ONLY = 0;
  private final String nodeId;
  private final int group;
  private final long sequence;
  private final long nowMicros;
  private final List<Delta> deltas;
  /** The registry heartbeat this batch carries (see {@link #beating}): the node's id, or null for none. */
  private final String beatNode;
  private final long beatNowMillis;
  private final long beatTtlMillis;

  public Batch(String nodeId, int group, long sequence, long nowMicros, List<Delta> deltas) {
    if (nodeId == null || nodeId.isEmpty()) {
      throw new IllegalArgumentException("nodeId: must not be null or empty");
    }
    if (sequence < 0 || sequence >= Counter.LUA_MAX_EXACT) {
      throw new IllegalArgumentException("sequence: must be between 0 and 2^53, got " + sequence);
    }
    if (deltas == null || deltas.isEmpty()) {
      throw new IllegalArgumentException("deltas: must not be empty");
    }
    for (Delta d : deltas) {
      boolean ordinaryWindow = d.counter().kind() == Counter.Kind.WINDOW && !d.counter().regional();
      if (sequence == CLAIM_ONLY) {
        boolean badTake = d.amount() != 0 && (d.token() == 0 || d.want() == 0 || d.need() < d.amount());
        if (badTake || d.settle() != 0 || d.denied() != 0 || !ordinaryWindow || d.allowed() != 0) {
          throw new IllegalArgumentException("deltas: a claim-only batch (sequence 0) carries window deltas of"
              + " ordinary limits without permits, or takes (Delta.taking) whose need covers them, and no permits"
              + " allowed (Delta.allowing: a reserve and an allowance spent only), got " + d);
        }
      } else if (d.token() != 0 && (d.settle() == 0 || !ordinaryWindow)) {
        throw new IllegalArgumentException("deltas: a numbered batch carries takes only to settle them"
            + " (Delta.settling), on window deltas of ordinary limits, got " + d);
      }
    }
    this.nodeId = nodeId;
    this.group = group;
    this.sequence = sequence;
    this.nowMicros = nowMicros;
    this.deltas = List.copyOf(deltas);
    this.beatNode = null;
    this.beatNowMillis = 0;
    this.beatTtlMillis = 0;
  }

  private Batch(Batch b, String beatNode, long beatNowMillis, long beatTtlMillis) {
    this.nodeId = b.nodeId;
    this.group = b.group;
    this.sequence = b.sequence;
    this.nowMicros = b.nowMicros;
    this.deltas = b.deltas;
    this.beatNode = beatNode;
    this.beatNowMillis = beatNowMillis;
    this.beatTtlMillis = beatTtlMillis;
  }

  /**
   * This batch carrying the node's registry heartbeat, for a store that takes one with a flush
   * ({@link CounterStore#beatsInFlush}): the same as {@link CounterStore#heartbeat} with these
   * arguments, answered in {@link FlushResult#alive()}, so that a working node's flushes keep it in
   * the registry without a call of their own. {@code nodeId} is the registry's name for the node (a
   * batch's own {@link #nodeId()} names its sequence owner, the node and limit).
   */
  public Batch beating(String nodeId, long nowMillis, Duration ttl) {
    CounterStore.checkHeartbeat(nodeId, ttl);
    return new Batch(this, nodeId, nowMillis, ttl.toMillis());
  }

  /** Whether this batch carries a heartbeat ({@link #beating}). */
  public boolean beats() {
    return beatNode != null;
  }

  /** The node the heartbeat is for; null when the batch carries none. */
  public String beatNode() {
    return beatNode;
  }

  /** The heartbeat's time, ms since the epoch (0 without one). */
  public long beatNowMillis() {
    return beatNowMillis;
  }

  /** How long the heartbeat keeps the node alive, ms (0 without one). */
  public long beatTtlMillis() {
    return beatTtlMillis;
  }

  /** Rejects a batch larger than a store takes in one call (a long script blocks Redis for everyone). */
  public void requireAtMost(int maxBatchSize) {
    if (deltas.size() > maxBatchSize) {
      throw new IllegalArgumentException("batch: " + deltas.size() + " deltas, more than maxBatchSize " + maxBatchSize);
    }
  }

  public String nodeId() {
    return nodeId;
  }

  public int group() {
    return group;
  }

  /** Whether this is a claim-only batch ({@link #CLAIM_ONLY}). */
  public boolean claimOnly() {
    return sequence == CLAIM_ONLY;
  }

  public long sequence() {
    return sequence;
  }

  public long nowMicros() {
    return nowMicros;
  }

  public List<Delta> deltas() {
    return deltas;
  }
}
