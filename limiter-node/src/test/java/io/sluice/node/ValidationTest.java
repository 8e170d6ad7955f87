package io.sluice.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Bad input fails with a message that starts with the field's name; nothing else breaks. */
class ValidationTest {

  private static void failsOn(String field, Runnable action) {
    assertThatThrownBy(action::run).isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith(field + ":");
  }

  @Test
  void rejectsBadLimits() {
    failsOn("name", () -> Limit.tokenBucket(null));
    failsOn("name", () -> Limit.tokenBucket(""));
    failsOn("name", () -> Limit.tokenBucket("has space"));
    failsOn("capacity", () -> Limit.tokenBucket("a").capacity(0));
    failsOn("capacity", () -> Limit.tokenBucket("a").capacity(-5));
    failsOn("refill.tokens", () -> Limit.tokenBucket("a").refill(0, Duration.ofSeconds(1)));
    failsOn("refill.tokens", () -> Limit.tokenBucket("a").refill(-1, Duration.ofSeconds(1)));
    failsOn("refill.period", () -> Limit.tokenBucket("a").refill(1, Duration.ZERO));
    failsOn("refill.period", () -> Limit.tokenBucket("a").refill(1, Duration.ofSeconds(-1)));
    failsOn("refill.period", () -> Limit.tokenBucket("a").refill(1, null));
    failsOn("refill.period", () -> Limit.tokenBucket("a").refill(1, Duration.ofDays(365L * 400)));
    failsOn("capacity", () -> Limit.tokenBucket("a").refill(1, Duration.ofSeconds(1)).build());
    failsOn("refill", () -> Limit.tokenBucket("a").capacity(1).build());
    failsOn("window", () -> Limit.tokenBucket("a").window(Duration.ofSeconds(1)));
    failsOn("refill", () -> Limit.fixedWindow("a").refill(1, Duration.ofSeconds(1)));
    failsOn("limit", () -> Limit.fixedWindow("a").limit(0));
    failsOn("window", () -> Limit.fixedWindow("a").window(Duration.ZERO));
    failsOn("window", () -> Limit.fixedWindow("a").window(Duration.ofMillis(1)));
    failsOn("window", () -> Limit.slidingWindowCounter("a").limit(3).build());
    failsOn("limit", () -> Limit.slidingWindowLog("a").window(Duration.ofSeconds(1)).build());
    failsOn("mode", () -> Limit.fixedWindow("a").mode(null));
  }

  @Test
  void rejectsCapacityThatOverflows() {
    // 1 token per 1,000,000,000,001 ns: the emission interval cannot be reduced, so capacity * interval overflows
    failsOn("capacity", () -> Limit.tokenBucket("a").capacity(Long.MAX_VALUE / 1000)
        .refill(1, Duration.ofNanos(1_000_000_000_001L)).build());
    failsOn("limit", () -> Limit.fixedWindow("a").limit(Limit.MAX_WINDOW_LIMIT + 1).window(Duration.ofSeconds(1)).build());
    failsOn("limit", () -> Limit.slidingWindowLog("a").limit(Limit.MAX_LOG_LIMIT + 1).window(Duration.ofSeconds(1)).build());
    // the largest values that fit still work
    Limit big = Limit.tokenBucket("a").capacity(1L << 40).refill(1L << 40, Duration.ofSeconds(1)).build();
    assertThat(RateLimiter.of(big).tryAcquire("k", 1L << 40)).isTrue();
  }

  @Test
  void rejectsBadRequestsAndKeepsWorking() {
    RateLimiter limiter = RateLimiter.builder(Limit.tokenBucket("a").capacity(10).refill(1, Duration.ofSeconds(1)).build())
        .ticker(new ManualTicker()).build();
    failsOn("key", () -> limiter.tryAcquire(null));
    failsOn("key", () -> limiter.tryAcquire(""));
    failsOn("cost", () -> limiter.tryAcquire("k", 0));
    failsOn("cost", () -> limiter.tryAcquire("k", -1));
    failsOn("cost", () -> limiter.acquire("k", 11));
    // nothing was taken by the rejected calls
    assertThat(limiter.acquire("k", 10).allowed()).isTrue();
    assertThat(limiter.size()).isEqualTo(1);
  }

  @Test
  void rejectsBadLimiterSettings() {
    Limit limit = Limit.fixedWindow("a").limit(1).window(Duration.ofSeconds(1)).build();
    failsOn("limit", () -> RateLimiter.builder(null));
    failsOn("maxKeys", () -> RateLimiter.builder(limit).maxKeys(0));
    failsOn("ticker", () -> RateLimiter.builder(limit).ticker(null));
    failsOn("listener", () -> RateLimiter.builder(limit).listener(null));
  }

  @Test
  void rejectsBadRules() {
    Limit a = Limit.fixedWindow("a").limit(1).window(Duration.ofSeconds(1)).build();
    Limit otherA = Limit.fixedWindow("a").limit(2).window(Duration.ofSeconds(1)).build();
    failsOn("rules", () -> Rules.builder().build());
    failsOn("rules", () -> Rules.builder().plan("free"));
    failsOn("rules", () -> Rules.builder().plan("free", Rule.of(a, "ip")).plan("pro", Rule.of(otherA, "ip")));
    failsOn("plan", () -> Rules.builder().plan("free", Rule.of(a, "ip")).plan("free", Rule.of(a, "ip")));
    failsOn("defaultPlan", () -> Rules.builder().plan("free", Rule.of(a, "ip")).defaultPlan("gold").build());
    failsOn("pathPattern", () -> Rules.builder().endpoint("GET", "no-slash", Rule.of(a, "ip")));
    failsOn("pathPattern", () -> Rules.builder().endpoint("GET", "/a**", Rule.of(a, "ip")));
    failsOn("method", () -> Rules.builder().endpoint("GET /x", "/x", Rule.of(a, "ip")));
    failsOn("dimension", () -> Rule.of(a, ""));
    failsOn("limit", () -> Rule.of(null, "ip"));
  }
}
