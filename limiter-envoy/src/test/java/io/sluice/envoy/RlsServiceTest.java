package io.sluice.envoy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.UInt64Value;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.type.v3.RateLimitUnit;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.sluice.sync.SyncConfig;
import io.sluice.sync.sim.MemoryStore;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The service's answers, decided through real SyncedLimiters on the in-memory store. */
class RlsServiceTest {
  static final String CONFIG = String.join("\n",
      "domain: app",
      "descriptors:",
      "  - key: api_key",
      "    rate_limit: {unit: minute, requests_per_unit: 5}",
      "  - key: tenant",
      "    value: acme",
      "    descriptors:",
      "      - key: user",
      "        rate_limit: {unit: hour, requests_per_unit: 3}",
      "  - key: internal",
      "    rate_limit: {unlimited: true}",
      "  - key: trial",
      "    shadow_mode: true",
      "    rate_limit: {unit: minute, requests_per_unit: 2}",
      "  - key: banned",
      "    rate_limit: {unit: second, requests_per_unit: 0}",
      "  - key: read",
      "    rate_limit: {unit: second, requests_per_unit: 4, name: reads}",
      "  - key: vip_read",
      "    rate_limit:",
      "      unit: second",
      "      requests_per_unit: 50",
      "      replaces: [{name: reads}]",
      "");

  final MemoryStore store = new MemoryStore();
  final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  RlsService service(ExecutorService executor) {
    RlsLimiters limiters = new RlsLimiters(store, SyncConfig.custom().nodeId("test-node").build(), 8);
    closing.add(limiters);
    closing.add(executor::shutdownNow);
    return new RlsService(RlsConfig.parse("app.yaml", CONFIG), limiters, executor, true, System::currentTimeMillis);
  }

  RlsService service() {
    return service(Executors.newSingleThreadExecutor());
  }

