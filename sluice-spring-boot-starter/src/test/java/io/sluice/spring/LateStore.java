package io.sluice.spring;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.ExactResult;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-memory store that answers as a networked one does: each call applied at once, its answer a
 * millisecond later on a thread of the store's own, so that a caller either waits for it (blocks) or
 * goes on and hears of it later.
 */
class LateStore implements CounterStore, ExactStore {
  final MemoryStore memory = new MemoryStore();
  final AtomicInteger calls = new AtomicInteger();
  private final ScheduledExecutorService answers = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "late-store-answers");
    t.setDaemon(true);
    return t;
  });

  private <T> CompletionStage<T> late(CompletionStage<T> applied) {
    calls.incrementAndGet();
    CompletableFuture<T> answer = new CompletableFuture<>();
    applied.whenComplete((v, e) -> answers.schedule(() -> e == null ? answer.complete(v) : answer.completeExceptionally(e),
        1, TimeUnit.MILLISECONDS));
    return answer;
  }

  @Override
  public CompletionStage<FlushResult> flush(Batch batch) {
    return late(memory.flush(batch));
  }

  @Override
  public CompletionStage<ExactResult> acquire(Limit limit, String key, long cost, long nowMicros) {
    return late(memory.acquire(limit, key, cost, nowMicros));
  }

  @Override
  public CompletionStage<Void> giveBack(Limit limit, String key, long cost, long nowMicros, long window) {
    return late(memory.giveBack(limit, key, cost, nowMicros, window));
  }

  @Override
  public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
    return late(memory.heartbeat(nodeId, nowMillis, ttl));
  }

  @Override
  public CompletionStage<Void> leave(String nodeId, long nowMillis) {
    return late(memory.leave(nodeId, nowMillis));
  }

  @Override
  public int group(Counter counter, String key) {
    return memory.group(counter, key);
  }

  @Override
  public int maxBatchSize() {
    return memory.maxBatchSize();
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
  public void close() {
    answers.shutdownNow();
  }
}
