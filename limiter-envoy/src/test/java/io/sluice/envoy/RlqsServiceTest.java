package io.sluice.envoy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Duration;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse.BucketAction;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports.BucketQuotaUsage;
import io.envoyproxy.envoy.type.v3.RateLimitStrategy;
import io.envoyproxy.envoy.type.v3.RateLimitUnit;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.sluice.sync.sim.MemoryStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The quota service on the in-memory store, its clock and its period's ticks driven by the test
 * (periods of 1 s, renewals 200 ms before a period ends).
 */
class RlqsServiceTest {
  static final String CONFIG = String.join("\n",
      "assignment_period: 1s",
      "abandon_after: 3s",
      "domains:",
      "  - domain: edge",
      "    buckets:",
      "      - bucket_id: {name: api}",
      "        rate_limit: {unit: minute, requests_per_unit: 100}",
      "        strategy: requests_per_time_unit",
      "      - bucket_id: {name: tb}",
      "        rate_limit: {unit: second, requests_per_unit: 8}",
      "      - bucket_id: {name: health}",
      "        rate_limit: {unlimited: true}",
      "      - bucket_id: {name: blocked}",
      "        rate_limit: {unit: hour, requests_per_unit: 0}",
      "  - domain: open",
      "    buckets:",
      "      - bucket_id: {name: api}",
      "        rate_limit: {unit: second, requests_per_unit: 1}",
      "");

  final AtomicLong clock = new AtomicLong(1_000_000_000_000L + 100); // 100 ms into a period
  final MemoryStore store = new MemoryStore();

  RlqsService service(int maxStreams, int maxBuckets) {
    return new RlqsService(RlqsConfig.parse("rlqs.yaml", CONFIG), store, clock::get, maxStreams, maxBuckets, null);
  }

  RlqsService service() {
    return service(16, 16);
  }

  /** What the server sent one stream, and how it ended. */
  static final class Client implements StreamObserver<RateLimitQuotaResponse> {
    final List<BucketAction> actions = new ArrayList<>();
    Status error;
    boolean completed;
    StreamObserver<RateLimitQuotaUsageReports> in;

    Client open(RlqsService s) {
      in = s.streamRateLimitQuotas(this);
      return this;
    }

    void report(String domain, Map<String, String> bucket, long allowed, long denied, long elapsedMillis) {
      in.onNext(reports(domain, usage(bucket, allowed, denied, elapsedMillis)));
    }

    BucketAction last() {
      return actions.get(actions.size() - 1);
    }

    @Override
    public void onNext(RateLimitQuotaResponse r) {
      assertThat(r.getBucketActionCount()).isPositive();
      actions.addAll(r.getBucketActionList());
    }

    @Override
    public void onError(Throwable t) {
      error = Status.fromThrowable(t);
    }

    @Override
    public void onCompleted() {
      completed = true;
    }
  }

  static BucketQuotaUsage usage(Map<String, String> bucket, long allowed, long denied, long elapsedMillis) {
    return BucketQuotaUsage.newBuilder().setBucketId(BucketId.newBuilder().putAllBucket(bucket))
        .setNumRequestsAllowed(allowed).setNumRequestsDenied(denied)
        .setTimeElapsed(Duration.newBuilder().setSeconds(elapsedMillis / 1000).setNanos((int) (elapsedMillis % 1000) * 1_000_000))
        .build();
  }

  static RateLimitQuotaUsageReports reports(String domain, BucketQuotaUsage... usages) {
    return RateLimitQuotaUsageReports.newBuilder().setDomain(domain).addAllBucketQuotaUsages(List.of(usages)).build();
  }

  /** The rate of an assignment: requests per time unit, token bucket's tokens, 0 for deny_all, -1 for allow_all. */
  static long rate(BucketAction a) {
    assertThat(a.hasQuotaAssignmentAction()).as("an assignment: %s", a).isTrue();
    RateLimitStrategy s = a.getQuotaAssignmentAction().getRateLimitStrategy();
    switch (s.getStrategyCase()) {
      case REQUESTS_PER_TIME_UNIT:
        return s.getRequestsPerTimeUnit().getRequestsPerTimeUnit();
      case TOKEN_BUCKET:
        return s.getTokenBucket().getMaxTokens();
      case BLANKET_RULE:
        return s.getBlanketRule() == RateLimitStrategy.BlanketRule.DENY_ALL ? 0 : -1;
      default:
        throw new AssertionError(a);
    }
  }

  static long ttlMillis(BucketAction a) {
    Duration d = a.getQuotaAssignmentAction().getAssignmentTimeToLive();
    return d.getSeconds() * 1000 + d.getNanos() / 1_000_000;
  }

