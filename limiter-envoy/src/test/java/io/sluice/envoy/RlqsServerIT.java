package io.sluice.envoy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Duration;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse.BucketAction;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaServiceGrpc;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports.BucketQuotaUsage;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.envoyproxy.envoy.type.v3.RateLimitStrategy;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.StreamObserver;
import io.sluice.sync.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The quota service (RLQS) of two {@code sluice envoy} replicas on one real {@code redis-server}, on
 * free loopback ports, called by gRPC clients built from Envoy's published stubs (the messages Envoy's
 * {@code rate_limit_quota} filter sends): several streams reporting usage for one bucket are assigned
 * shares that never sum over the limit, a stream that closes frees its share for the others, and bad
 * configuration and requests get clear errors. No timing is asserted: waits are for events, with
 * generous bounds.
 */
class RlqsServerIT {
  static final long LIMIT = 100;
  static final long PERIOD_MILLIS = 1_000;
  static final String RLQS = String.join("\n",
      "assignment_period: 1s",
      "abandon_after: 60s",
      "domains:",
      "  - domain: edge",
      "    buckets:",
      "      - bucket_id: {name: \"*\"}",
      "        rate_limit: {unit: second, requests_per_unit: " + LIMIT + "}",
      "    default:",
      "      rate_limit: {unit: second, requests_per_unit: 0}",
      "");
  static final String RLS = String.join("\n",
      "domain: edge",
      "descriptors:",
      "  - key: api_key",
      "    rate_limit: {unit: minute, requests_per_unit: 5}",
      "");
  /** Buckets no other run of this test used (the store outlives a run by two periods at most, but still). */
  static final String RUN = UUID.randomUUID().toString().substring(0, 8);

  static RedisServer redis;
  static Path dir;
  static RlsServer a;
  static RlsServer b;
  static ManagedChannel toA;
  static ManagedChannel toB;

  @BeforeAll
  static void start(@TempDir Path tmp) throws Exception {
    dir = tmp;
    redis = RedisServer.start();
    Path rlqs = dir.resolve("rlqs.yaml");
    Files.writeString(rlqs, RLQS);
    Path rls = dir.resolve("ratelimit.yaml");
    Files.writeString(rls, RLS);
    // A serves both services on one port; B the quota service alone
    a = RlsServer.start(RlsServer.Settings.builder().config(rls).rlqsConfig(rlqs).port(0).redis(redis.uri()).build());
    b = RlsServer.start(RlsServer.Settings.builder().rlqsConfig(rlqs).port(0).redis(redis.uri()).build());
    toA = channel(a);
    toB = channel(b);
  }

  @AfterAll
  static void stop() throws Exception {
    for (ManagedChannel c : new ManagedChannel[] {toA, toB}) {
      if (c != null) {
        c.shutdownNow();
      }
    }
    for (RlsServer s : new RlsServer[] {a, b}) {
      if (s != null) {
        s.close();
      }
    }
    if (redis != null) {
      redis.close();
    }
  }

  static ManagedChannel channel(RlsServer s) {
    return Grpc.newChannelBuilderForAddress("127.0.0.1", s.port(), InsecureChannelCredentials.create()).build();
  }

  /** An assignment as one client saw it: when it arrived, its rate (0: deny_all) and when it expires. */
  record Seen(long at, long rate, long expires) {
  }

  /** One Envoy: a stream, what it was assigned and when, and how the stream ended. */
  static final class Envoy implements StreamObserver<RateLimitQuotaResponse> {
    final String name;
    final List<Seen> seen = new ArrayList<>();
    final List<BucketAction> actions = new ArrayList<>();
    final CompletableFuture<Status> ended = new CompletableFuture<>();
    volatile long closedAt = Long.MAX_VALUE;
    StreamObserver<RateLimitQuotaUsageReports> out;

    Envoy(String name, ManagedChannel channel) {
      this.name = name;
      this.out = RateLimitQuotaServiceGrpc.newStub(channel).streamRateLimitQuotas(this);
    }

    synchronized void report(String domain, Map<String, String> bucket, long allowed, long denied, long elapsedMillis) {
      out.onNext(RateLimitQuotaUsageReports.newBuilder().setDomain(domain)
          .addBucketQuotaUsages(BucketQuotaUsage.newBuilder().setBucketId(BucketId.newBuilder().putAllBucket(bucket))
              .setNumRequestsAllowed(allowed).setNumRequestsDenied(denied)
              .setTimeElapsed(Duration.newBuilder().setNanos((int) elapsedMillis * 1_000_000)))
          .build());
    }

