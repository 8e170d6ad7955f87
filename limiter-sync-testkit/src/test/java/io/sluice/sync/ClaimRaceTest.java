package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * Claims asked on the decision path while the flusher's batches are on their way: a store that applies
 * each call at once but answers it up to a few milliseconds later (as a network does), several
 * threads per node hammering keys far above their limits at one frozen instant. The nodes together
 * must not pass any key's limit, and the store must count exactly what they admitted.
 */
class ClaimRaceTest {
  private static final int NODES = 4;

  /** The in-memory store, answering each call after a random delay on another thread. */
  static final class SlowStore extends ForwardingStore {
    private final ScheduledExecutorService answers;

    SlowStore(MemoryStore inner, ScheduledExecutorService answers) {
      super(inner);
      this.answers = answers;
    }

    @Override
    public CompletionStage<FlushResult> flush(Batch batch) {
      FlushResult r = inner.flush(batch).toCompletableFuture().join();
      CompletableFuture<FlushResult> later = new CompletableFuture<>();
      answers.schedule(() -> later.complete(r), ThreadLocalRandom.current().nextInt(3_000), TimeUnit.MICROSECONDS);
      return later;
    }
  }

  @Test
  void claimsAskedWhileFlushesTravelNeverPassTheLimit() throws Exception {
    Limit limit = Limit.fixedWindow("race").limit(200).window(Duration.ofMinutes(1)).build();
    ManualTicker ticker = new ManualTicker(AccuracyKit.START_NANOS);
    MemoryStore memory = new MemoryStore(3);
    ScheduledExecutorService answers = Executors.newScheduledThreadPool(2);
    List<SyncedLimiter> nodes = new ArrayList<>();
    for (int n = 0; n < NODES; n++) {
      nodes.add(SyncedLimiter.builder(limit, new SlowStore(memory, answers)).nodeId("race-" + n).ticker(ticker)
          .activeNodes(() -> NODES).syncInterval(Duration.ofMillis(5)).build());
    }
    Map<String, LongAdder> admitted = new ConcurrentHashMap<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 2 * NODES; t++) {
      SyncedLimiter node = nodes.get(t % NODES);
      SplittableRandom random = new SplittableRandom(t);
      Thread thread = new Thread(() -> {
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int i = 0; i < 20_000; i++) {
          String key = "k" + random.nextInt(20);
          if (node.tryAcquire(key)) {
            admitted.computeIfAbsent(key, k -> new LongAdder()).increment();
          }
        }
      });
      thread.start();
      threads.add(thread);
    }
    start.countDown();
    for (Thread thread : threads) {
      thread.join();
    }
    nodes.forEach(SyncedLimiter::close);
    answers.shutdown();
    long w = Math.floorDiv(ticker.read(), limit.periodNanos());
    StringBuilder over = new StringBuilder();
    for (Map.Entry<String, LongAdder> e : admitted.entrySet()) {
      long a = e.getValue().sum();
      assertThat(memory.count("race", e.getKey(), w)).as("store count of " + e.getKey()).isEqualTo(a);
      if (a > limit.capacity()) {
        over.append(e.getKey()).append('=').append(a).append(' ');
      }
    }
    assertThat(over.toString()).as("keys over their limit").isEmpty();
  }
}
