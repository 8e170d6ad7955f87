package io.sluice.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RateLimiterMetricsTest {

  @Test
  void countsDecisionsByLimitAndResultAndRecordsUtilization() {
    ManualTicker ticker = new ManualTicker();
    Limit hard = Limit.fixedWindow("hard").limit(4).window(Duration.ofMinutes(1)).build();
    Limit shadow = Limit.fixedWindow("shadow").limit(1).window(Duration.ofMinutes(1)).mode(Mode.SHADOW).build();
    Rules rules = Rules.builder().always(Rule.of(hard, "ip"), Rule.of(shadow, "ip")).build();
    RequestLimiter limiter = RequestLimiter.builder(rules).ticker(ticker).build();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RateLimiterMetrics.of(limiter).bindTo(registry);

    RequestContext r = RequestContext.builder().identity("ip", "10.1.1.1").build();
    for (int i = 0; i < 6; i++) {
      limiter.check(r);
    }
    assertThat(count(registry, "hard", "allowed")).isEqualTo(4);
    assertThat(count(registry, "hard", "denied")).isEqualTo(2);
    assertThat(count(registry, "shadow", "allowed")).isEqualTo(1);
    assertThat(count(registry, "shadow", "shadow")).isEqualTo(3);
    assertThat(registry.get("sluice.keys").tag("limit", "hard").gauge().value()).isEqualTo(1);

    DistributionSummary utilization = registry.get("sluice.utilization").tag("limit", "hard").summary();
    assertThat(utilization.count()).isEqualTo(4);
    assertThat(utilization.max()).isEqualTo(1.0); // the fourth permit used the whole quota
    assertThat(utilization.totalAmount()).isEqualTo(0.25 + 0.5 + 0.75 + 1.0);
  }

  private static double count(SimpleMeterRegistry registry, String limit, String result) {
    return registry.get("sluice.decisions").tag("limit", limit).tag("result", result).functionCounter().count();
  }
}