  static RateLimitDescriptor descriptor(String... kv) {
    RateLimitDescriptor.Builder d = RateLimitDescriptor.newBuilder();
    for (int i = 0; i < kv.length; i += 2) {
      d.addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(kv[i]).setValue(kv[i + 1]));
    }
    return d.build();
  }

  static RateLimitRequest request(RateLimitDescriptor... ds) {
    return RateLimitRequest.newBuilder().setDomain("app").addAllDescriptors(List.of(ds)).build();
  }

  static Map<String, String> headers(RateLimitResponse r) {
    Map<String, String> out = new LinkedHashMap<>();
    for (HeaderValue h : r.getResponseHeadersToAddList()) {
      out.put(h.getKey(), h.getValue());
    }
    return out;
  }

  @Test
  void fivePerMinuteAdmitsFiveThenIsOverWithNothingRemaining() {
    RlsService s = service();
    for (int i = 1; i <= 5; i++) {
      RateLimitResponse r = s.decide(request(descriptor("api_key", "k1")));
      assertThat(r.getOverallCode()).as("request %d", i).isEqualTo(Code.OK);
      RateLimitResponse.DescriptorStatus st = r.getStatuses(0);
      assertThat(st.getCode()).isEqualTo(Code.OK);
      assertThat(st.getCurrentLimit().getRequestsPerUnit()).isEqualTo(5);
      assertThat(st.getCurrentLimit().getUnit()).isEqualTo(RateLimitResponse.RateLimit.Unit.MINUTE);
      assertThat(st.getLimitRemaining()).isEqualTo(5 - i);
    }
    RateLimitResponse over = s.decide(request(descriptor("api_key", "k1")));
    assertThat(over.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(over.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(over.getStatuses(0).getLimitRemaining()).isZero();
    long reset = over.getStatuses(0).getDurationUntilReset().getSeconds();
    assertThat(reset).isBetween(0L, 60L);
    Map<String, String> h = headers(over);
    assertThat(h).containsEntry("RateLimit-Policy", "\"rls-5-per-minute\";q=5;w=60")
        .containsEntry("X-RateLimit-Limit", "5").containsEntry("X-RateLimit-Remaining", "0")
        .containsKey("Retry-After");
    assertThat(h.get("RateLimit")).startsWith("\"rls-5-per-minute\";r=0;t=");
    // another key of the same descriptor has its own counter
    assertThat(s.decide(request(descriptor("api_key", "k2"))).getOverallCode()).isEqualTo(Code.OK);
  }

  @Test
  void everyDescriptorIsEvaluatedAndTheStatusesKeepTheRequestsOrder() {
    RlsService s = service();
    RateLimitResponse r = null;
    for (int i = 0; i < 4; i++) {
      r = s.decide(request(descriptor("unknown", "x"), descriptor("tenant", "acme", "user", "u1"),
          descriptor("api_key", "k9")));
    }
    // the nested limit (3 an hour) is over on the 4th; the others keep counting
    assertThat(r.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(r.getStatusesList()).extracting(RateLimitResponse.DescriptorStatus::getCode)
        .containsExactly(Code.OK, Code.OVER_LIMIT, Code.OK);
    assertThat(r.getStatuses(0).hasCurrentLimit()).isFalse();
    assertThat(r.getStatuses(1).getCurrentLimit().getRequestsPerUnit()).isEqualTo(3);
    assertThat(r.getStatuses(2).getLimitRemaining()).isEqualTo(1); // 4 of 5 counted: denied requests count elsewhere
    // a tenant the file does not name has no limit
    assertThat(s.decide(request(descriptor("tenant", "other", "user", "u1"))).getStatuses(0).hasCurrentLimit()).isFalse();
  }

  @Test
  void unlimitedShadowAndZeroLimits() {
    RlsService s = service();
    RateLimitResponse unlimited = s.decide(request(descriptor("internal", "x")));
    assertThat(unlimited.getOverallCode()).isEqualTo(Code.OK);
    assertThat(Integer.toUnsignedLong(unlimited.getStatuses(0).getLimitRemaining())).isEqualTo(4294967295L);
    assertThat(unlimited.getResponseHeadersToAddList()).isEmpty();

    for (int i = 0; i < 2; i++) {
      assertThat(s.decide(request(descriptor("trial", "t"))).getStatuses(0).getCode()).isEqualTo(Code.OK);
    }
    RateLimitResponse shadow = s.decide(request(descriptor("trial", "t")));
    assertThat(shadow.getOverallCode()).isEqualTo(Code.OK);
    assertThat(shadow.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(shadow.getStatuses(0).getLimitRemaining()).isZero();
    assertThat(shadow.getResponseHeadersToAddList()).isEmpty(); // a dry run changes nothing clients see

    RateLimitResponse banned = s.decide(request(descriptor("banned", "1.2.3.4")));
    assertThat(banned.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(banned.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isZero();
  }

  @Test
  void hitsAddendIsTheCostAndZeroMeansOne() {
    RlsService s = service();
    RateLimitRequest three = request(descriptor("api_key", "h")).toBuilder().setHitsAddend(3).build();
    assertThat(s.decide(three).getStatuses(0).getLimitRemaining()).isEqualTo(2);
    RateLimitRequest zero = request(descriptor("api_key", "h")).toBuilder().setHitsAddend(0).build();
    assertThat(s.decide(zero).getStatuses(0).getLimitRemaining()).isEqualTo(1);
    // 3 more do not fit in the 1 left: over, and nothing counted
    RateLimitResponse over = s.decide(three);
    assertThat(over.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    // the descriptor's own hits_addend wins over the request's
    RateLimitDescriptor one = descriptor("api_key", "h").toBuilder().setHitsAddend(UInt64Value.of(1)).build();
    RateLimitResponse last = s.decide(RateLimitRequest.newBuilder().setDomain("app").addDescriptors(one)
        .setHitsAddend(3).build());
    assertThat(last.getOverallCode()).isEqualTo(Code.OK);
    assertThat(last.getStatuses(0).getLimitRemaining()).isZero();
    // a cost above the whole limit is over at once
    RateLimitRequest six = request(descriptor("api_key", "other")).toBuilder().setHitsAddend(6).build();
    assertThat(s.decide(six).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(s.decide(request(descriptor("api_key", "other"))).getStatuses(0).getLimitRemaining()).isEqualTo(4);
  }

  /**
   * A descriptor's own hits_addend of 0 is set on purpose (UInt64Value, unlike the request's uint32):
   * envoyproxy/ratelimit reads it as "check only, add no hits" (utils.GetHitsAddends), which Envoy's
   * hits_addend formatters and check-then-report setups rely on; it must not spend a permit.
   */
  @Test
  void aDescriptorsOwnHitsAddendOfZeroChecksWithoutCounting() {
    RlsService s = service();
    RateLimitDescriptor check = descriptor("api_key", "c0").toBuilder().setHitsAddend(UInt64Value.of(0)).build();
    for (int i = 0; i < 7; i++) {
      RateLimitResponse r = s.decide(request(check));
      assertThat(r.getOverallCode()).as("check %d", i).isEqualTo(Code.OK);
      assertThat(r.getStatuses(0).getCode()).isEqualTo(Code.OK);
    }
    // nothing was spent: all 5 are there
    assertThat(s.decide(request(descriptor("api_key", "c0"))).getStatuses(0).getLimitRemaining()).isEqualTo(4);
    // a request-level hits_addend of 0 still means 1 (its default)
    RateLimitRequest zero = request(descriptor("api_key", "c0")).toBuilder().setHitsAddend(0).build();
    assertThat(s.decide(zero).getStatuses(0).getLimitRemaining()).isEqualTo(3);
  }

  @Test
  void theRequestsOwnLimitOverridesTheConfiguration() {
    RlsService s = service();
    RateLimitDescriptor twoPerSecond = descriptor("api_key", "o").toBuilder()
        .setLimit(RateLimitDescriptor.RateLimitOverride.newBuilder().setRequestsPerUnit(2).setUnit(RateLimitUnit.SECOND))
        .build();
    RateLimitResponse r = s.decide(request(twoPerSecond));
    assertThat(r.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(2);
    assertThat(r.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(RateLimitResponse.RateLimit.Unit.SECOND);
    // even for a descriptor the file has no limit for
    RateLimitDescriptor unconfigured = descriptor("nothing", "here").toBuilder()
        .setLimit(RateLimitDescriptor.RateLimitOverride.newBuilder().setRequestsPerUnit(1).setUnit(RateLimitUnit.HOUR))
        .build();
    assertThat(s.decide(request(unconfigured)).getOverallCode()).isEqualTo(Code.OK);
    assertThat(s.decide(request(unconfigured)).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    RateLimitDescriptor monthly = descriptor("api_key", "o").toBuilder()
        .setLimit(RateLimitDescriptor.RateLimitOverride.newBuilder().setRequestsPerUnit(2).setUnit(RateLimitUnit.MONTH))
        .build();
    RateLimitDescriptor huge = descriptor("api_key", "o").toBuilder()
        .setLimit(RateLimitDescriptor.RateLimitOverride.newBuilder().setRequestsPerUnit(-1).setUnit(RateLimitUnit.SECOND))
        .build();
    assertThatThrownBy(() -> s.decide(request(huge))).isInstanceOfSatisfying(StatusRuntimeException.class, e ->
        assertThat(e.getStatus().getDescription()).isEqualTo(
            "descriptors[0].limit.requests_per_unit: at most 2147483647, got 4294967295"));
    assertThatThrownBy(() -> s.decide(request(monthly)))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).isEqualTo(
              "descriptors[0].limit.unit: must be SECOND, MINUTE, HOUR or DAY, got MONTH");
        });
  }

  @Test
  void aReplacedLimitIsNotEvaluated() {
    RlsService s = service();
    for (int i = 0; i < 10; i++) {
      RateLimitResponse r = s.decide(request(descriptor("read", "r"), descriptor("vip_read", "r")));
      assertThat(r.getOverallCode()).isEqualTo(Code.OK);
      assertThat(r.getStatuses(0).hasCurrentLimit()).isFalse();
    }
    // the replaced limit's counter was left alone: its 4 are all there
    assertThat(s.decide(request(descriptor("read", "r"))).getStatuses(0).getLimitRemaining()).isEqualTo(3);
  }

  @Test
  void badRequestsNameTheField() {
    RlsService s = service();
    Map<RateLimitRequest, String> cases = Map.of(
        RateLimitRequest.newBuilder().addDescriptors(descriptor("a", "b")).build(), "domain: must not be empty",
        RateLimitRequest.newBuilder().setDomain("app").build(), "descriptors: must not be empty",
        request(RateLimitDescriptor.getDefaultInstance()), "descriptors[0].entries: must not be empty",
        request(descriptor("a", "b"), descriptor("", "x")), "descriptors[1].entries[0].key: must not be empty");
    cases.forEach((req, message) -> assertThatThrownBy(() -> s.decide(req))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).isEqualTo(message);
        }));
    // an unknown domain has no limits: every descriptor OK
    RateLimitResponse r = s.decide(request(descriptor("api_key", "k")).toBuilder().setDomain("nope").build());
    assertThat(r.getOverallCode()).isEqualTo(Code.OK);
    assertThat(r.getStatuses(0).hasCurrentLimit()).isFalse();
  }

  @Test
  void distinctLimitsAreBounded() {
    RlsLimiters limiters = new RlsLimiters(store, SyncConfig.custom().nodeId("n").build(), 2);
    closing.add(limiters);
    RlsService s = new RlsService(RlsConfig.parse("app.yaml", CONFIG), limiters, Executors.newSingleThreadExecutor(),
        true, System::currentTimeMillis);
    for (int rpu = 1; rpu <= 2; rpu++) {
      s.decide(request(descriptor("x", "y").toBuilder().setLimit(RateLimitDescriptor.RateLimitOverride.newBuilder()
          .setRequestsPerUnit(rpu).setUnit(RateLimitUnit.SECOND)).build()));
    }
    RateLimitRequest third = request(descriptor("api_key", "z"), descriptor("x", "y").toBuilder()
        .setLimit(RateLimitDescriptor.RateLimitOverride.newBuilder().setRequestsPerUnit(3).setUnit(RateLimitUnit.SECOND))
        .build());
    // the configured api_key limit gets its limiter beyond the bound; the third override does not
    assertThatThrownBy(() -> s.decide(third)).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertThat(e.getStatus().getDescription()).isEqualTo("descriptors[1]: too many distinct limits: 3 are in use,"
          + " rls-3-per-second would be one more (--max-limits 2)");
    });
    assertThat(limiters.size()).isEqualTo(3);
  }

  /**
   * The bound on distinct limits is there against requests' overrides; the configuration's own limits
   * (checked against the bound at start and at every reload) must never be refused because overrides,
   * or the limits of an earlier configuration, took the places first.
   */
  @Test
  void overridesDoNotLockTheConfiguredLimitsOut() {
    String two = String.join("\n",
        "domain: app",
        "descriptors:",
        "  - key: api_key",
        "    rate_limit: {unit: minute, requests_per_unit: 5}",
        "  - key: user",
        "    rate_limit: {unit: hour, requests_per_unit: 3}",
        "");
    RlsLimiters limiters = new RlsLimiters(store, SyncConfig.custom().nodeId("n").build(), 2);
    closing.add(limiters);
    RlsService s = new RlsService(RlsConfig.parse("app.yaml", two), limiters, Executors.newSingleThreadExecutor(),
        true, System::currentTimeMillis);
    // two requests' overrides first: the bound is reached
    for (int rpu = 1; rpu <= 2; rpu++) {
      s.decide(request(descriptor("x", "y").toBuilder().setLimit(RateLimitDescriptor.RateLimitOverride.newBuilder()
          .setRequestsPerUnit(rpu).setUnit(RateLimitUnit.SECOND)).build()));
    }
    // the configured limits still decide
    RateLimitResponse r = s.decide(request(descriptor("api_key", "k"), descriptor("user", "u")));
    assertThat(r.getOverallCode()).isEqualTo(Code.OK);
    assertThat(r.getStatuses(0).getLimitRemaining()).isEqualTo(4);
    assertThat(r.getStatuses(1).getLimitRemaining()).isEqualTo(2);
    // a reload to two other limits: those are served too, though the old ones' limiters are still there
    s.config(RlsConfig.parse("app.yaml", two.replace("5}", "7}").replace("3}", "9}")));
    RateLimitResponse after = s.decide(request(descriptor("api_key", "k"), descriptor("user", "u")));
    assertThat(after.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(7);
    assertThat(after.getStatuses(1).getCurrentLimit().getRequestsPerUnit()).isEqualTo(9);
    // while a new override is still refused, before anything is counted
    assertThatThrownBy(() -> s.decide(request(descriptor("api_key", "k"), descriptor("x", "y").toBuilder()
        .setLimit(RateLimitDescriptor.RateLimitOverride.newBuilder().setRequestsPerUnit(3).setUnit(RateLimitUnit.SECOND))
        .build()))).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
          assertThat(e.getStatus().getDescription()).startsWith("descriptors[1]: too many distinct limits");
        });
    assertThat(s.decide(request(descriptor("api_key", "k"))).getStatuses(0).getLimitRemaining()).isEqualTo(5);
  }

  /**
   * A call whose decision needs no store call (a claim that pays, a denial at the spent limit) is
   * answered on the calling thread, gRPC's, with nothing handed to the executor; one that needs a claim
   * goes there. Each call is counted once either way.
   */
  @Test
  void callsThatNeedNoStoreCallAreAnsweredWithoutTheExecutor() throws Exception {
    AtomicInteger handedOver = new AtomicInteger();
    ThreadPoolExecutor executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(16)) {
      @Override
      public void execute(Runnable task) {
        handedOver.incrementAndGet();
        super.execute(task);
      }
    };
    RlsService s = service(executor);
    int inline = 0;
    int ok = 0;
    for (int i = 0; i < 8; i++) {
      Recorder r = new Recorder();
      s.shouldRateLimit(request(descriptor("api_key", "inline")), r);
      if (r.response.get(5, TimeUnit.SECONDS).getOverallCode() == Code.OK) {
        ok++;
      }
      if (r.answeredOn == Thread.currentThread()) {
        inline++;
      }
    }
    assertThat(ok).isEqualTo(5); // the limit of 5 a minute, each call counted once
    assertThat(inline + handedOver.get()).isEqualTo(8);
    assertThat(handedOver.get()).isGreaterThanOrEqualTo(1); // the key's first decision asks for a claim
    assertThat(inline).isGreaterThanOrEqualTo(1);
  }

  /** A call that waited past its deadline is dropped uncounted; a call that finds the queue full is refused. */
  @Test
  void expiredCallsAreDroppedAndAFullQueueRefuses() throws Exception {
    ThreadPoolExecutor executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1));
    RlsService s = service(executor);
    CountDownLatch release = new CountDownLatch(1);
    executor.execute(() -> {
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    Recorder waited = new Recorder();
    Context.CancellableContext ctx = Context.current().withCancellation();
    ctx.run(() -> s.shouldRateLimit(request(descriptor("api_key", "late")), waited));
    Recorder refused = new Recorder();
    s.shouldRateLimit(request(descriptor("api_key", "late")), refused); // the queue holds the first
    assertThat(refused.error.get(1, TimeUnit.SECONDS).getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(s.rejectedCalls()).isEqualTo(1);
    ctx.cancel(null); // as gRPC does when the deadline passes
    release.countDown();
    assertThat(waited.error.get(5, TimeUnit.SECONDS).getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(s.expiredCalls()).isEqualTo(1);
    // nothing was counted for either
    Recorder fresh = new Recorder();
    s.shouldRateLimit(request(descriptor("api_key", "late")), fresh);
    assertThat(fresh.response.get(5, TimeUnit.SECONDS).getStatuses(0).getLimitRemaining()).isEqualTo(4);
  }

  static final class Recorder implements StreamObserver<RateLimitResponse> {
    final CompletableFuture<RateLimitResponse> response = new CompletableFuture<>();
    final CompletableFuture<StatusRuntimeException> error = new CompletableFuture<>();
    /** The thread that answered (read once the response is in: completing it publishes this). */
    volatile Thread answeredOn;

    @Override
    public void onNext(RateLimitResponse value) {
      answeredOn = Thread.currentThread();
      response.complete(value);
    }

    @Override
    public void onError(Throwable t) {
      error.complete((StatusRuntimeException) t);
    }

    @Override
    public void onCompleted() {
    }
  }
}
