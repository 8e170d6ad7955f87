package io.sluice.sync;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Micrometer meters of distributed limiters, tagged by limit (never by key), read from counters the
 * limiter keeps anyway:
 * <ul>
 *   <li>{@code sluice.decisions{limit, result=allowed|denied}}</li>
 *   <li>{@code sluice.sync.store.calls}, {@code sluice.sync.store.failures}, and
 *       {@code sluice.sync.store.latency} (a function timer: calls and total time)</li>
 *   <li>{@code sluice.sync.flush.deltas}: keys-and-windows acknowledged (÷ calls = flush size)</li>
 *   <li>{@code sluice.sync.pending}: permits admitted and not yet acknowledged by the store</li>
 *   <li>{@code sluice.sync.breaker.state}: 0 closed, 1 open, 2 half-open, 3 disabled or forced</li>
 *   <li>{@code sluice.sync.nodes}: active nodes the limiter divides by</li>
 *   <li>{@code sluice.sync.hot.keys}: keys detected as heavy hitters</li>
 *   <li>{@code sluice.sync.denial.cache.hits}, {@code sluice.sync.fallback.decisions},
 *       {@code sluice.sync.keys}</li>
 * </ul>
 */
public final class SyncedLimiterMetrics implements MeterBinder {
  private final List<SyncedLimiter> limiters;

  public SyncedLimiterMetrics(List<SyncedLimiter> limiters) {
    this.limiters = List.copyOf(limiters);
  }

  public static SyncedLimiterMetrics of(SyncedLimiter limiter) {
    return new SyncedLimiterMetrics(List.of(limiter));
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    for (SyncedLimiter l : limiters) {
      String name = l.limit().name();
      FunctionCounter.builder("sluice.decisions", l, SyncedLimiter::admitted).tags("limit", name, "result", "allowed")
          .description("Rate limit decisions by outcome").register(registry);
      FunctionCounter.builder("sluice.decisions", l, SyncedLimiter::denied).tags("limit", name, "result", "denied")
          .description("Rate limit decisions by outcome").register(registry);
      FunctionCounter.builder("sluice.sync.store.calls", l, SyncedLimiter::storeCalls).tag("limit", name)
          .description("Store calls made (flushes, exact checks, heartbeats), retries included").register(registry);
      FunctionCounter.builder("sluice.sync.store.failures", l, SyncedLimiter::storeFailures).tag("limit", name)
          .description("Store calls that failed or timed out").register(registry);
      FunctionCounter.builder("sluice.sync.store.oom", l, SyncedLimiter::storeOutOfMemoryErrors).tag("limit", name)
          .description("Store calls refused for want of memory (Redis maxmemory under noeviction), of the limit's store")
          .register(registry);
      FunctionCounter.builder("sluice.sync.store.losses", l, SyncedLimiter::storeDataLosses).tag("limit", name)
          .description("Times the store was found to have lost its data (restart without persistence, flush)")
          .register(registry);
      FunctionCounter.builder("sluice.sync.store.refilled", l, SyncedLimiter::refilledPermits).tag("limit", name)
          .description("Admitted permits sent to the store again after it lost its data").register(registry);
      FunctionTimer.builder("sluice.sync.store.latency", l, SyncedLimiter::storeCalls, SyncedLimiter::storeNanos,
          TimeUnit.NANOSECONDS).tag("limit", name).description("Time spent in store calls").register(registry);
      FunctionCounter.builder("sluice.sync.flush.deltas", l, SyncedLimiter::deltasSent).tag("limit", name)
          .description("Key-window deltas acknowledged by the store").register(registry);
      Gauge.builder("sluice.sync.pending", l, SyncedLimiter::pending).tag("limit", name)
          .description("Permits admitted and not yet acknowledged by the store").register(registry);
      Gauge.builder("sluice.sync.breaker.state", l, SyncedLimiterMetrics::breakerState).tag("limit", name)
          .description("Circuit breaker: 0 closed, 1 open, 2 half-open, 3 disabled or forced").register(registry);
      Gauge.builder("sluice.sync.nodes", l, SyncedLimiter::activeNodes).tag("limit", name)
          .description("Active nodes sharing the limit").register(registry);
      FunctionCounter.builder("sluice.sync.denial.cache.hits", l, SyncedLimiter::cachedDenials).tag("limit", name)
          .description("Denials answered from the local denial cache").register(registry);
      FunctionCounter.builder("sluice.sync.fallback.decisions", l, SyncedLimiter::fallbackDecisions)
          .tag("limit", name).description("Decisions made by the store-failure policy").register(registry);
      Gauge.builder("sluice.sync.hot.keys", l, SyncedLimiter::hotKeys).tag("limit", name)
          .description("Keys detected as heavy hitters").register(registry);
      Gauge.builder("sluice.sync.keys", l, SyncedLimiter::keys).tag("limit", name)
          .description("Keys in the limiter's view table").register(registry);
    }
  }

  private static double breakerState(SyncedLimiter l) {
    CircuitBreaker.State s = l.circuitBreaker().getState();
    switch (s) {
      case CLOSED:
        return 0;
      case OPEN:
        return 1;
      case HALF_OPEN:
        return 2;
      default:
        return 3;
    }
  }
}
