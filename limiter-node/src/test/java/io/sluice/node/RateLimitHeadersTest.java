package io.sluice.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.StructuredFields.Item;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The response fields, read back with a structured-field parser rather than compared as strings. */
class RateLimitHeadersTest {
  private final ManualTicker ticker = new ManualTicker();

  private RequestLimiter limiter() {
    Limit burst = Limit.fixedWindow("burst").limit(100).window(Duration.ofMinutes(1)).build();
    Limit daily = Limit.tokenBucket("daily").capacity(1_000).refill(1_000, Duration.ofDays(1)).build();
    Limit dryRun = Limit.fixedWindow("dry-run").limit(1).window(Duration.ofMinutes(1)).mode(Mode.SHADOW).build();
    Rules rules = Rules.builder().always(Rule.of(burst, "api-key"), Rule.of(daily, "api-key"), Rule.of(dryRun, "api-key"))
        .build();
    return RequestLimiter.builder(rules).ticker(ticker).build();
  }

  private static final RequestContext REQUEST = RequestContext.builder().identity("api-key", "k").build();

  @Test
  void allowedResponseListsPoliciesAndReportsTheClosestToItsLimit() {
    RequestLimiter limiter = limiter();
    ticker.advance(Duration.ofSeconds(30));
    Decision d = null;
    for (int i = 0; i < 50; i++) {
      d = limiter.check(REQUEST);
    }
    Map<String, String> fields = RateLimitHeaders.of(d);
    assertThat(fields).doesNotContainKey(RateLimitHeaders.RETRY_AFTER);

    List<Item> policies = StructuredFields.parseList(fields.get(RateLimitHeaders.RATELIMIT_POLICY));
    assertThat(policies).extracting(p -> p.value).containsExactly("burst", "daily"); // no shadow policy
    assertThat(policies.get(0).params).containsEntry("q", 100L).containsEntry("w", 60L);
    assertThat(policies.get(1).params).containsEntry("q", 1_000L).containsEntry("w", 86_400L);

    List<Item> limit = StructuredFields.parseList(fields.get(RateLimitHeaders.RATELIMIT));
    assertThat(limit).hasSize(1);
    assertThat(limit.get(0).value).isEqualTo("burst"); // 50 of 100 used beats 50 of 1,000
    assertThat(limit.get(0).params).containsEntry("r", 50L).containsEntry("t", 30L);

    assertThat(fields).containsEntry(RateLimitHeaders.X_RATELIMIT_LIMIT, "100")
        .containsEntry(RateLimitHeaders.X_RATELIMIT_REMAINING, "50")
        .containsEntry(RateLimitHeaders.X_RATELIMIT_RESET, "30");
  }

  @Test
  void deniedResponseCarriesRetryAfterAndTheDenyingPolicy() {
    RequestLimiter limiter = limiter();
    ticker.advance(Duration.ofSeconds(45));
    for (int i = 0; i < 100; i++) {
      assertThat(limiter.check(REQUEST).allowed()).isTrue();
    }
    ticker.advance(Duration.ofMillis(500));
    Decision denied = limiter.check(REQUEST);
    assertThat(denied.allowed()).isFalse();
    Map<String, String> fields = RateLimitHeaders.of(denied);
    assertThat(fields).containsEntry(RateLimitHeaders.RETRY_AFTER, "15"); // 14.5 s rounded up
    Item limit = StructuredFields.parseList(fields.get(RateLimitHeaders.RATELIMIT)).get(0);
    assertThat(limit.value).isEqualTo("burst");
    assertThat(limit.params).containsEntry("r", 0L).containsEntry("t", 15L);
  }

  @Test
  void onlyShadowLimitsMeansNoFields() {
    Limit dryRun = Limit.fixedWindow("dry-run").limit(1).window(Duration.ofMinutes(1)).mode(Mode.SHADOW).build();
    RateLimiter limiter = RateLimiter.builder(dryRun).ticker(ticker).build();
    assertThat(RateLimitHeaders.of(limiter.acquire("k"))).isEmpty();
  }
}
