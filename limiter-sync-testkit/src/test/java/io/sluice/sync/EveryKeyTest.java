package io.sluice.sync;

import io.sluice.node.ManualTicker;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.sim.MemoryStore;
import java.util.List;

/**
 * {@link EveryKeyScenarios} on a simulated clock, with the in-memory store that keeps claims as the
 * scripts do; each node syncs every 100 ms of simulated time, as its flusher would.
 */
class EveryKeyTest extends EveryKeyScenarios {
  private static final long SYNC = 100_000_000L;
  private final ManualTicker ticker = new ManualTicker(AccuracyKit.START_NANOS);
  private final MemoryStore shared = new MemoryStore();

  @Override
  CounterStore store(int n) {
    return shared;
  }

  @Override
  SyncedLimiter.Builder configure(SyncedLimiter.Builder builder) {
    return builder.ticker(ticker).autoSync(false);
  }

  @Override
  void pass(long nanos, List<SyncedLimiter> nodes) {
    passSteps(nanos, SYNC, step -> {
      ticker.advanceNanos(step);
      nodes.forEach(SyncedLimiter::syncNow);
    });
  }
}