    synchronized void close() {
      closedAt = System.currentTimeMillis();
      out.onCompleted();
    }

    synchronized long lastRate() {
      return seen.isEmpty() ? -1 : seen.get(seen.size() - 1).rate;
    }

    synchronized List<Seen> seen() {
      return new ArrayList<>(seen);
    }

    @Override
    public synchronized void onNext(RateLimitQuotaResponse r) {
      long now = System.currentTimeMillis();
      for (BucketAction act : r.getBucketActionList()) {
        actions.add(act);
        if (!act.hasQuotaAssignmentAction()) {
          continue;
        }
        RateLimitStrategy s = act.getQuotaAssignmentAction().getRateLimitStrategy();
        long rate;
        if (s.hasTokenBucket()) {
          // the default strategy, the one Envoy's filter enforces: the share as the bucket's size and
          // its fill per unit (a second here); any other shape counts as unbounded, failing the sums
          var tb = s.getTokenBucket();
          boolean shaped = tb.getTokensPerFill().getValue() == tb.getMaxTokens() && tb.getFillInterval().getSeconds() == 1
              && tb.getFillInterval().getNanos() == 0;
          rate = shaped ? tb.getMaxTokens() : Long.MAX_VALUE / 4;
        } else {
          rate = s.getBlanketRule() == RateLimitStrategy.BlanketRule.DENY_ALL ? 0 : Long.MAX_VALUE;
        }
        Duration ttl = act.getQuotaAssignmentAction().getAssignmentTimeToLive();
        // the server's TTL reaches a period's end from when it sent it: from when it arrived, the end
        // seen is later by the trip, so the period's end is found again by rounding down
        long end = now + ttl.getSeconds() * 1000 + ttl.getNanos() / 1_000_000;
        seen.add(new Seen(now, rate, Math.floorDiv(end, PERIOD_MILLIS) * PERIOD_MILLIS));
      }
    }