  long period() {
    return Math.floorDiv(clock.get(), 1000);
  }

  /** Moves the clock to 200 ms before the current period ends and renews, then to the next period and raises. */
  void nextPeriod(RlqsService s) {
    long p = period();
    clock.set((p + 1) * 1000 - 150);
    s.renew(p + 1);
    clock.set((p + 1) * 1000 + 10);
    s.raise(p + 1);
  }

  static final Map<String, String> API = Map.of("name", "api");

  @Test
  void aLoneStreamIsAssignedTheWholeLimitUntilThePeriodsEnd() {
    RlqsService s = service();
    Client a = new Client().open(s);
    a.report("edge", API, 1, 0, 1000);
    BucketAction first = a.last();
    assertThat(first.getBucketId().getBucketMap()).isEqualTo(API);
    assertThat(rate(first)).isEqualTo(100);
    assertThat(first.getQuotaAssignmentAction().getRateLimitStrategy().getRequestsPerTimeUnit().getTimeUnit())
        .isEqualTo(RateLimitUnit.MINUTE);
    assertThat(ttlMillis(first)).isEqualTo(900); // to the end of the period
    assertThat(s.streams()).isEqualTo(1);
    assertThat(s.subscriptions()).isEqualTo(1);
    // renewed: the same share to the end of the next period, sent before this one ends
    nextPeriod(s);
    assertThat(a.actions).hasSize(2);
    assertThat(rate(a.last())).isEqualTo(100);
    assertThat(ttlMillis(a.last())).isEqualTo(1150);
  }

