package io.sluice.envoy;

import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse.BucketAction;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse.BucketAction.AbandonAction;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse.BucketAction.QuotaAssignmentAction;
import io.envoyproxy.envoy.type.v3.RateLimitStrategy;
import io.envoyproxy.envoy.type.v3.TokenBucket;

/**
 * The bucket actions {@link RlqsService} sends: quota assignments (a share as the rule's strategy, or
 * a blanket rule) and abandons. Pure functions of what to say; the service decides when.
 */
final class RlqsActions {
  private RlqsActions() {
  }

  /**
   * How Envoy enforces a share of {@code rate} per unit of the rule's limit: {@code deny_all} for 0,
   * else the rule's strategy.
   */
  static RateLimitStrategy share(RlqsConfig.Rule rule, long rate) {
    RlsLimit limit = rule.limit();
    RateLimitStrategy.Builder strategy = RateLimitStrategy.newBuilder();
    if (rate == 0) {
      strategy.setBlanketRule(RateLimitStrategy.BlanketRule.DENY_ALL);
    } else if (rule.strategy() == RlqsConfig.Strategy.TOKEN_BUCKET) {
      java.time.Duration unit = limit.unit().window();
      strategy.setTokenBucket(TokenBucket.newBuilder().setMaxTokens((int) rate)
          .setTokensPerFill(UInt32Value.of((int) rate))
          .setFillInterval(com.google.protobuf.Duration.newBuilder().setSeconds(unit.getSeconds())));
    } else {
      strategy.setRequestsPerTimeUnit(RateLimitStrategy.RequestsPerTimeUnit.newBuilder()
          .setRequestsPerTimeUnit(rate).setTimeUnit(limit.unit().rateLimitUnit()));
    }
    return strategy.build();
  }

  /** {@code allow_all} (unlimited, or no rule) or {@code deny_all} (a limit of 0). */
  static RateLimitStrategy blanket(RlqsConfig.Rule rule) {
    boolean deny = rule != null && !rule.limit().unlimited() && rule.limit().requestsPerUnit() == 0;
    return RateLimitStrategy.newBuilder().setBlanketRule(deny
        ? RateLimitStrategy.BlanketRule.DENY_ALL : RateLimitStrategy.BlanketRule.ALLOW_ALL).build();
  }

  /** A quota assignment of the strategy to the bucket, live for {@code ttlMillis} (0 when negative). */
  static BucketAction assignment(BucketId id, RateLimitStrategy strategy, long ttlMillis) {
    long ttl = Math.max(0, ttlMillis);
    return BucketAction.newBuilder().setBucketId(id).setQuotaAssignmentAction(QuotaAssignmentAction.newBuilder()
        .setAssignmentTimeToLive(com.google.protobuf.Duration.newBuilder().setSeconds(ttl / 1_000)
            .setNanos((int) (ttl % 1_000) * 1_000_000))
        .setRateLimitStrategy(strategy)).build();
  }

  static BucketAction abandon(BucketId id) {
    return BucketAction.newBuilder().setBucketId(id).setAbandonAction(AbandonAction.getDefaultInstance()).build();
  }
}
