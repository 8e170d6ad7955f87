package io.sluice.sync.testkit;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the store contracts share ({@link WindowClaimContract}, {@link SlidingClaimContract},
 * {@link CounterStoreContract}): the stores a test gets, as nodes of one cluster would have them, the
 * counters they use, and reading a flush's answer.
 */
public abstract class StoreContractBase {
  protected static final long NOW_MICROS = 1_767_225_600_000_000L; // 2026-01-01T00:00Z

  protected final Counter window = Counter.of(Limit.slidingWindowCounter("api").limit(1_000).window(Duration.ofMinutes(1)).build());
  protected final Counter bucket = Counter.of(Limit.tokenBucket("tb").capacity(100).refill(10, Duration.ofSeconds(1)).build());

  /**
   * A store as node {@code node} of a cluster would have it (its own connection, or its own member);
   * closed by the test.
   */
  protected abstract CounterStore store(int node);

  /** Time left before the counter of this limit and key expires, in ms; negative when it has none or no TTL. */
  protected abstract long counterTtlMillis(String limitName, String key);

  /** Flushes a batch and waits (10 s at most) for the store's answer. */
  public static FlushResult flush(CounterStore store, Batch batch) {
    try {
      return store.flush(batch).toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** Reads a window count back through the store: a delta of 0 from a node of its own. */
  public static long readWindow(CounterStore store, Counter counter, String key, long window) {
    return flush(store, new Batch("reader", 0, System.nanoTime() & 0xFFFF_FFFF_FFFFL, NOW_MICROS,
        List.of(new Delta(counter, key, window, 0)))).current(0);
  }
}
