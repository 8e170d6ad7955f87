package io.sluice.sync;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
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
 *   <li>{@code sluice.sync.store.calls.duration}: a timer with a percentile histogram of every store
 *       call (Prometheus {@code sluice_sync_store_calls_duration_seconds_bucket}), for the p99 of the
 *       store's round trip that the function timer's mean hides</li>
 *   <li>{@code sluice.sync.decisions.waited}: a timer with a percentile histogram of every decision
 *       that waited for the store (exact checks, claims asked for on the decision path, leases;
 *       Prometheus {@code sluice_sync_decisions_waited_seconds_bucket}): the p99 a caller feels</li>
 *   <li>{@code sluice.sync.flush.deltas}: keys-and-windows acknowledged (÷ calls = flush size)</li>
 *   <li>{@code sluice.sync.pending}: permits admitted and not yet acknowledged by the store</li>
 *   <li>{@code sluice.sync.breaker.state}: 0 closed, 1 open, 2 half-open, 3 disabled or forced</li>
 *   <li>{@code sluice.sync.nodes}: active nodes the limiter divides by</li>
 *   <li>{@code sluice.sync.hot.keys}: keys detected as heavy hitters</li>
 *   <li>{@code sluice.sync.denial.cache.hits}, {@code sluice.sync.fallback.decisions},
 *       {@code sluice.sync.keys}</li>
 * </ul>
 * The two histogram timers are recorded by the limiter itself from the moment it is bound (one timer
 * per limit and registry; a limiter bound to several registries records in each); the other meters
 * read its counters, which run whether it is bound or not.
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
      // histograms beside the counters: a mean (the function timer) hides the slow calls that a p99
      // across instances shows; recorded by the limiter, which pays nothing for them until bound
      l.core.recordTo(
          Timer.builder("sluice.sync.store.calls.duration").tag("limit", name).publishPercentileHistogram()
              .description("Store calls (flushes, exact checks, claims, heartbeats), failed ones included")
              .register(registry),
          Timer.builder("sluice.sync.decisions.waited").tag("limit", name).publishPercentileHistogram()
              .description("Time decisions waited for the store (exact checks, claims and leases asked for on the decision path)")
              .register(registry));
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
    StoreBreaker.State s = l.storeBreaker().state();
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
