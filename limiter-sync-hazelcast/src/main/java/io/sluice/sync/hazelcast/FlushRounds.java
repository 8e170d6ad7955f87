package io.sluice.sync.hazelcast;

import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.IMap;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.SequenceWitness;
import io.sluice.sync.spi.StoreKeys;
import io.sluice.sync.spi.state.CounterEntry;
import io.sluice.sync.spi.state.FlushProcessor;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The counts of a {@link HazelcastCounterStore}'s flush: the rounds of {@link FlushProcessor}s over a
 * batch's keys and the node's sequence record, as the store's class doc ("Exactly once, per key")
 * describes them.
 *
 * <p>Concurrency: every limiter's flusher calls it at once, and a flush goes on on the store's callback
 * thread ({@link KeyCalls#callbacks}) and Hazelcast's threads. Its fields are final: Hazelcast's maps
 * (thread-safe), the {@link SequenceWitness} (concurrent maps) and the store's {@link KeyCalls}. A
 * flush's arrays and its {@code forgot} flag are its own, written by one stage at a time, each after the
 * one before it completed.
 */
final class FlushRounds {
  private final IMap<byte[], CounterEntry> counters;
  private final IMap<byte[], Long> sequences;
  private final HazelcastCounterStore.Settings settings;
  private final long sequenceTtlMillis;
  /** Which nodes' sequence records this store saw written, to tell a record lost from one that expired. */
  private final SequenceWitness witness;
  private final KeyCalls calls;

  FlushRounds(IMap<byte[], CounterEntry> counters, IMap<byte[], Long> sequences,
      HazelcastCounterStore.Settings settings, KeyCalls calls) {
    this.counters = counters;
    this.sequences = sequences;
    this.settings = settings;
    this.sequenceTtlMillis = settings.sequenceTtl().toMillis();
    this.witness = new SequenceWitness(settings.sequenceTtl());
    this.calls = calls;
  }

  /** Applies a batch's counts (its heartbeat is the store's to send). */
  CompletionStage<FlushResult> flushCounts(Batch batch) {
    batch.requireAtMost(settings.maxBatchSize());
    List<Delta> deltas = batch.deltas();
    Map<ByteBuffer, List<Integer>> byKey = FlushProcessor.byKey(batch, settings.mapPrefix());
    byte[] sequenceKey = StoreKeys.sequenceKey(settings.mapPrefix(), batch.nodeId(), batch.group(), null);
    long wallMillis = System.currentTimeMillis();
    long[] values = new long[2 * deltas.size()];
    long[] claims = new long[deltas.size()];
    long[] splits = new long[deltas.size()];
    long[] taken = new long[deltas.size()];
    long[] ahead = new long[deltas.size()];
    try {
      if (batch.claimOnly()) {
        // no permits to count twice: applied on every key, the node's sequences left alone
        return submit(batch, byKey, FlushProcessor.CLAIM, wallMillis, values, claims, splits, taken, ahead)
            .thenApply(round -> new FlushResult(true, values, null, claims, splits, taken).withAhead(ahead));
      }
      // set when step 2 finds no record of the node although this store saw one written within the TTL
      boolean[] forgot = {false};
      // 1. every key that knows this node decides on its own, atomically; the others wait for step 2
      return submit(batch, byKey, FlushProcessor.IF_KNOWN, wallMillis, values, claims, splits, taken, ahead).thenComposeAsync(first -> {
        if (first.unknown.isEmpty()) {
          return CompletableFuture.completedFuture(first.applied);
        }
        // 2. keys new to this node (or expired): applied unless the node's record has the batch already
        return KeyCalls.onCompletion(sequences.getAsync(sequenceKey), calls.callbacks).thenCompose(recorded -> {
          forgot[0] = recorded == null && witness.forgot(batch.nodeId(), batch.group());
          byte mode = recorded != null && recorded >= batch.sequence() ? FlushProcessor.READ : FlushProcessor.IF_NEWER;
          Map<ByteBuffer, List<Integer>> rest = new LinkedHashMap<>();
          first.unknown.forEach(k -> rest.put(k, byKey.get(k)));
          return submit(batch, rest, mode, wallMillis, values, claims, splits, taken, ahead).thenApplyAsync(second -> first.applied | second.applied,
              calls.callbacks);
        });
      }, calls.callbacks).thenApply(applied -> {
        // 3. the record, for replays that come after the keys expired; the answer does not wait for it,
        // and a record lost now only weakens that guard for this batch
        try {
          sequences.submitToKey(sequenceKey, new RaiseSequence(batch.sequence(), sequenceTtlMillis))
              .thenRun(() -> witness.recorded(batch.nodeId(), batch.group()));
        } catch (RuntimeException shutDown) {
          // the deltas are applied: the answer stands
        }
        FlushResult result = new FlushResult(applied, values, null, claims, splits, taken).withAhead(ahead);
        return witness.lossToTell(batch.nodeId(), batch.group(), batch.sequence(), forgot[0]) ? result.forgetting()
            : result;
      });
    } catch (RuntimeException e) { // a member that is shut down refuses at once
      return CompletableFuture.failedFuture(e);
    }
  }

  /** What one round of processors answered: whether any applied, and the keys that did not know the node. */
  private static final class Round {
    final boolean applied;
    final List<ByteBuffer> unknown;

    Round(boolean applied, List<ByteBuffer> unknown) {
      this.applied = applied;
      this.unknown = unknown;
    }
  }

  /**
   * Runs the processor on every key, in one call (Hazelcast sends it once per member and runs it per
   * key on the keys' partitions), and writes the answers into {@code values} at the deltas' places.
   */
  private CompletableFuture<Round> submit(Batch batch, Map<ByteBuffer, List<Integer>> byKey, byte mode,
      long wallMillis, long[] values, long[] claims, long[] splits, long[] taken, long[] ahead) {
    FlushProcessor.Plan plan = FlushProcessor.plan(batch, byKey, mode, wallMillis, sequenceTtlMillis,
        HazelcastCounterStore.MAX_NODES_PER_KEY);
    FlushProcessor processor = plan.processor;
    byte[][] keys = plan.keys;
    Map<ByteBuffer, Integer> keyIndex = new HashMap<>(keys.length * 2);
    Set<byte[]> keySet = new HashSet<>(keys.length * 2); // byte[] hashes by identity: one array per key
    for (int k = 0; k < keys.length; k++) {
      keySet.add(keys[k]);
      keyIndex.put(ByteBuffer.wrap(keys[k]), k);
    }
    // one key (a decision's claim-only call, a flush of one key): a blocking executeOnKey on this
    // store's call threads, as exact decisions do, not submitToKeys, whose future costs a thread per
    // call on small machines (see KeyCalls.onKey); the answers are only gathered: may run on the thread
    // that has them
    CompletableFuture<Map<byte[], long[]>> call = keys.length == 1
        ? calls.onKey(keys[0], processor).thenApply(out -> Map.of(keys[0], out))
        : KeyCalls.onCompletion(counters.submitToKeys(keySet, new HazelcastCounterStore.OnMember(processor)),
            KeyCalls.DIRECT);
    return call.thenApply(answers -> {
      if (answers.size() != keys.length) {
        throw new IllegalStateException("flush: " + answers.size() + " answers for " + keys.length + " keys");
      }
      boolean applied = false;
      List<ByteBuffer> unknown = new ArrayList<>();
      for (Map.Entry<byte[], long[]> a : answers.entrySet()) {
        ByteBuffer key = ByteBuffer.wrap(a.getKey());
        int j = keyIndex.get(key);
        long[] out = a.getValue();
        if (out[0] == FlushProcessor.UNKNOWN) {
          unknown.add(key);
        }
        applied |= out[0] == FlushProcessor.APPLIED;
        plan.answer(j, out, values, claims, splits, taken, ahead);
      }
      return new Round(applied, unknown);
    });
  }

  /** Records that a node's batch was applied in full: the highest sequence wins, kept for the sequence TTL. */
  static final class RaiseSequence implements EntryProcessor<byte[], Long, Long> {
    private static final long serialVersionUID = 1L;
    private final long sequence;
    private final long ttlMillis;

    RaiseSequence(long sequence, long ttlMillis) {
      this.sequence = sequence;
      this.ttlMillis = ttlMillis;
    }

    @Override
    public Long process(Map.Entry<byte[], Long> entry) {
      long value = entry.getValue() == null ? sequence : Math.max(entry.getValue(), sequence);
      HazelcastCounterStore.setWithTtl(entry, value, ttlMillis);
      return value;
    }
  }
}
