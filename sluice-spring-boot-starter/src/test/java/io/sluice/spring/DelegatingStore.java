package io.sluice.spring;

import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.concurrent.CompletionStage;

/** An in-memory store whose calls a test can intercept (MemoryStore itself is final). */
class DelegatingStore implements CounterStore {
  final MemoryStore memory = new MemoryStore();

  @Override
  public int group(Counter counter, String key) {
    return memory.group(counter, key);
  }

  @Override
  public int maxBatchSize() {
    return memory.maxBatchSize();
  }

  @Override
  public CompletionStage<FlushResult> flush(Batch batch) {
    return memory.flush(batch);
  }

  @Override
  public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
    return memory.heartbeat(nodeId, nowMillis, ttl);
  }

  @Override
  public CompletionStage<Void> leave(String nodeId, long nowMillis) {
    return memory.leave(nodeId, nowMillis);
  }

  @Override
  public boolean countsTakes() {
    return memory.countsTakes();
  }

  @Override
  public boolean keepsClaims() {
    return memory.keepsClaims();
  }

  @Override
  public boolean keepsAllowances() {
    return memory.keepsAllowances();
  }

  @Override
  public boolean beatsInFlush(int group) {
    return memory.beatsInFlush(group);
  }

  @Override
  public void close() {
    memory.close();
  }
}