  /**
   * A reloaded file reaches the buckets already subscribed to from their next period (the current
   * period's share was leased under the old rule and stays), and a domain it adds takes streams at
   * once; a changed period is refused, naming the field, and the configuration in use stays.
   */
  @Test
  void aReloadedConfigurationReachesSubscribedBucketsFromTheirNextPeriod() {
    RlqsService s = service();
    Client a = new Client().open(s);
    a.report("edge", API, 1, 0, 1000);
    assertThat(rate(a.last())).isEqualTo(100);

    RlqsConfig reloaded = RlqsConfig.parse("rlqs.yaml", CONFIG.replace("requests_per_unit: 100", "requests_per_unit: 40")
        + "  - domain: added\n    buckets:\n      - bucket_id: {name: api}\n"
        + "        rate_limit: {unit: second, requests_per_unit: 3}\n");
    assertThat(s.refusal(reloaded)).isNull();
    s.config(reloaded);
    nextPeriod(s);
    assertThat(rate(a.last())).as("the next period's assignment, under the new rule").isEqualTo(40);
    Client b = new Client().open(s);
    b.report("added", API, 1, 0, 1000);
    assertThat(b.error).as("a domain the reload added").isNull();
    assertThat(rate(b.last())).isEqualTo(3);

    RlqsConfig otherPeriod = RlqsConfig.parse("rlqs.yaml", CONFIG.replace("assignment_period: 1s",
        "assignment_period: 2s"));
    assertThat(s.refusal(otherPeriod)).startsWith("period: cannot change from 1s to 2s without a restart");
    assertThatThrownBy(() -> s.config(otherPeriod)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("period: ");
    assertThat(s.config()).isSameAs(reloaded);
  }

  @Test
  void twoStreamsShareTheLimitByDemandAndNeverHoldMoreThanItTogether() {
    RlqsService s = service();
    Client a = new Client().open(s);
    Client b = new Client().open(s);
    a.report("edge", API, 30, 0, 1000); // 1800 a minute: full weight
    assertThat(rate(a.last())).isEqualTo(100);
    b.report("edge", API, 1, 0, 1000); // 60 a minute
    // nothing is free in this period: b is denied until the next
    assertThat(rate(b.last())).isZero();
    assertThat(rate(a.last()) + rate(b.last())).isLessThanOrEqualTo(100);
    for (int i = 0; i < 5; i++) {
      a.report("edge", API, 30, 10, 1000);
      b.report("edge", API, 1, 0, 1000);
      long p = period();
      clock.set((p + 1) * 1000 - 150);
      s.renew(p + 1);
      // sent before the period ends: within both periods' budgets
      assertThat(rate(a.last()) + rate(b.last())).isLessThanOrEqualTo(100);
      clock.set((p + 1) * 1000 + 10);
      s.raise(p + 1);
      assertThat(rate(a.last()) + rate(b.last())).isLessThanOrEqualTo(100);
    }
    // by demand: a asks for far more than the limit, b for 60 a minute
    assertThat(rate(a.last())).isEqualTo(100 * 1000 / (1000 + 600));
    assertThat(rate(b.last())).isEqualTo(100 * 600 / (1000 + 600));
  }

  @Test
  void aStreamThatEndsFreesItsShareForTheOthersAfterItsTtl() {
    RlqsService s = service();
    Client a = new Client().open(s);
    Client b = new Client().open(s);
    for (int i = 0; i < 2; i++) {
      a.report("edge", API, 60, 0, 1000);
      b.report("edge", API, 60, 0, 1000);
      nextPeriod(s);
    }
    assertThat(rate(a.last())).isEqualTo(50);
    assertThat(rate(b.last())).isEqualTo(50);
    a.in.onCompleted();
    assertThat(a.completed).isTrue();
    assertThat(s.streams()).isEqualTo(1);
    // a's share of this period stays taken until it ends; the next is split by this period's demand
    // (a's counted), and the one after is b's alone
    b.report("edge", API, 60, 0, 1000);
    nextPeriod(s);
    assertThat(rate(b.last())).isEqualTo(50);
    b.report("edge", API, 60, 0, 1000);
    nextPeriod(s);
    assertThat(rate(b.last())).isEqualTo(100);
  }

  @Test
  void aLargerShareIsSentOnlyOnceItsPeriodHasBegun() {
    RlqsService s = service();
    Client a = new Client().open(s);
    Client b = new Client().open(s);
    for (int i = 0; i < 2; i++) {
      a.report("edge", API, 60, 0, 1000);
      b.report("edge", API, 60, 0, 1000);
      nextPeriod(s);
    }
    b.in.onCompleted();
    a.report("edge", API, 60, 0, 1000);
    nextPeriod(s);
    a.report("edge", API, 60, 0, 1000);
    long p = period();
    clock.set((p + 1) * 1000 - 150);
    int before = a.actions.size();
    s.renew(p + 1); // a's next share is 100, its current 50: 50 is sent, to the end of the next period
    assertThat(a.actions).hasSize(before + 1);
    assertThat(rate(a.last())).isEqualTo(50);
    assertThat(ttlMillis(a.last())).isEqualTo(1150);
    clock.set((p + 1) * 1000 + 10);
    s.raise(p + 1);
    assertThat(a.actions).hasSize(before + 2);
    assertThat(rate(a.last())).isEqualTo(100);
    assertThat(ttlMillis(a.last())).isEqualTo(990);
    // unchanged afterwards: one assignment per period, the same strategy (Envoy extends its TTL)
    nextPeriod(s);
    assertThat(a.actions).hasSize(before + 3);
    assertThat(rate(a.last())).isEqualTo(100);
  }

  @Test
  void unlimitedIsAllowAllAZeroLimitDenyAllAndATokenBucketHoldsTheShareFilledPerUnit() {
    RlqsService s = service();
    Client a = new Client().open(s);
    a.report("edge", Map.of("name", "health"), 1, 0, 1000);
    assertThat(rate(a.last())).isEqualTo(-1);
    assertThat(ttlMillis(a.last())).isEqualTo(900);
    a.report("edge", Map.of("name", "blocked"), 1, 0, 1000);
    assertThat(rate(a.last())).isZero();
    a.report("edge", Map.of("name", "nothing matches"), 1, 0, 1000);
    assertThat(rate(a.last())).isEqualTo(-1);
    a.report("edge", Map.of("name", "tb"), 1, 0, 1000);
    var tb = a.last().getQuotaAssignmentAction().getRateLimitStrategy().getTokenBucket();
    assertThat(tb.getMaxTokens()).isEqualTo(8);
    assertThat(tb.getTokensPerFill().getValue()).isEqualTo(8);
    assertThat(tb.getFillInterval().getSeconds()).isEqualTo(1);
    // blanket rules are renewed each period too
    int before = a.actions.size();
    nextPeriod(s);
    assertThat(a.actions.subList(before, a.actions.size())).extracting(RlqsServiceTest::rate)
        .containsExactlyInAnyOrder(-1L, 0L, -1L, 8L);
  }

  @Test
  void aBucketWithoutRequestsForAbandonAfterIsAbandonedAndComesBackOnItsNextReport() {
    RlqsService s = service();
    Client a = new Client().open(s);
    a.report("edge", API, 5, 0, 1000); // 100 ms into a period
    for (int i = 0; i < 3; i++) {
      nextPeriod(s); // renewals 0.75, 1.75 and 2.75 s after the last request
      assertThat(a.last().hasAbandonAction()).isFalse();
      a.report("edge", API, 0, 0, 1000);
    }
    nextPeriod(s); // 3.75 s since the last request
    assertThat(a.last().hasAbandonAction()).isTrue();
    assertThat(a.last().getBucketId().getBucketMap()).isEqualTo(API);
    assertThat(s.subscriptions()).isZero();
    int before = a.actions.size();
    nextPeriod(s);
    assertThat(a.actions).hasSize(before); // nothing more for it
    a.report("edge", API, 1, 0, 1000);
    assertThat(rate(a.last())).isPositive();
    assertThat(s.subscriptions()).isEqualTo(1);
  }

  @Test
  void badReportsEndTheStreamWithAMessageNamingTheField() {
    RlqsService s = service();
    assertEnds(s, reports("", usage(API, 1, 0, 1000)), Status.Code.INVALID_ARGUMENT,
        "domain: must not be empty in a stream's first message");
    assertEnds(s, reports("nowhere", usage(API, 1, 0, 1000)), Status.Code.NOT_FOUND,
        "domain: \"nowhere\" is not configured for RLQS (configured: edge, open)");
    assertEnds(s, reports("edge"), Status.Code.INVALID_ARGUMENT, "bucket_quota_usages: must not be empty");
    assertEnds(s, reports("edge", usage(Map.of(), 1, 0, 1000)), Status.Code.INVALID_ARGUMENT,
        "bucket_quota_usages[0].bucket_id.bucket: required, at least one key and value");
    assertEnds(s, reports("edge", usage(API, 1, 0, 1000), usage(Map.of("name", ""), 1, 0, 1000)),
        Status.Code.INVALID_ARGUMENT, "bucket_quota_usages[1].bucket_id.bucket[name]: the value must not be empty");
    assertEnds(s, reports("edge", usage(API, 1, 0, 0)), Status.Code.INVALID_ARGUMENT,
        "bucket_quota_usages[0].time_elapsed: required, must be positive");
    assertEnds(s, reports("edge", BucketQuotaUsage.newBuilder().setBucketId(BucketId.newBuilder().putBucket("a", "b"))
        .build()), Status.Code.INVALID_ARGUMENT, "bucket_quota_usages[0].time_elapsed: required, must be positive");
    // a second domain on one stream
    Client c = new Client().open(s);
    c.report("edge", API, 1, 0, 1000);
    c.report("open", API, 1, 0, 1000);
    assertThat(c.error.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(c.error.getDescription()).isEqualTo("domain: a stream has one domain, \"edge\", got \"open\" (open"
        + " another stream for another domain)");
    // a later message may leave the domain out
    Client d = new Client().open(s);
    d.report("edge", API, 1, 0, 1000);
    d.report("", Map.of("name", "health"), 1, 0, 1000);
    assertThat(d.error).isNull();
    assertThat(rate(d.last())).isEqualTo(-1);
    assertThat(s.streams()).isEqualTo(1); // the failed streams are gone
  }

  private void assertEnds(RlqsService s, RateLimitQuotaUsageReports r, Status.Code code, String message) {
    Client c = new Client().open(s);
    c.in.onNext(r);
    assertThat(c.error).as(message).isNotNull();
    assertThat(c.error.getCode()).isEqualTo(code);
    assertThat(c.error.getDescription()).isEqualTo(message);
    assertThat(c.actions).isEmpty();
    c.in.onNext(reports("edge", usage(API, 1, 0, 1000)));
    assertThat(c.actions).as("nothing after the stream ended").isEmpty();
  }

  @Test
  void streamsAndBucketsAreBounded() {
    RlqsService s = service(2, 2);
    Client a = new Client().open(s);
    new Client().open(s);
    Client third = new Client().open(s);
    assertThat(third.error.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(third.error.getDescription()).isEqualTo("too many streams: 2 are open (at most 2)");
    a.in.onNext(reports("edge", usage(API, 1, 0, 1000), usage(Map.of("name", "health"), 1, 0, 1000),
        usage(Map.of("name", "x"), 1, 0, 1000)));
    assertThat(a.actions).hasSize(3);
    assertThat(a.actions.stream().filter(BucketAction::hasAbandonAction))
        .singleElement().extracting(x -> x.getBucketId().getBucketMap()).isEqualTo(Map.of("name", "x"));
    assertThat(s.subscriptions()).isEqualTo(2);
  }

  @Test
  void closingEndsEveryStreamWithUnavailable() {
    RlqsService s = service();
    Client a = new Client().open(s);
    a.report("edge", API, 1, 0, 1000);
    s.close();
    assertThat(a.error.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    Client late = new Client().open(s);
    assertThat(late.error.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
  }
}
