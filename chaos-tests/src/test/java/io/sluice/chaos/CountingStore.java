package io.sluice.chaos;

import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.FlushResult;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.LongAdder;

/**
 * A node's store as the limiter sees it, counting the flushes the store answered as already applied
 * (a retry of a flush whose answer was lost, or a replay after a reconnect): each one is an
 * indeterminate outcome that the per-node sequence kept from counting twice.
 */
final class CountingStore implements CounterStore {
  private final CounterStore delegate;
  private final LongAdder replays = new LongAdder();

  CountingStore(CounterStore delegate) {
    this.delegate = delegate;
  }

  long replays() {
    return replays.sum();
  }

  @Override
  public int group(Counter counter, String key) {
    return delegate.group(counter, key);
  }

  @Override
  public int maxBatchSize() {
    return delegate.maxBatchSize();
  }

  @Override
  public boolean countsTakes() {
    return delegate.countsTakes();
  }

  @Override
  public boolean keepsClaims() {
    return delegate.keepsClaims();
  }

  @Override
  public boolean keepsAllowances() {
    return delegate.keepsAllowances();
  }

  @Override
  public boolean beatsInFlush(int group) {
    return delegate.beatsInFlush(group);
  }

  @Override
  public long outOfMemoryErrors() {
    return delegate.outOfMemoryErrors();
  }

  @Override
  public CompletionStage<FlushResult> flush(Batch batch) {
    return delegate.flush(batch).thenApply(r -> {
      if (!r.applied()) {
        replays.increment();
      }
      return r;
    });
  }

  @Override
  public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
    return delegate.heartbeat(nodeId, nowMillis, ttl);
  }

  @Override
  public void close() {
    delegate.close();
  }
}
