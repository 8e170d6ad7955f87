package io.sluice.sync.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.sync.StoreBreakerConfig;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class StoreCallsTest {
  /** A store whose calls time out at 500 ms must count 450 ms calls as slow, or a slow link never opens the breaker. */
  @Test
  void theDefaultBreakerCountsCallsAsSlowBelowTheStoresOwnTimeout() {
    StoreBreakerConfig defaults = StoreBreakerConfig.ofDefaults();
    assertThat(StoreCalls.breakerConfig(defaults, Duration.ofSeconds(2), Duration.ofMillis(500))
        .getSlowCallDurationThreshold()).isEqualTo(Duration.ofMillis(400));
    assertThat(StoreCalls.breakerConfig(defaults, Duration.ofMillis(600), Duration.ofSeconds(5))
        .getSlowCallDurationThreshold()).isEqualTo(Duration.ofMillis(300));
    assertThat(StoreCalls.breakerConfig(defaults, Duration.ofSeconds(2), null)
        .getSlowCallDurationThreshold()).isEqualTo(Duration.ofSeconds(1));
    // one set is kept as set
    assertThat(StoreCalls.breakerConfig(defaults.toBuilder().slowCallDuration(Duration.ofMillis(70)).build(),
        Duration.ofSeconds(2), Duration.ofMillis(500)).getSlowCallDurationThreshold()).isEqualTo(Duration.ofMillis(70));
  }
}
