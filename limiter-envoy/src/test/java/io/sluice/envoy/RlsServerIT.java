package io.sluice.envoy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.StreamObserver;
import io.sluice.sync.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.StoreKeys;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The RLS server on a free loopback port over a real {@code redis-server}, called by a real gRPC
 * client built from Envoy's published stubs (the same messages Envoy sends).
 */
class RlsServerIT {
  static final String CONFIG = String.join("\n",
      "domain: edge",
      "descriptors:",
      "  - key: api_key",
      "    rate_limit:",
      "      unit: minute",
      "      requests_per_unit: 5",
      "  - key: tenant",
      "    value: acme",
      "    descriptors:",
      "      - key: user",
      "        rate_limit:",
      "          unit: hour",
      "          requests_per_unit: 2",
      "  - key: health_check",
      "    rate_limit:",
      "      unlimited: true",
      "  - key: trial",
      "    shadow_mode: true",
      "    rate_limit:",
      "      unit: hour",
      "      requests_per_unit: 1",
      "  - key: upload",
      "    rate_limit:",
      "      unit: hour",
      "      requests_per_unit: 10",
      "");

  static RedisServer redis;
  static Path configFile;
  static RlsServer server;
  static ManagedChannel channel;
  static RateLimitServiceGrpc.RateLimitServiceBlockingStub client;
  static final List<AutoCloseable> closing = new ArrayList<>();
  /** Keys no other run of this test used: the store outlives nothing, but windows are long. */
  static final String RUN = UUID.randomUUID().toString().substring(0, 8);

  @BeforeAll
  static void start(@TempDir Path dir) throws Exception {
    redis = RedisServer.start();
    configFile = dir.resolve("ratelimit.yaml");
    Files.writeString(configFile, CONFIG);
    server = RlsServer.start(RlsServer.Settings.builder().config(configFile).port(0).redis(redis.uri()).build());
    channel = channel(server);
    client = RateLimitServiceGrpc.newBlockingStub(channel);
  }

