package io.sluice.sync;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.ExactResult;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.LeaseStore;
import io.sluice.sync.spi.TokenGrant;
import io.sluice.sync.spi.TokenStore;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link MemoryStore} whose answers come later, as over a network: each call is applied when it is
 * made and its answer is completed by {@code answers} (another thread, or {@link #gated()}: held until
 * the test lets it go, or never). Every SPI of the memory store is passed on, so the limiter sees the
 * same store kinds (exact, lease, token) and takes.
 */
public final class AnswerLaterStore implements CounterStore, ExactStore, LeaseStore, TokenStore {
  final MemoryStore inner;
  private final Executor answers;
  private final List<Runnable> held = new ArrayList<>();
  /** A gated store let open: answers held are released and new ones answered at once. */
  private volatile boolean gateOpen;
  private final AtomicInteger sent = new AtomicInteger();

  private AnswerLaterStore(MemoryStore inner, Executor answers) {
    this.inner = inner;
    this.answers = answers;
  }

  /** Answers completed on {@code answers}' threads. */
  public static AnswerLaterStore answeringOn(MemoryStore inner, Executor answers) {
    return new AnswerLaterStore(inner, answers);
  }

  /** Answers held until {@link #release()}: a call is applied, its caller hears nothing. */
  public static AnswerLaterStore gated(MemoryStore inner) {
    AnswerLaterStore[] self = new AnswerLaterStore[1];
    self[0] = new AnswerLaterStore(inner, r -> {
      synchronized (self[0].held) {
        if (!self[0].gateOpen) {
          self[0].held.add(r);
          return;
        }
      }
      r.run();
    });
    return self[0];
  }

  /** Calls made (answered or not). */
  public int sent() {
    return sent.get();
  }

  /** Answers held and not released. */
  public int held() {
    synchronized (held) {
      return held.size();
    }
  }

  /** From now on answers at once, and releases what it held. */
  public void openGate() {
    synchronized (held) {
      gateOpen = true;
    }
    release();
  }

  /** From now on holds answers again (a gated store let open, closed once more). */
  public void closeGate() {
    synchronized (held) {
      gateOpen = false;
    }
  }

  /** Completes every held answer, on this thread; how many. */
  public int release() {
    List<Runnable> now;
    synchronized (held) {
      now = new ArrayList<>(held);
      held.clear();
    }
    now.forEach(Runnable::run);
    return now.size();
  }

  private <T> CompletionStage<T> later(CompletionStage<T> applied) {
    sent.incrementAndGet();
    CompletableFuture<T> answer = new CompletableFuture<>();
    applied.whenComplete((v, e) -> answers.execute(() -> {
      if (e != null) {
        answer.completeExceptionally(e);
      } else {
        answer.complete(v);
      }
    }));
    return answer;
  }

  @Override
  public CompletionStage<FlushResult> flush(Batch batch) {
    return later(inner.flush(batch));
  }

  @Override
  public CompletionStage<ExactResult> acquire(Limit limit, String key, long cost, long nowMicros) {
    return later(inner.acquire(limit, key, cost, nowMicros));
  }

  @Override
  public CompletionStage<Void> giveBack(Limit limit, String key, long cost, long nowMicros, long window) {
    return later(inner.giveBack(limit, key, cost, nowMicros, window));
  }

  @Override
  public CompletionStage<Lease> lease(Counter counter, String key, long window, long elapsedMicros, long want,
      long need) {
    return later(inner.lease(counter, key, window, elapsedMicros, want, need));
  }

  @Override
  public CompletionStage<TokenGrant> claimTokens(Limit limit, String key, long want, long need, long giveBack,
      long horizonMicros, long nowMicros, long unused, long ifAt, long ifBacklog) {
    return later(inner.claimTokens(limit, key, want, need, giveBack, horizonMicros, nowMicros, unused, ifAt,
        ifBacklog));
  }

  @Override
  public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
    return later(inner.heartbeat(nodeId, nowMillis, ttl));
  }

  @Override
  public CompletionStage<Void> leave(String nodeId, long nowMillis) {
    return later(inner.leave(nodeId, nowMillis));
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
  public void close() {
    inner.close();
  }
}
