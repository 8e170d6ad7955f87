package io.sluice.sync;

import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.StoreUnavailableException;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A unit-test double of the store with the flush script's contract (window counts, per node and
 * group sequences; no claims, {@link CounterStore#keepsClaims}), which can fail before applying a
 * batch or lose the answer after applying it:
 * the two outcomes a real network gives. The same synchronizer logic runs against real Redis in the
 * integration tests.
 */
public final class FlakyMemoryStore implements CounterStore {
  private final Map<String, Long> counts = new HashMap<>();
  private final Map<String, Long> sequences = new HashMap<>();
  private final SplittableRandom random;
  private volatile double failBefore;
  private volatile double failAfter;
  int calls;
  int appliedBatches;

  public FlakyMemoryStore(long seed) {
    this.random = new SplittableRandom(seed);
  }

  public void faults(double failBeforeApplying, double loseAnswerAfterApplying) {
    this.failBefore = failBeforeApplying;
    this.failAfter = loseAnswerAfterApplying;
  }

  public synchronized long count(String key, long window) {
    return counts.getOrDefault(key + "@" + window, 0L);
  }

  public synchronized long total() {
    return counts.values().stream().mapToLong(Long::longValue).sum();
  }

  @Override
  public int group(Counter counter, String key) {
    return Math.floorMod(key.hashCode(), 3);
  }

  @Override
  public int maxBatchSize() {
    return 4;
  }

  @Override
  public synchronized CompletionStage<FlushResult> flush(Batch batch) {
    calls++;
    if (random.nextDouble() < failBefore) {
      return CompletableFuture.failedFuture(new StoreUnavailableException("injected: not applied", null));
    }
    String seqKey = batch.nodeId() + "/" + batch.group();
    boolean apply = batch.sequence() > sequences.getOrDefault(seqKey, -1L);
    long[] values = new long[2 * batch.deltas().size()];
    for (int i = 0; i < batch.deltas().size(); i++) {
      Delta d = batch.deltas().get(i);
      String k = d.key() + "@" + d.window();
      if (apply) {
        counts.merge(k, d.amount(), Long::sum);
      }
      values[2 * i] = counts.getOrDefault(k, 0L);
      values[2 * i + 1] = counts.getOrDefault(d.key() + "@" + (d.window() - 1), 0L);
    }
    if (apply) {
      sequences.put(seqKey, batch.sequence());
      appliedBatches++;
    }
    if (random.nextDouble() < failAfter) {
      return CompletableFuture.failedFuture(new StoreUnavailableException("injected: applied, answer lost", null));
    }
    return CompletableFuture.completedFuture(new FlushResult(apply, values));
  }

  private final Map<String, Long> alive = new HashMap<>();

  @Override
  public synchronized CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, java.time.Duration ttl) {
    alive.put(nodeId, nowMillis + ttl.toMillis());
    alive.values().removeIf(deadline -> deadline <= nowMillis);
    return CompletableFuture.completedFuture(alive.size());
  }

  @Override
  public void close() {
  }
}
