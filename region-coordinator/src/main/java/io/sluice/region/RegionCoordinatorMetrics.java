package io.sluice.region;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.ToDoubleFunction;

/**
 * Micrometer meters of a coordinator replica, from its last round: per quota and region
 * {@code sluice.region.share}, {@code .admitted}, {@code .demand} (permits per second, smoothed),
 * {@code .utilisation} (the region's admitted over its share); per quota {@code sluice.region.quota.admitted},
 * {@code .over_admitted} (the most one key went over G), {@code .keys}, {@code .utilisation}
 * (admitted over G times keys); and {@code sluice.region.epoch}, {@code .leader}, {@code .fenced}, {@code .rounds},
 * {@code .refused_writes}, {@code .region_errors}.
 */
public final class RegionCoordinatorMetrics implements MeterBinder {
  private final RegionCoordinator coordinator;

  public RegionCoordinatorMetrics(RegionCoordinator coordinator) {
    if (coordinator == null) {
      throw new IllegalArgumentException("coordinator: must not be null");
    }
    this.coordinator = coordinator;
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    RegionCoordinator c = coordinator;
    for (GlobalQuota q : c.config().quotas()) {
      String quota = q.name();
      quotaGauge(registry, "sluice.region.quota.admitted", quota, s -> s.admitted());
      quotaGauge(registry, "sluice.region.quota.over_admitted", quota, s -> s.overAdmitted());
      quotaGauge(registry, "sluice.region.quota.keys", quota, s -> s.keys());
      quotaGauge(registry, "sluice.region.quota.utilisation", quota,
          s -> s.keys() == 0 ? 0 : (double) s.admitted() / ((double) q.quota() * s.keys()));
      for (int r = 0; r < c.config().regions().size(); r++) {
        int index = r;
        String region = c.config().regions().get(r).name();
        regionGauge(registry, "sluice.region.share", quota, region, index, x -> x.share());
        regionGauge(registry, "sluice.region.admitted", quota, region, index, x -> x.admitted());
        regionGauge(registry, "sluice.region.demand", quota, region, index, x -> x.demandPerSecond());
        regionGauge(registry, "sluice.region.utilisation", quota, region, index,
            x -> x.share() == 0 ? 0 : (double) x.admitted() / x.share());
      }
    }
    Gauge.builder("sluice.region.epoch", c, RegionCoordinator::epoch).register(registry);
    Gauge.builder("sluice.region.leader", c, x -> x.leading() ? 1 : 0).register(registry);
    Gauge.builder("sluice.region.fenced", c, x -> x.fenced() ? 1 : 0).register(registry);
    FunctionCounter.builder("sluice.region.rounds", c, RegionCoordinator::rounds).register(registry);
    FunctionCounter.builder("sluice.region.refused_writes", c, RegionCoordinator::refusedWrites).register(registry);
    FunctionCounter.builder("sluice.region.region_errors", c, RegionCoordinator::regionErrors).register(registry);
  }

  private void quotaGauge(MeterRegistry registry, String name, String quota,
      ToDoubleFunction<RegionCoordinator.QuotaSummary> value) {
    Gauge.builder(name, coordinator, c -> {
      RegionCoordinator.QuotaSummary s = c.lastRound().get(quota);
      return s == null ? Double.NaN : value.applyAsDouble(s);
    }).tag("quota", quota).register(registry);
  }

  private void regionGauge(MeterRegistry registry, String name, String quota, String region, int index,
      ToDoubleFunction<RegionCoordinator.RegionSummary> value) {
    Gauge.builder(name, coordinator, c -> {
      RegionCoordinator.QuotaSummary s = c.lastRound().get(quota);
      return s == null ? Double.NaN : value.applyAsDouble(s.regions().get(index));
    }).tag("quota", quota).tag("region", region).register(registry);
  }
}
