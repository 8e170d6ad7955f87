package io.sluice.sync;

import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.FlushResult;
import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * A test store that passes every call to another one: subclasses change what they test (a delay, a
 * lost answer, a failure) and nothing else. Every method of {@link CounterStore} is passed on, so a
 * store that counts takes, or has a call timeout, is seen as such through the wrapper (a wrapper that
 * forgot {@code countsTakes()} once turned takes off in the very tests written for them; one that forgot
 * {@code beatsInFlush} made every beat a call of its own).
 */
public abstract class ForwardingStore implements CounterStore {
  protected final CounterStore inner;

  protected ForwardingStore(CounterStore inner) {
    this.inner = inner;
  }

  @Override
  public int group(Counter counter, String key) {
    return inner.group(counter, key);
  }

  @Override
  public int maxBatchSize() {
    return inner.maxBatchSize();
  }

  @Override
  public CompletionStage<FlushResult> flush(Batch batch) {
    return inner.flush(batch);
  }

  @Override
  public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
    return inner.heartbeat(nodeId, nowMillis, ttl);
  }

  @Override
  public Duration callTimeout() {
    return inner.callTimeout();
  }

  @Override
  public boolean countsTakes() {
    return inner.countsTakes();
  }

  @Override
  public boolean keepsClaims() {
    return inner.keepsClaims();
  }

  @Override
  public boolean keepsAllowances() {
    return inner.keepsAllowances();
  }

  @Override
  public boolean beatsInFlush(int group) {
    return inner.beatsInFlush(group);
  }

  @Override
  public long outOfMemoryErrors() {
    return inner.outOfMemoryErrors();
  }

  @Override
  public boolean sharesRegionalQuotas() {
    return inner.sharesRegionalQuotas();
  }

  @Override
  public void close() {
    inner.close();
  }
}