    @Override
    public void onError(Throwable t) {
      ended.complete(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
      ended.complete(Status.OK);
    }
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 60 s: " + what);
      }
      Thread.sleep(20);
    }
  }

  /**
   * The invariant, checked at every moment an assignment arrived: the assignments live then (each
   * client's latest, before its expiry and before its stream closed) sum to at most the limit.
   */
  static void assertNeverOverTheLimit(List<Envoy> envoys) {
    List<Long> moments = new ArrayList<>();
    for (Envoy e : envoys) {
      e.seen().forEach(s -> moments.add(s.at));
    }
    for (long t : moments) {
      long sum = 0;
      StringBuilder live = new StringBuilder();
      for (Envoy e : envoys) {
        if (t >= e.closedAt) {
          continue;
        }
        Seen latest = null;
        for (Seen s : e.seen()) {
          if (s.at <= t) {
            latest = s;
          }
        }
        if (latest != null && latest.expires > t) {
          sum += latest.rate;
          live.append(' ').append(e.name).append('=').append(latest.rate);
        }
      }
      assertThat(sum).as("assignments live at %d:%s", t, live).isLessThanOrEqualTo(LIMIT);
    }
  }

  /** Reports from each client every 250 ms on one thread, with the demand given, until stopped. */
  static final class Reporter implements AutoCloseable {
    private final Thread thread;
    private volatile boolean running = true;

    Reporter(Map<Envoy, Long> perQuarterSecond, Map<String, String> bucket) {
      thread = new Thread(() -> {
        while (running) {
          perQuarterSecond.forEach((e, n) -> {
            if (e.closedAt == Long.MAX_VALUE) {
              long allowed = Math.min(n, Math.max(0, e.lastRate()) / 4);
              e.report("edge", bucket, allowed, n - allowed, 250);
            }
          });
          try {
            Thread.sleep(250);
          } catch (InterruptedException ex) {
            return;
          }
        }
      }, "rlqs-reporter");
      thread.setDaemon(true);
      thread.start();
    }

    @Override
    public void close() throws InterruptedException {
      running = false;
      thread.join(10_000);
    }
  }

  @Test
  void streamsOnTwoReplicasShareOneBucketAndNeverHoldMoreThanItsLimitTogether() throws Exception {
    Map<String, String> bucket = Map.of("name", "shared-" + RUN);
    Envoy heavy = new Envoy("heavy@a", toA);
    Envoy light = new Envoy("light@a", toA);
    Envoy medium = new Envoy("medium@b", toB);
    List<Envoy> envoys = List.of(heavy, light, medium);
    // per second: 400 (more than the limit), 20 and 60
    try (Reporter r = new Reporter(Map.of(heavy, 100L, light, 5L, medium, 15L), bucket)) {
      await("every stream assigned a share above 0", () -> envoys.stream().allMatch(e -> e.lastRate() > 0));
      // shares settle by demand: the heavy stream gets the most, and each share lasts at most a period
      await("shares by demand", () -> heavy.lastRate() > medium.lastRate() && medium.lastRate() > light.lastRate());
      long settled = System.currentTimeMillis();
      await("five more periods", () -> System.currentTimeMillis() > settled + 5 * PERIOD_MILLIS);
    }
    for (Envoy e : envoys) {
      for (Seen s : e.seen()) {
        assertThat(s.expires - s.at).as("%s: a TTL within a period and a half", e.name)
            .isLessThanOrEqualTo(PERIOD_MILLIS * 3 / 2);
      }
    }
    System.out.println("RlqsServerIT: shares heavy " + heavy.lastRate() + ", medium " + medium.lastRate() + ", light "
        + light.lastRate() + " of " + LIMIT + "; assignments seen " + envoys.stream().mapToInt(e -> e.seen().size()).sum());
    assertNeverOverTheLimit(envoys);
    envoys.forEach(Envoy::close);
  }

  @Test
  void aStreamThatClosesFreesItsShareForTheOtherReplicasStream() throws Exception {
    Map<String, String> bucket = Map.of("name", "freed-" + RUN);
    Envoy first = new Envoy("first@a", toA);
    Envoy second = new Envoy("second@b", toB);
    List<Envoy> envoys = List.of(first, second);
    try (Reporter r = new Reporter(Map.of(first, 100L, second, 100L), bucket)) {
      await("both streams assigned a share", () -> first.lastRate() > 0 && second.lastRate() > 0);
      await("an even split", () -> first.lastRate() == LIMIT / 2 && second.lastRate() == LIMIT / 2);
      first.close();
      assertThat(first.ended.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
      await("the whole limit for the stream left", () -> second.lastRate() == LIMIT);
    }
    assertNeverOverTheLimit(envoys);
    second.close();
  }

  @Test
  void aZeroLimitIsDenyAllAndReportsOfNoRequestsKeepTheShare() throws Exception {
    Envoy e = new Envoy("zero@b", toB);
    e.report("edge", Map.of("other", "x"), 1, 0, 250);
    await("an assignment", () -> e.lastRate() >= 0);
    assertThat(e.lastRate()).isZero();
    BucketAction act = e.actions.get(0);
    assertThat(act.getQuotaAssignmentAction().getRateLimitStrategy().getBlanketRule())
        .isEqualTo(RateLimitStrategy.BlanketRule.DENY_ALL);
    e.close();
  }

  @Test
  void badRequestsEndTheStreamWithAClearError() throws Exception {
    Envoy unknown = new Envoy("unknown", toA);
    unknown.report("nowhere", Map.of("name", "x"), 1, 0, 250);
    Status s = unknown.ended.get(10, TimeUnit.SECONDS);
    assertThat(s.getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(s.getDescription()).isEqualTo("domain: \"nowhere\" is not configured for RLQS (configured: edge)");

    Envoy noTime = new Envoy("no-time", toB);
    synchronized (noTime) {
      noTime.out.onNext(RateLimitQuotaUsageReports.newBuilder().setDomain("edge").addBucketQuotaUsages(
          BucketQuotaUsage.newBuilder().setBucketId(BucketId.newBuilder().putBucket("name", "x"))).build());
    }
    s = noTime.ended.get(10, TimeUnit.SECONDS);
    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).isEqualTo("bucket_quota_usages[0].time_elapsed: required, must be positive");
    assertThat(unknown.actions).isEmpty();
    assertThat(noTime.actions).isEmpty();
  }

  @Test
  void aBadConfigurationIsRefusedAtStartNamingItsLine() throws Exception {
    Path bad = dir.resolve("bad-rlqs.yaml");
    Files.writeString(bad, "domains:\n  - domain: edge\n    buckets:\n      - bucket_id: {name: a}\n"
        + "        rate_limit: {unit: fortnight, requests_per_unit: 3}\n");
    assertThatThrownBy(() -> RlsServer.start(RlsServer.Settings.builder().rlqsConfig(bad).port(0).redis(redis.uri())
        .build())).isInstanceOf(IllegalArgumentException.class).hasMessage(bad + ":5:"
            + " domains[0].buckets[0].rate_limit.unit: must be second, minute, hour or day, got \"fortnight\"");
    assertThatThrownBy(() -> RlsServer.Settings.builder().build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("config: at least one file or directory is needed, or an RLQS configuration");
  }

  /** The RLQS file is reloaded as the RLS files are: a good change applied, a bad one refused with its line. */
  @Test
  void theRlqsFileIsReloadedAndABadOneKeepsTheLastGood() throws Exception {
    Path file = dir.resolve("reloaded-rlqs.yaml");
    Files.writeString(file, "domains:\n  - domain: edge\n    buckets:\n      - bucket_id: {name: a}\n"
        + "        rate_limit: {unit: minute, requests_per_unit: 3}\n");
    try (RlsServer server = RlsServer.start(RlsServer.Settings.builder().rlqsConfig(file).port(0).redis(redis.uri())
        .build())) {
      Files.writeString(file, "domains:\n  - domain: edge\n    buckets:\n      - bucket_id: {name: a}\n"
          + "        rate_limit: {unit: minute, requests_per_unit: 3}\n  - domain: more\n    buckets:\n"
          + "      - bucket_id: {name: b}\n        rate_limit: {unit: second, requests_per_unit: 1}\n");
      server.reloadNow();
      assertThat(server.quotaService().config().domains()).containsExactlyInAnyOrder("edge", "more");
      assertThat(server.reloads()).isEqualTo(1);

      Files.writeString(file, "assignment_period: 9s\ndomains:\n  - domain: edge\n    buckets:\n"
          + "      - bucket_id: {name: a}\n        rate_limit: {unit: minute, requests_per_unit: 3}\n");
      server.reloadNow();
      assertThat(server.configError()).startsWith("period: cannot change from 5s to 9s without a restart");
      assertThat(server.quotaService().config().domains()).containsExactlyInAnyOrder("edge", "more");
      Files.writeString(file, "domains:\n  - domain: edge\n    buckets:\n      - bucket_id: {name: a}\n"
          + "        rate_limit: {unit: fortnight, requests_per_unit: 3}\n");
      server.reloadNow();
      assertThat(server.configError()).startsWith(file + ":5: domains[0].buckets[0].rate_limit.unit: must be");
      assertThat(server.reloads()).isEqualTo(1);
    }
  }

  @Test
  void bothServicesOnOnePortWithHealthAndReflection() throws Exception {
    // RLS still answers on the replica serving both
    RateLimitResponse rls = RateLimitServiceGrpc.newBlockingStub(toA).withDeadlineAfter(5, TimeUnit.SECONDS)
        .shouldRateLimit(RateLimitRequest.newBuilder().setDomain("edge").addDescriptors(RateLimitDescriptor.newBuilder()
            .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("api_key").setValue("k-" + RUN))).build());
    assertThat(rls.getOverallCode()).isEqualTo(RateLimitResponse.Code.OK);
    for (ManagedChannel ch : List.of(toA, toB)) {
      HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS);
      assertThat(health.check(HealthCheckRequest.newBuilder().setService(RateLimitQuotaServiceGrpc.SERVICE_NAME)
          .build()).getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
      assertThat(health.check(HealthCheckRequest.newBuilder().build()).getStatus())
          .isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
      ServerReflectionResponse list = RlsServerIT.reflect(ch, ServerReflectionRequest.newBuilder().setListServices("").build());
      assertThat(list.getListServicesResponse().getServiceList().stream().map(ServiceResponse::getName)
          .collect(Collectors.toList())).contains("envoy.service.rate_limit_quota.v3.RateLimitQuotaService",
              "envoy.service.ratelimit.v3.RateLimitService", "grpc.health.v1.Health");
      ServerReflectionResponse file = RlsServerIT.reflect(ch, ServerReflectionRequest.newBuilder()
          .setFileContainingSymbol("envoy.service.rate_limit_quota.v3.RateLimitQuotaService").build());
      assertThat(file.getFileDescriptorResponse().getFileDescriptorProtoCount()).isPositive();
    }
  }
}
