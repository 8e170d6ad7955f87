package io.sluice.node;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Collection;
import java.util.List;

/**
 * Micrometer meters of a set of limiters, tagged by limit name (never by key):
 * <ul>
 *   <li>{@code sluice.decisions{limit, result=allowed|denied|soft|shadow}}: read from the counters
 *       the limiter keeps anyway, so they cost nothing extra;</li>
 *   <li>{@code sluice.utilization{limit}}: for each allowed decision, the fraction of the quota in
 *       use (0..1), with buckets at 0.5, 0.8, 0.9, 0.95 and 1: how close allowed keys come to their
 *       limit, the signal for calibrating it;</li>
 *   <li>{@code sluice.keys{limit}}, {@code sluice.keys.evicted{limit}},
 *       {@code sluice.keys.overflowed{limit}}: the key table.</li>
 * </ul>
 * A limiter reports its utilization to the registry it was bound to last.
 */
public final class RateLimiterMetrics implements MeterBinder {
  private static final double[] UTILIZATION_BUCKETS = {0.5, 0.8, 0.9, 0.95, 1.0};

  private final List<RateLimiter> limiters;

  public RateLimiterMetrics(Collection<RateLimiter> limiters) {
    this.limiters = List.copyOf(limiters);
  }

  /** The request limiter's in-process limiters (distributed ones bind their own meters: SyncedLimiterMetrics). */
  public static RateLimiterMetrics of(RequestLimiter limiter) {
    return new RateLimiterMetrics(limiter.limiters().stream().filter(RateLimiter.class::isInstance)
        .map(RateLimiter.class::cast).toList());
  }

  public static RateLimiterMetrics of(RateLimiter limiter) {
    return new RateLimiterMetrics(List.of(limiter));
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    for (RateLimiter limiter : limiters) {
      String name = limiter.limit().name();
      for (Outcome outcome : Outcome.values()) {
        FunctionCounter.builder("sluice.decisions", limiter, l -> l.decisions(outcome))
            .description("Rate limit decisions by outcome")
            .tags("limit", name, "result", outcome.tag())
            .register(registry);
      }
      Gauge.builder("sluice.keys", limiter, RateLimiter::size)
          .description("Keys held in the limiter's table")
          .tag("limit", name)
          .register(registry);
      FunctionCounter.builder("sluice.keys.evicted", limiter, RateLimiter::evicted)
          .description("Keys evicted from the table once at rest")
          .tag("limit", name)
          .register(registry);
      FunctionCounter.builder("sluice.keys.overflowed", limiter, RateLimiter::overflowed)
          .description("New keys charged to the shared overflow budget because the table was full")
          .tag("limit", name)
          .register(registry);
      DistributionSummary utilization = DistributionSummary.builder("sluice.utilization")
          .description("Fraction of the quota in use after each allowed decision")
          .tag("limit", name)
          .serviceLevelObjectives(UTILIZATION_BUCKETS)
          .register(registry);
      limiter.utilizationRecorder(utilization::record);
    }
  }
}
