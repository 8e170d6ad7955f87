package io.sluice.sync.internal;

import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.internal.BatchSender.InFlight;
import io.sluice.sync.internal.BatchSender.Pending;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.FlushResult;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A flusher's answer to a store that lost its data (a restart without persistence, {@code FLUSHALL},
 * a whole Hazelcast cluster started again): a numbered flush's answer says so ({@link
 * FlushResult#storeForgot()}), and every view of that group sends again what this node admitted and
 * the old store had acknowledged, so that the counts are whole again instead of starting over. It
 * also keeps, per group, the number of the last numbered flush answered (which tells a take's permits
 * that may be in the new store from those that reached the old one).
 *
 * <p>Concurrency: the groups found lost and the sync's number are the flusher's, under its sync lock
 * (the answers are taken in the sync); the numbers answered sit in a concurrent map that deciding
 * threads read ({@link #numberedDone}); a view is changed only under its own monitor.
 */
final class StoreLossRefill {
  private static final System.Logger LOG = System.getLogger(SyncedLimiter.class.getName());
  private final ViewTable views;
  private final CounterStore store;
  private final Counter counter;
  private final String limitName;
  private final String nodeId;
  private final FlushQueue queue;
  private final LongAdder pendingPermits;
  /** Whether the store counts by flushes (approximate mode; reservation and exact modes count as they decide). */
  private final boolean countsByFlushes;
  /**
   * Under the sync lock: the groups whose store was found to have lost its data during the current
   * sync, each with the number of the last numbered flush answered there before (see refill), and the
   * sync's number, which a view records when it is refilled (once per sync).
   */
  private final Map<Integer, Long> lostGroups = new HashMap<>();
  private long syncRound;
  /** Per group, the highest number of a numbered flush answered (see BatchSender#numberedSent). */
  private final ConcurrentHashMap<Integer, Long> numberedDone = new ConcurrentHashMap<>();
  private final LongAdder storeLosses = new LongAdder();
  private final LongAdder refilledPermits = new LongAdder();

  StoreLossRefill(LimiterSetup l, FlushQueue queue) {
    this.views = l.views;
    this.store = l.store;
    this.counter = l.counter;
    this.limitName = l.limit.name();
    this.nodeId = l.nodeId;
    this.queue = queue;
    this.pendingPermits = queue.pendingPermits;
    this.countsByFlushes = l.leases == null && l.exact == null;
  }

  /** Under the sync lock, as a sync begins. */
  void syncStarts() {
    syncRound++;
  }

  /**
   * Under the sync lock, as a sync ends (its batches answered or given up): the views of the groups
   * found lost that no answer refilled are refilled now.
   */
  void syncEnds() {
    try {
      refillLostGroups();
    } finally {
      lostGroups.clear();
    }
  }

  /**
   * Under the sync lock, before a batch's answer is taken into its views: notes a store found to
   * have lost its data and refills the views of this batch (what this node had admitted before goes
   * again before the answer's own permits are taken off the views' pending: they are in the new
   * store), or records the batch's number as answered.
   */
  void answered(InFlight f, long index, FlushResult result) {
    int group = f.batch.group();
    if (result.storeForgot()) {
      storeLosses.increment();
      lostGroups.putIfAbsent(group, numberedDone.getOrDefault(group, 0L));
    }
    Long doneBeforeLoss = lostGroups.get(group);
    if (doneBeforeLoss != null) {
      for (Pending p : f.parts) {
        if (p.view != null) {
          refilledPermits.add(refill(p.view, doneBeforeLoss));
        }
      }
    } else {
      // (an answer from a store found to have lost its data proves nothing about the old one: see refill)
      numberedDone.merge(group, index, Math::max);
    }
  }

  /** The number of the last numbered flush answered on the key's group (0: none yet). */
  long numberedDone(String key) {
    return numberedDone.getOrDefault(store.group(counter, key), 0L);
  }

  long storeLosses() {
    return storeLosses.sum();
  }

  long refilledPermits() {
    return refilledPermits.sum();
  }

  /**
   * The store lost its data on a group (a numbered flush's answer said so, {@link
   * FlushResult#storeForgot()}): every view of the group sends again what this node admitted in the
   * windows that still weigh and the store had acknowledged, so that the counts are whole again instead
   * of starting over (the other nodes do the same for theirs, each when its own flush finds the store
   * changed). The views of the batches answered by the new store do so as their answers come (see
   * send); the others here, in one pass over the table at the end of the sync, whatever the number of
   * groups that lost their data (a Redis Cluster restarted whole: one per slot).
   */
  private void refillLostGroups() {
    if (lostGroups.isEmpty()) {
      return;
    }
    long permits = 0;
    int keys = 0;
    for (KeyView v : views.all()) {
      Long doneBeforeLoss = lostGroups.get(store.group(counter, v.key()));
      if (doneBeforeLoss != null) {
        long sent = refill(v, doneBeforeLoss);
        permits += sent;
        keys += sent > 0 ? 1 : 0;
      } else {
        // another group (a slot of a Redis Cluster) may have lost its data too, unseen until a numbered
        // flush reaches it: every view goes with the next sync, which finds out
        synchronized (v) {
          v.wantSync();
          queue.enqueue(v);
        }
      }
    }
    refilledPermits.add(permits);
    LOG.log(System.Logger.Level.WARNING, "sluice: limiter {0} (node {1}): the store lost its data on {2} group(s) (no"
        + " record of this node''s batches it had acknowledged); sending again {3} admitted permits of {4} keys and"
        + " more as their flushes are answered", limitName, nodeId, lostGroups.size(), permits, keys);
  }

  /**
   * One view of a group whose store lost its data, once per sync: its admitted permits the old store
   * had acknowledged go back among its unsent ones, and its claims are gone (it holds none until it
   * asks again). Permits of takes answered after the last numbered flush that reached the old store was
   * sent ({@code doneBeforeLoss}) are left out: they may be in the new store already (a take is not
   * numbered), and sending them again could count them twice; those that reached the old one stay lost
   * (at most a sync interval's takes). Returns the permits it sends again.
   */
  private long refill(KeyView v, long doneBeforeLoss) {
    if (!countsByFlushes) {
      return 0; // (reservation and exact modes: the store counts when it grants or decides, not by flushes)
    }
    synchronized (v) {
      if (v.window() == Long.MIN_VALUE || !v.refillOnce(syncRound)) {
        return 0;
      }
      queue.settle(v);
      long sent = v.sendAgainAfterLoss(doneBeforeLoss);
      pendingPermits.add(sent);
      if (sent > 0) {
        queue.enqueue(v);
      }
      return sent;
    }
  }
}
