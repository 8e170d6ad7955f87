package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.ExactArgs;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A region's part of a global quota as its counter describes it: a window's static share, a token
 * bucket's static share of the refill and part of the burst, and the messages that name the field a
 * regional limit cannot have.
 */
class RegionalCounterTest {
  @Test
  void aWindowQuotasStaticShareIsItsQuotaOverTheRegions() {
    Counter c = Counter.regional(Limit.fixedWindow("w").limit(1_000).window(Duration.ofSeconds(10)).build(), 3);
    assertThat(c.regional()).isTrue();
    assertThat(c.regionalBucket()).isFalse();
    assertThat(c.staticShare()).isEqualTo(333);
  }

  @Test
  void aTokenBucketsStaticShareIsOfItsRefillAndItsRegionsHoldAnEvenPartOfTheBurst() {
    Limit bucket = Limit.tokenBucket("b").capacity(100).refill(6_000, Duration.ofSeconds(10)).build();
    Counter c = Counter.regional(bucket, 3);
    assertThat(c.regionalBucket()).isTrue();
    assertThat(c.kind()).isEqualTo(Counter.Kind.GCRA);
    assertThat(c.staticShare()).isEqualTo(2_000);
    assertThat(c.staticBurst()).isEqualTo(33);
    assertThat(c.windowNanos()).isEqualTo(Duration.ofSeconds(10).toNanos());
    // a cost is at most the region's part of the burst
    assertThatThrownBy(() -> ExactArgs.checkRegional(c, "k", 34, 1)).hasMessageStartingWith("cost: must be between 1"
        + " and the region's part 33 of the burst of limit b");
    assertThatThrownBy(() -> ExactArgs.checkRegional(Counter.of(bucket), "k", 1, 1))
        .hasMessageStartingWith("counter: must be a regional token bucket's");
    ExactArgs.checkRegional(c, "k", 33, 1);
    // a claim of its tokens: a want of at most that part, a need of at most the want
    ExactArgs.checkRegionalClaim(c, "k", 33, 33, 1, 0, 0, 0);
    assertThatThrownBy(() -> ExactArgs.checkRegionalClaim(c, "k", 34, 1, 1, 0, 0, 0))
        .hasMessageStartingWith("want: must be between 1 and the region's part 33");
    assertThatThrownBy(() -> ExactArgs.checkRegionalClaim(c, "k", 0, 0, 1, 0, 0, 0)).hasMessageStartingWith("want:");
    assertThatThrownBy(() -> ExactArgs.checkRegionalClaim(c, "k", 5, 6, 1, 0, 0, 0))
        .hasMessageStartingWith("need: must be between 0 and want 5");
    assertThatThrownBy(() -> ExactArgs.checkRegionalClaim(c, "k", 5, 1, 1, -1, 0, 0)).hasMessageStartingWith("unused:");
    assertThatThrownBy(() -> ExactArgs.checkRegionalClaim(Counter.of(bucket), "k", 1, 1, 1, 0, 0, 0))
        .hasMessageStartingWith("counter: must be a regional token bucket's");
    assertThatThrownBy(() -> ExactArgs.checkRegionalClaim(c, "", 1, 1, 1, 0, 0, 0)).hasMessageStartingWith("key:");
  }

  @Test
  void whatARegionalLimitCannotBeIsNamed() {
    assertThatThrownBy(() -> Counter.regional(Limit.leakyBucket("m").capacity(10).leakRate(10, Duration.ofSeconds(1))
        .build(), 2)).hasMessageStartingWith("limit: a regional quota is split per window or by refill rate; m is");
    assertThatThrownBy(() -> Counter.regional(Limit.tokenBucket("b").capacity(2).refill(100, Duration.ofSeconds(1))
        .build(), 3)).hasMessageStartingWith("regions: must be at most the burst 2 of limit b");
    assertThatThrownBy(() -> Counter.regional(Limit.tokenBucket("b").capacity(100).refill(2, Duration.ofSeconds(1))
        .build(), 3)).hasMessageStartingWith("regions: must be between 1 and the quota 2 of limit b");
    assertThatThrownBy(() -> Counter.regional(Limit.tokenBucket("b").capacity(100).refill(100, Duration.ofNanos(1_000_500))
        .build(), 3)).hasMessageStartingWith("refill.period: must be a whole number of microseconds");
    // a refill of 10^9 per day: 10^9 * 86,400,000,000 us is past 2^52
    assertThatThrownBy(() -> Counter.regional(Limit.tokenBucket("b").capacity(100).refill(1_000_000_000L,
        Duration.ofDays(1)).build(), 3)).hasMessageStartingWith("capacity: a burst of 100 and a refill of 1000000000");
  }
}