  @AfterAll
  static void stop() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
    if (channel != null) {
      channel.shutdownNow();
    }
    if (server != null) {
      server.close();
    }
    if (redis != null) {
      redis.close();
    }
  }

  static ManagedChannel channel(RlsServer s) {
    ManagedChannel ch = Grpc.newChannelBuilderForAddress("127.0.0.1", s.port(), InsecureChannelCredentials.create())
        .build();
    return ch;
  }

  static RateLimitResponse call(RateLimitServiceGrpc.RateLimitServiceBlockingStub stub, RateLimitRequest request) {
    return stub.withDeadlineAfter(5, TimeUnit.SECONDS).shouldRateLimit(request);
  }

  static RateLimitDescriptor descriptor(String... kv) {
    RateLimitDescriptor.Builder d = RateLimitDescriptor.newBuilder();
    for (int i = 0; i < kv.length; i += 2) {
      d.addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(kv[i]).setValue(kv[i + 1]));
    }
    return d.build();
  }

  static RateLimitRequest request(RateLimitDescriptor... ds) {
    return RateLimitRequest.newBuilder().setDomain("edge").addAllDescriptors(List.of(ds)).build();
  }

  /** Waits out the last 5 s of the current minute, so that a test's requests fall in one window. */
  static void awayFromTheMinutesEnd() throws InterruptedException {
    long left = 60_000 - System.currentTimeMillis() % 60_000;
    if (left < 5_000) {
      Thread.sleep(left + 100);
    }
  }

  @Test
  void fivePerMinuteAdmitsExactlyFiveThenIsOverLimit() throws Exception {
    awayFromTheMinutesEnd();
    RateLimitRequest r = request(descriptor("api_key", "five-" + RUN));
    for (int i = 1; i <= 5; i++) {
      RateLimitResponse ok = call(client, r);
      assertThat(ok.getOverallCode()).as("request %d", i).isEqualTo(Code.OK);
      assertThat(ok.getStatuses(0).getLimitRemaining()).isEqualTo(5 - i);
    }
    for (int i = 0; i < 3; i++) {
      RateLimitResponse over = call(client, r);
      assertThat(over.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      RateLimitResponse.DescriptorStatus st = over.getStatuses(0);
      assertThat(st.getCode()).isEqualTo(Code.OVER_LIMIT);
      assertThat(st.getLimitRemaining()).isZero();
      assertThat(st.getCurrentLimit().getRequestsPerUnit()).isEqualTo(5);
      assertThat(st.getCurrentLimit().getUnit()).isEqualTo(RateLimitResponse.RateLimit.Unit.MINUTE);
      // until the minute's end: what the wall clock says is left of it, give or take a second
      double reset = st.getDurationUntilReset().getSeconds() + st.getDurationUntilReset().getNanos() / 1e9;
      double expected = (60_000 - System.currentTimeMillis() % 60_000) / 1000.0;
      assertThat(reset).isBetween(0.0, 60.0).isCloseTo(expected, org.assertj.core.data.Offset.offset(1.5));
      assertThat(over.getResponseHeadersToAddList()).extracting(h -> h.getKey())
          .contains("Retry-After", "RateLimit-Policy", "RateLimit", "X-RateLimit-Remaining");
    }
    // the counter in Redis: <prefix>:{<n>:rls-5-per-minute:<domain and entries, length-prefixed>}
    String key = "4:edge|7:api_key=" + ("five-" + RUN).length() + ":five-" + RUN;
    assertThat(key).isEqualTo(RlsLimiters.key("edge", r.getDescriptors(0).getEntriesList()));
    byte[] counter = StoreKeys.counterKey("sluice", RlsLimiters.limit(5, RlsUnit.MINUTE), key);
    assertThat(new String(counter, StandardCharsets.UTF_8)).isEqualTo("sluice:{16:rls-5-per-minute:" + key + "}");
    RedisClient lettuce = RedisClient.create(redis.uri());
    try (StatefulRedisConnection<byte[], byte[]> c = lettuce.connect(ByteArrayCodec.INSTANCE)) {
      assertThat(c.sync().exists(counter)).isEqualTo(1L);
    } finally {
      lettuce.shutdown();
    }
  }

  @Test
  void nestedDescriptorsCountPerLeafValue() {
    RateLimitRequest u1 = request(descriptor("tenant", "acme", "user", "u1-" + RUN));
    RateLimitRequest u2 = request(descriptor("tenant", "acme", "user", "u2-" + RUN));
    assertThat(call(client, u1).getOverallCode()).isEqualTo(Code.OK);
    assertThat(call(client, u1).getOverallCode()).isEqualTo(Code.OK);
    assertThat(call(client, u1).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    RateLimitResponse other = call(client, u2);
    assertThat(other.getOverallCode()).isEqualTo(Code.OK);
    assertThat(other.getStatuses(0).getLimitRemaining()).isEqualTo(1);
    // the tenant alone, or another tenant, has no limit
    RateLimitResponse none = call(client, request(descriptor("tenant", "acme"), descriptor("tenant", "other", "user", "u1")));
    assertThat(none.getOverallCode()).isEqualTo(Code.OK);
    assertThat(none.getStatusesList()).allSatisfy(s -> assertThat(s.hasCurrentLimit()).isFalse());
  }

  @Test
  void unlimitedIsAlwaysOk() {
    for (int i = 0; i < 20; i++) {
      RateLimitResponse r = call(client, request(descriptor("health_check", "probe")));
      assertThat(r.getOverallCode()).isEqualTo(Code.OK);
      assertThat(Integer.toUnsignedLong(r.getStatuses(0).getLimitRemaining())).isEqualTo(4294967295L);
    }
  }

  @Test
  void shadowModeAnswersOkAndReportsTheBreach() {
    RateLimitRequest r = request(descriptor("trial", "t-" + RUN), descriptor("api_key", "shadow-" + RUN));
    RateLimitResponse first = call(client, r);
    assertThat(first.getOverallCode()).isEqualTo(Code.OK);
    assertThat(first.getStatuses(0).getCode()).isEqualTo(Code.OK);
    RateLimitResponse second = call(client, r);
    assertThat(second.getOverallCode()).isEqualTo(Code.OK);
    assertThat(second.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(second.getStatuses(0).getLimitRemaining()).isZero();
    assertThat(second.getStatuses(1).getCode()).isEqualTo(Code.OK);
  }

  @Test
  void hitsAddendIsTheCost() {
    RateLimitRequest four = request(descriptor("upload", "big-" + RUN)).toBuilder().setHitsAddend(4).build();
    assertThat(call(client, four).getStatuses(0).getLimitRemaining()).isEqualTo(6);
    assertThat(call(client, four).getStatuses(0).getLimitRemaining()).isEqualTo(2);
    RateLimitResponse over = call(client, four);
    assertThat(over.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    RateLimitRequest two = four.toBuilder().setHitsAddend(2).build();
    RateLimitResponse last = call(client, two);
    assertThat(last.getOverallCode()).isEqualTo(Code.OK);
    assertThat(last.getStatuses(0).getLimitRemaining()).isZero();
  }

  @Test
  void badRequestsAreInvalidArguments() {
    assertThatThrownBy(() -> call(client, RateLimitRequest.newBuilder().setDomain("edge").build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).isEqualTo("descriptors: must not be empty");
        });
    // and the server keeps serving
    assertThat(call(client, request(descriptor("health_check", "x"))).getOverallCode()).isEqualTo(Code.OK);
  }

  /**
   * Two servers, each with its own connection, on one Redis: one limit between them. Exact mode
   * (batch size 1, one script per decision) makes a small limit exact across servers; batched servers
   * never pass it together either, but the claims a server holds can leave the other short of it.
   */
  @Test
  void twoServersOnOneRedisEnforceOneLimitTogether() throws Exception {
    RlsServer a = RlsServer.start(RlsServer.Settings.builder().config(configFile).port(0).redis(redis.uri())
        .batchSize(1).build());
    closing.add(a);
    RlsServer b = RlsServer.start(RlsServer.Settings.builder().config(configFile).port(0).redis(redis.uri())
        .batchSize(1).build());
    closing.add(b);
    ManagedChannel ca = channel(a);
    ManagedChannel cb = channel(b);
    closing.add(ca::shutdownNow);
    closing.add(cb::shutdownNow);
    List<RateLimitServiceGrpc.RateLimitServiceBlockingStub> stubs =
        List.of(RateLimitServiceGrpc.newBlockingStub(ca), RateLimitServiceGrpc.newBlockingStub(cb));
    awayFromTheMinutesEnd();
    RateLimitRequest r = request(descriptor("api_key", "shared-" + RUN));
    List<Code> codes = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      codes.add(call(stubs.get(i % 2), r).getOverallCode());
    }
    assertThat(codes.subList(0, 5)).containsOnly(Code.OK);
    assertThat(codes.subList(5, 12)).containsOnly(Code.OVER_LIMIT);
    assertThat(a.limiters()).extracting(SyncedLimiter::batchSize).containsOnly(1L);

    // batched (the default): together never over the limit
    RlsServer c = RlsServer.start(RlsServer.Settings.builder().config(configFile).port(0).redis(redis.uri()).build());
    closing.add(c);
    ManagedChannel cc = channel(c);
    closing.add(cc::shutdownNow);
    List<RateLimitServiceGrpc.RateLimitServiceBlockingStub> batched =
        List.of(client, RateLimitServiceGrpc.newBlockingStub(cc));
    awayFromTheMinutesEnd();
    RateLimitRequest rb = request(descriptor("api_key", "shared-batched-" + RUN));
    long admitted = 0;
    for (int i = 0; i < 20; i++) {
      if (call(batched.get(i % 2), rb).getOverallCode() == Code.OK) {
        admitted++;
      }
    }
    System.out.println("RlsServerIT: two batched servers, a limit of 5, 20 calls alternating: " + admitted + " admitted");
    assertThat(admitted).isBetween(1L, 5L);
  }

  @Test
  void healthAndReflectionAnswer() throws Exception {
    HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS);
    assertThat(health.check(HealthCheckRequest.newBuilder().build()).getStatus())
        .isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
    assertThat(health.check(HealthCheckRequest.newBuilder().setService(RateLimitServiceGrpc.SERVICE_NAME).build())
        .getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);

    ServerReflectionResponse list = reflect(channel, ServerReflectionRequest.newBuilder().setListServices("").build());
    assertThat(list.getListServicesResponse().getServiceList().stream().map(ServiceResponse::getName)
        .collect(Collectors.toList()))
        .contains("envoy.service.ratelimit.v3.RateLimitService", "grpc.health.v1.Health");
    ServerReflectionResponse file = reflect(channel, ServerReflectionRequest.newBuilder()
        .setFileContainingSymbol("envoy.service.ratelimit.v3.RateLimitService").build());
    assertThat(file.getFileDescriptorResponse().getFileDescriptorProtoCount()).isPositive();
  }

  /** One server reflection request on {@code ch} and its answer (RlqsServerIT asks through it too). */
  static ServerReflectionResponse reflect(ManagedChannel ch, ServerReflectionRequest request) throws Exception {
    CompletableFuture<ServerReflectionResponse> answer = new CompletableFuture<>();
    StreamObserver<ServerReflectionRequest> out = ServerReflectionGrpc.newStub(ch)
        .withDeadlineAfter(5, TimeUnit.SECONDS)
        .serverReflectionInfo(new StreamObserver<>() {
          @Override
          public void onNext(ServerReflectionResponse value) {
            answer.complete(value);
          }

          @Override
          public void onError(Throwable t) {
            answer.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {
          }
        });
    out.onNext(request);
    ServerReflectionResponse r = answer.get(5, TimeUnit.SECONDS);
    out.onCompleted();
    return r;
  }

  /**
   * Bounded concurrency and deadlines, end to end: one worker, a queue of one, and a Redis that stops
   * answering (SIGSTOP). The first call holds the worker while it waits for the store; a call with a
   * short deadline waits in the queue, its client gets DEADLINE_EXCEEDED, and the server drops it
   * unevaluated when its turn comes; a call that finds the queue full is refused at once.
   */
  @Test
  void aFullQueueRefusesAndACallPastItsDeadlineIsDropped() throws Exception {
    try (RedisServer frozen = RedisServer.start();
        RlsServer s = RlsServer.start(RlsServer.Settings.builder().config(configFile).port(0).redis(frozen.uri())
            .batchSize(1).threads(1).queue(1).claimTimeout(java.time.Duration.ofSeconds(1))
            .redisTimeout(java.time.Duration.ofSeconds(2)).build())) {
      ManagedChannel ch = channel(s);
      closing.add(ch::shutdownNow);
      RateLimitServiceGrpc.RateLimitServiceBlockingStub stub = RateLimitServiceGrpc.newBlockingStub(ch);
      RateLimitServiceGrpc.RateLimitServiceFutureStub async = RateLimitServiceGrpc.newFutureStub(ch);
      RateLimitRequest r = request(descriptor("upload", "queue-" + RUN));
      assertThat(call(stub, r).getOverallCode()).isEqualTo(Code.OK); // connected, limiter built
      frozen.freeze();
      try {
        var first = async.withDeadlineAfter(10, TimeUnit.SECONDS).shouldRateLimit(r);
        waitFor(() -> s.activeCalls() == 1);
        var late = async.withDeadlineAfter(50, TimeUnit.MILLISECONDS).shouldRateLimit(r);
        waitFor(() -> s.queuedCalls() == 1);
        assertThatThrownBy(() -> call(stub, r)).isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
        assertThat(s.service().rejectedCalls()).isEqualTo(1);
        assertThatThrownBy(() -> late.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(StatusRuntimeException.class)
            .satisfies(e -> assertThat(Status.fromThrowable(e.getCause()).getCode())
                .isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        assertThat(first.isDone()).as("the first call still waits for the store").isFalse();
        first.get(10, TimeUnit.SECONDS); // the failure policy decides once the claim timeout passes
      } finally {
        frozen.thaw();
      }
      waitFor(() -> s.service().expiredCalls() == 1);
      assertThat(call(stub, r).getOverallCode()).isEqualTo(Code.OK);
      ch.shutdownNow();
    }
  }

  static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
    long until = System.nanoTime() + 5_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > until) {
        throw new AssertionError("condition not met within 5 s");
      }
      Thread.sleep(2);
    }
  }

  /** A changed file is used without a restart; a broken one is refused and the last good one stays. */
  @Test
  void theConfigurationIsReloadedOnChange(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("reload.yaml");
    Files.writeString(file, "domain: reload\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 1}\n");
    RlsServer s = RlsServer.start(RlsServer.Settings.builder().config(file).port(0).redis(redis.uri())
        .reloadInterval(java.time.Duration.ofMillis(50)).build());
    closing.add(s);
    ManagedChannel ch = channel(s);
    closing.add(ch::shutdownNow);
    RateLimitServiceGrpc.RateLimitServiceBlockingStub stub = RateLimitServiceGrpc.newBlockingStub(ch);
    RateLimitRequest r = RateLimitRequest.newBuilder().setDomain("reload").addDescriptors(descriptor("k", "v-" + RUN)).build();
    assertThat(call(stub, r).getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(1);

    Files.writeString(file, "domain: reload\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 3}\n");
    long until = System.nanoTime() + 5_000_000_000L;
    while (s.reloads() == 0 && System.nanoTime() < until) {
      Thread.sleep(20);
    }
    assertThat(s.reloads()).isEqualTo(1);
    RateLimitResponse three = call(stub, r);
    assertThat(three.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(3);
    assertThat(three.getStatuses(0).getLimitRemaining()).isEqualTo(2);

    Files.writeString(file, "domain: reload\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: many}\n");
    until = System.nanoTime() + 5_000_000_000L;
    while (s.configError() == null && System.nanoTime() < until) {
      Thread.sleep(20);
    }
    assertThat(s.configError()).isEqualTo(file + ":4: descriptors[0].rate_limit.requests_per_unit: must be a whole"
        + " number from 0 to 2147483647, got \"many\"");
    assertThat(call(stub, r).getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(3);
  }

  @Test
  void aBadConfigurationFileStopsTheStartWithItsLine(@TempDir Path dir) throws Exception {
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "domain: x\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: weekly\n"
        + "      requests_per_unit: 1\n");
    assertThatThrownBy(() -> RlsServer.start(RlsServer.Settings.builder().config(bad).port(0).redis(redis.uri()).build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(bad + ":5: descriptors[0].rate_limit.unit: must be second, minute, hour or day, got \"weekly\"");
  }
}
