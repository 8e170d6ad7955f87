package io.sluice.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.RequestLimiter;
import io.sluice.node.Rule;
import io.sluice.node.Rules;
import io.sluice.sync.RedisServer;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The servlet filter over distributed limits: two instances of a service ("pods"), each its own
 * Jetty with the filter, its own {@link RequestLimiter} whose limits are {@link SyncedLimiter}s on its
 * own connection to one real redis-server. Requests to a key alternate between the pods: together they
 * admit the limit once, not once per pod, and a denial by the per-key limit costs the per-IP limit nothing
 * beyond a permit per pod.
 */
class DistributedFilterIT {
  private static final Duration HOUR = Duration.ofHours(1);

  @Test
  void twoFilterInstancesOnOneRedisEnforceOneLimit() throws Exception {
    awayFromAnHourBoundary();
    Rules rules = Rules.builder()
        .always(Rule.of(Limit.fixedWindow("per-ip").limit(1_000).window(HOUR).build(), "ip"),
            Rule.of(Limit.fixedWindow("per-key").limit(20).window(HOUR).build(), "api-key"))
        .build();
    try (RedisServer redis = RedisServer.start();
        RedisCounterStore storeA = RedisCounterStore.connect(RedisStoreConfig.builder(redis.uri()).build());
        RedisCounterStore storeB = RedisCounterStore.connect(RedisStoreConfig.builder(redis.uri()).build());
        RequestLimiter limiterA = RequestLimiter.builder(rules)
            .limiters(limit -> SyncedLimiter.builder(limit, storeA).nodeId("pod-a").build()).build();
        RequestLimiter limiterB = RequestLimiter.builder(rules)
            .limiters(limit -> SyncedLimiter.builder(limit, storeB).nodeId("pod-b").build()).build();
        FilterHarness podA = new FilterHarness(new RateLimitFilter(RateLimitFilterConfig.builder(limiterA).build()));
        FilterHarness podB = new FilterHarness(new RateLimitFilter(RateLimitFilterConfig.builder(limiterB).build()))) {
      int allowed = 0;
      for (int i = 0; i < 60; i++) {
        FilterHarness pod = i % 2 == 0 ? podA : podB;
        HttpResponse<String> r = Http.get(pod.uri("/items"), "X-API-Key", "k1");
        if (r.statusCode() == 200) {
          allowed++;
        } else {
          assertThat(r.statusCode()).as(r.body()).isEqualTo(429);
          assertThat(Http.rateLimit(r).value).isEqualTo("per-key");
        }
      }
      System.out.printf("distributed filter: %d of 60 requests allowed by two pods, limit 20%n", allowed);
      assertThat(allowed).as("one limit of 20 across both pods (in-process filters would admit 40)").isBetween(18, 20);
      assertThat(podA.served.get() + podB.served.get()).isEqualTo(allowed);
      // another key: its own 20, and the per-IP limit charged for allowed requests (and at most a
      // given-back permit per pod), not for the 40 denied ones
      HttpResponse<String> other = Http.get(podB.uri("/items"), "X-API-Key", "k2");
      assertThat(other.statusCode()).isEqualTo(200);
      assertThat(Http.longField(other, "X-RateLimit-Remaining")).as("per-key k2").isEqualTo(19);
    }
  }

  /** The README's rules (sliding window per IP, token-bucket tiers, a login window, a shadow rule) and its factory, as written. */
  @Test
  void theReadmesRulesWithItsFactory() throws Exception {
    Limit perIp   = Limit.slidingWindowCounter("per-ip").limit(1_000).window(Duration.ofMinutes(1)).build();
    Limit free    = Limit.tokenBucket("free").capacity(60).refill(1, Duration.ofSeconds(1)).build();
    Limit pro     = Limit.tokenBucket("pro").capacity(600).refill(10, Duration.ofSeconds(1)).build();
    Limit login   = Limit.fixedWindow("login").limit(5).window(Duration.ofMinutes(15)).build();
    Limit newRule = Limit.slidingWindowCounter("new-rule").limit(100).window(Duration.ofMinutes(1))
        .mode(io.sluice.node.Mode.SHADOW).build();
    Rules rules = Rules.builder()
        .always(Rule.of(perIp, "ip"), Rule.of(newRule, "api-key"))
        .plan("free", Rule.of(free, "api-key"))
        .plan("pro", Rule.of(pro, "api-key"))
        .defaultPlan("free")
        .endpoint("POST", "/login", Rule.of(login, "ip"))
        .build();
    try (RedisServer redis = RedisServer.start()) {
      RedisCounterStore store = RedisCounterStore.connect(RedisStoreConfig.builder(redis.uri()).build());
      RequestLimiter requestLimiter = RequestLimiter.builder(rules)   // the Rules above
          .limiters(limit -> SyncedLimiter.builder(limit, store).build()) // every limit shared (or a HazelcastCounterStore)
          .build();                                                     // close() flushes and closes them
      // a second pod: its own connection, the same rules
      RedisCounterStore otherStore = RedisCounterStore.connect(RedisStoreConfig.builder(redis.uri()).build());
      RequestLimiter otherPod = RequestLimiter.builder(rules)
          .limiters(limit -> SyncedLimiter.builder(limit, otherStore).build()).build();
      try (requestLimiter; store; otherPod; otherStore) {
        io.sluice.node.RequestContext attempt = io.sluice.node.RequestContext.builder().plan("pro")
            .endpoint("POST", "/login").identity("ip", "10.0.0.7").identity("api-key", "pro-1").build();
        int allowed = 0;
        for (int i = 0; i < 8; i++) {
          allowed += (i % 2 == 0 ? requestLimiter : otherPod).check(attempt).allowed() ? 1 : 0;
        }
        assertThat(allowed).as("login: 5 per 15 minutes, over both pods").isEqualTo(5);
        assertThat(requestLimiter.limiters()).allMatch(l -> l instanceof SyncedLimiter)
            .extracting(l -> l.limit().name()).containsExactlyInAnyOrder("per-ip", "new-rule", "login", "free", "pro");
        // the free tier's token bucket (60 of burst, 1 a second) is one bucket over both pods
        long started = System.nanoTime();
        io.sluice.node.RequestContext freeCall = io.sluice.node.RequestContext.builder()
            .endpoint("GET", "/items").identity("ip", "10.0.0.8").identity("api-key", "free-1").build();
        int freeAllowed = 0;
        for (int i = 0; i < 100; i++) {
          freeAllowed += (i % 2 == 0 ? requestLimiter : otherPod).check(freeCall).allowed() ? 1 : 0;
        }
        long refilled = java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started) + 1;
        assertThat(freeAllowed).as("free: a burst of 60 over both pods (in-process buckets would allow 100)")
            .isBetween(60, (int) (60 + refilled));
      }
    }
  }

  /** The test's windows are hours: it starts at least a minute away from the next one. */
  private static void awayFromAnHourBoundary() throws InterruptedException {
    long intoHour = Instant.now().getEpochSecond() % 3_600;
    if (intoHour > 3_540) {
      Thread.sleep((3_600 - intoHour + 1) * 1_000);
    }
  }
}
