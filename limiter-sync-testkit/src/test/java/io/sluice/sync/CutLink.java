package io.sluice.sync;

import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.StoreUnavailableException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** A node's link to a store: while cut, every flush and heartbeat fails at once, as a partition makes them. */
final class CutLink extends ForwardingStore {
  volatile boolean cut;

  CutLink(CounterStore inner) {
    super(inner);
  }

  @Override
  public CompletionStage<FlushResult> flush(Batch batch) {
    return cut ? CompletableFuture.failedFuture(new StoreUnavailableException("cut", null)) : inner.flush(batch);
  }

  @Override
  public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
    return cut ? CompletableFuture.failedFuture(new StoreUnavailableException("cut", null))
        : inner.heartbeat(nodeId, nowMillis, ttl);
  }
}
