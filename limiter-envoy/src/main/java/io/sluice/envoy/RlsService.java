package io.sluice.envoy;

import com.google.protobuf.Duration;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.Outcome;
import io.sluice.node.RateLimitHeaders;
import io.sluice.sync.SyncedLimiter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * {@code envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit} over Sluice's distributed
 * limiters, answering as envoyproxy/ratelimit does:
 *
 * <ul>
 *   <li>every descriptor of the request is evaluated and counted; the overall code is
 *       {@code OVER_LIMIT} if any descriptor's enforced limit is; the statuses come in the request's
 *       order with {@code current_limit}, {@code limit_remaining} and {@code duration_until_reset};</li>
 *   <li>a descriptor's limit is its own {@code limit} override when it has one (in a configured
 *       domain), else the one the configuration matches ({@link RlsConfig#match}); none: {@code OK}
 *       without {@code current_limit}; {@code unlimited}: {@code OK} with {@code limit_remaining}
 *       2^32-1; a limit named in another matched limit's {@code replaces}: not evaluated;</li>
 *   <li>{@code shadow_mode}: the descriptor's status says {@code OVER_LIMIT} when it is, the overall
 *       code does not (the reference server says {@code OK} in both);</li>
 *   <li>the cost is the descriptor's {@code hits_addend}, else the request's, the request's 0 meaning
 *       1; a descriptor's own {@code hits_addend} of 0 checks without counting (OK, as not evaluated);
 *       a cost above the limit, or a limit of 0, is over the limit without counting;</li>
 *   <li>{@code response_headers_to_add}: {@code RateLimit-Policy}, {@code RateLimit}, the
 *       {@code X-RateLimit-*} fields and, when over the limit, {@code Retry-After}
 *       ({@link RateLimitHeaders}' formats; shadow limits are left out).</li>
 * </ul>
 *
 * <p>A call is decided on gRPC's own thread where no descriptor needs a store call or a wait (a claim
 * that pays, a cached denial: {@link SyncedLimiter#acquireWithoutWaiting}), with no hand-over; from its
 * first descriptor that would wait (a cold key's claim call, exact mode's script) it goes to a bounded
 * executor: when its queue is full the call fails at once with {@code RESOURCE_EXHAUSTED}; a call
 * whose deadline passed (or that the client cancelled) while it waited there is dropped without
 * counting anything more (the descriptors before, decided at once, stay counted, as a call cut off
 * after its answer was sent would). Bad requests (an empty domain, no descriptors, an
 * entry without a key, an override in an unknown unit) fail with {@code INVALID_ARGUMENT} naming the
 * field.
 *
 * <p>Concurrency: calls are decided on gRPC's threads and the executor's at once; a call's own state
 * ({@code Call}) passes from the one to the other through the executor's queue. The configuration is one
 * immutable {@link RlsConfig} in a volatile field, replaced whole by a reload ({@link ConfigWatcher}'s
 * thread), so a call reads it once and decides every descriptor on the same one; the limiters are
 * {@link RlsLimiters}' (thread-safe) and the counters atomic.
 */
public final class RlsService extends RateLimitServiceGrpc.RateLimitServiceImplBase {
  /** {@code limit_remaining} of an unlimited descriptor, as the reference server answers. */
  public static final int UNLIMITED_REMAINING = -1; // uint32 max
  /** The most descriptors one request may carry. */
  public static final int MAX_DESCRIPTORS = 64;
  /** The most entries one descriptor may carry. */
  public static final int MAX_ENTRIES = 64;

  private volatile RlsConfig config;
  private final RlsLimiters limiters;
  private final ExecutorService executor;
  private final boolean responseHeaders;
  private final LongSupplier wallClockMillis;
  private final AtomicLong expired = new AtomicLong();
  private final AtomicLong rejected = new AtomicLong();
  /** {@code RateLimit-Policy} items of the limits met so far (see {@link #policy}). */
  private final ConcurrentHashMap<Limit, String> policyItems = new ConcurrentHashMap<>();
  private static final int MAX_POLICY_ITEMS = 1_024;

  RlsService(RlsConfig config, RlsLimiters limiters, ExecutorService executor, boolean responseHeaders,
      LongSupplier wallClockMillis) {
    this.config = Objects.requireNonNull(config, "config");
    this.limiters = limiters;
    this.executor = executor;
    this.responseHeaders = responseHeaders;
    this.wallClockMillis = wallClockMillis;
  }

  /**
   * The bounded executor calls are decided on: {@code threads} at once, {@code queue} more waiting,
   * the next one refused.
   */
  static ThreadPoolExecutor boundedExecutor(int threads, int queue) {
    AtomicInteger threadNo = new AtomicInteger();
    return new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new ArrayBlockingQueue<>(queue), r -> {
      Thread t = new Thread(r, "sluice-envoy-" + threadNo.incrementAndGet());
      t.setDaemon(true);
      return t;
    }, new ThreadPoolExecutor.AbortPolicy());
  }

  /** The configuration in use. */
  public RlsConfig config() {
    return config;
  }

  /** Replaces the configuration; calls under way finish with the one they started with. */
  void config(RlsConfig next) {
    this.config = Objects.requireNonNull(next, "config");
  }

  /** Calls dropped because their deadline passed (or they were cancelled) before they were decided. */
  public long expiredCalls() {
    return expired.get();
  }

  /** Calls refused with RESOURCE_EXHAUSTED because the executor's queue was full. */
  public long rejectedCalls() {
    return rejected.get();
  }

  @Override
  public void shouldRateLimit(RateLimitRequest request, StreamObserver<RateLimitResponse> observer) {
    Call call;
    try {
      // on gRPC's thread (an event loop): what needs no store call and no wait is decided here, at
      // once; the call goes to the bounded executor only from its first descriptor that would wait (a
      // cold key's claim, exact mode's script), those before it counted already
      call = prepare(request);
      decideFrom(call, true);
    } catch (RuntimeException e) {
      fail(observer, e);
      return;
    }
    if (call.next == call.limits.length) {
      respond(observer, call);
      return;
    }
    Context context = Context.current();
    try {
      executor.execute(() -> {
        if (context.isCancelled()) {
          // the deadline passed (or the client went away) while the call waited: nothing more is counted
          expired.incrementAndGet();
          observer.onError(Status.DEADLINE_EXCEEDED.withDescription("the call's deadline passed before it was decided")
              .asRuntimeException());
          return;
        }
        try {
          decideFrom(call, false);
        } catch (RuntimeException e) {
          fail(observer, e);
          return;
        }
        respond(observer, call);
      });
    } catch (RejectedExecutionException e) {
      rejected.incrementAndGet();
      observer.onError(Status.RESOURCE_EXHAUSTED
          .withDescription("busy: every worker is deciding and the queue is full").asRuntimeException());
    }
  }

  private static void fail(StreamObserver<RateLimitResponse> observer, RuntimeException e) {
    if (e instanceof StatusRuntimeException) {
      observer.onError(e);
    } else {
      observer.onError(Status.INTERNAL.withDescription(e.toString()).withCause(e).asRuntimeException());
    }
  }

  private void respond(StreamObserver<RateLimitResponse> observer, Call call) {
    RateLimitResponse response;
    try {
      response = answer(call);
    } catch (RuntimeException e) {
      fail(observer, e);
      return;
    }
    try {
      observer.onNext(response);
      observer.onCompleted();
    } catch (RuntimeException e) {
      // the call ended while it was decided (its deadline passed, the client went away): nobody reads the answer
    }
  }

  /** One request's answer, every descriptor decided on the caller's thread, waiting where it must. */
  RateLimitResponse decide(RateLimitRequest request) {
    Call call = prepare(request);
    decideFrom(call, false);
    return answer(call);
  }

  /**
   * A request matched to its limits: each descriptor's limit (null for none, an unlimited one or one
   * replaced), whether it is unlimited, the limiter that counts it (null where nothing is counted),
   * and its decision once made; {@link #next}: the first descriptor not decided yet.
   */
  private static final class Call {
    final RateLimitRequest request;
    final RlsLimit[] limits;
    final boolean[] unlimited;
    final SyncedLimiter[] limiter;
    final Decision[] decisions;
    int next;

    Call(RateLimitRequest request, RlsLimit[] limits, boolean[] unlimited, SyncedLimiter[] limiter) {
      this.request = request;
      this.limits = limits;
      this.unlimited = unlimited;
      this.limiter = limiter;
      this.decisions = new Decision[limits.length];
    }
  }

  /** The request checked and matched: its limits and limiters, nothing decided yet. */
  private Call prepare(RateLimitRequest request) {
    RlsConfig cfg = this.config;
    int n = descriptorCount(request);
    RlsLimit[] limits = new RlsLimit[n];
    boolean[] unlimited = new boolean[n];
    matchLimits(cfg, request, limits, unlimited);
    return new Call(request, limits, unlimited, limitersFor(cfg, request, limits));
  }

  /**
   * Counts the hits of the call's descriptors from {@link Call#next} on, in order; {@code withoutWaiting}:
   * only while no decision needs a store call or a wait, stopping (at that descriptor, nothing of it
   * counted) where one would.
   */
  private void decideFrom(Call call, boolean withoutWaiting) {
    String domain = call.request.getDomain();
    long requestHits = Integer.toUnsignedLong(call.request.getHitsAddend());
    for (; call.next < call.limits.length; call.next++) {
      int i = call.next;
      SyncedLimiter limiter = call.limiter[i];
      RateLimitDescriptor d = call.request.getDescriptors(i);
      long cost = cost(d, requestHits);
      if (limiter == null || cost < 0 || cost > call.limits[i].requestsPerUnit()) {
        continue; // (nothing to count: see answer)
      }
      String key = RlsLimiters.key(domain, d.getEntriesList());
      Decision decision = withoutWaiting ? limiter.acquireWithoutWaiting(key, cost) : limiter.acquire(key, cost);
      if (decision == null) {
        return;
      }
      call.decisions[i] = decision;
    }
  }

  /** A descriptor's cost: its own {@code hits_addend}, else the request's, 0 meaning 1. */
  private static long cost(RateLimitDescriptor d, long requestHits) {
    long cost = d.hasHitsAddend() ? d.getHitsAddend().getValue() : requestHits;
    return cost == 0 ? 1 : cost;
  }

  /** How many descriptors the request has, refusing an empty domain and no descriptors or too many. */
  private static int descriptorCount(RateLimitRequest request) {
    if (request.getDomain().isEmpty()) {
      throw invalid("domain: must not be empty");
    }
    int n = request.getDescriptorsCount();
    if (n == 0) {
      throw invalid("descriptors: must not be empty");
    }
    if (n > MAX_DESCRIPTORS) {
      throw invalid("descriptors: at most " + MAX_DESCRIPTORS + ", got " + n);
    }
    return n;
  }

  /**
   * Checks each descriptor's entries and finds the limit it is held to: {@code limits[i]} null for
   * none, an unlimited one or one another matched limit replaces; {@code unlimited[i]} for an
   * unlimited one.
   */
  private static void matchLimits(RlsConfig cfg, RateLimitRequest request, RlsLimit[] limits, boolean[] unlimited) {
    String domain = request.getDomain();
    boolean knownDomain = cfg.hasDomain(domain);
    Set<String> replaced = null; // (made only when a matched limit replaces others: most requests have none)
    for (int i = 0; i < limits.length; i++) {
      RateLimitDescriptor d = request.getDescriptors(i);
      checkEntries(d, i);
      RlsLimit limit;
      if (!knownDomain) {
        limit = null; // as the reference server: an unknown domain has no limits, overrides included
      } else if (d.hasLimit()) {
        limit = override(d, i);
      } else {
        limit = cfg.match(domain, d.getEntriesList());
      }
      if (limit != null) {
        if (!limit.replaces().isEmpty()) {
          if (replaced == null) {
            replaced = new HashSet<>();
          }
          replaced.addAll(limit.replaces());
        }
        if (limit.unlimited()) {
          unlimited[i] = true;
          limit = null;
        }
      }
      limits[i] = limit;
    }
    for (int i = 0; replaced != null && i < limits.length; i++) {
      if (limits[i] != null && limits[i].name() != null && replaced.contains(limits[i].name())) {
        limits[i] = null; // replaced by another matched limit: not evaluated, not counted
      }
    }
  }

  private static void checkEntries(RateLimitDescriptor d, int i) {
    if (d.getEntriesCount() == 0) {
      throw invalid("descriptors[" + i + "].entries: must not be empty");
    }
    if (d.getEntriesCount() > MAX_ENTRIES) {
      throw invalid("descriptors[" + i + "].entries: at most " + MAX_ENTRIES + ", got " + d.getEntriesCount());
    }
    for (int j = 0; j < d.getEntriesCount(); j++) {
      if (d.getEntries(j).getKey().isEmpty()) {
        throw invalid("descriptors[" + i + "].entries[" + j + "].key: must not be empty");
      }
    }
  }

  /** The descriptor's own {@code limit}, checked. */
  private static RlsLimit override(RateLimitDescriptor d, int i) {
    RlsUnit unit = RlsUnit.of(d.getLimit().getUnit());
    if (unit == null) {
      throw invalid("descriptors[" + i + "].limit.unit: must be SECOND, MINUTE, HOUR or DAY, got "
          + d.getLimit().getUnit());
    }
    long rpu = Integer.toUnsignedLong(d.getLimit().getRequestsPerUnit());
    if (rpu > RlsLimit.MAX_REQUESTS_PER_UNIT) {
      throw invalid("descriptors[" + i + "].limit.requests_per_unit: at most " + RlsLimit.MAX_REQUESTS_PER_UNIT
          + ", got " + rpu);
    }
    return RlsLimit.override(rpu, unit);
  }

  /** The limiter of each limit that counts (null where nothing is counted). */
  private SyncedLimiter[] limitersFor(RlsConfig cfg, RateLimitRequest request, RlsLimit[] limits) {
    // every limiter first, so that a request refused for too many limits has counted nothing; only a
    // rate the configuration does not have (an override's) is held to the bound, so that overrides (or
    // the limiters an earlier configuration left) never lock the configured limits out
    SyncedLimiter[] limiter = new SyncedLimiter[limits.length];
    for (int i = 0; i < limits.length; i++) {
      RlsLimit l = limits[i];
      if (l != null && l.requestsPerUnit() > 0 && !checkOnly(request.getDescriptors(i))) {
        try {
          limiter[i] = limiters.get(l.requestsPerUnit(), l.unit(), !cfg.hasRate(l.requestsPerUnit(), l.unit()));
        } catch (RlsLimiters.TooManyLimitsException e) {
          throw Status.RESOURCE_EXHAUSTED.withDescription("descriptors[" + i + "]: " + e.getMessage())
              .asRuntimeException();
        }
      }
    }
    return limiter;
  }

  /**
   * The answer, every descriptor decided: each descriptor's status in the request's order, the overall
   * code and the headers.
   */
  private RateLimitResponse answer(Call call) {
    RateLimitRequest request = call.request;
    RateLimitResponse.Builder response = RateLimitResponse.newBuilder();
    RateLimitResponse.Code overall = RateLimitResponse.Code.OK;
    List<Decision> visible = new ArrayList<>();
    for (int i = 0; i < call.limits.length; i++) {
      RateLimitDescriptor d = request.getDescriptors(i);
      RateLimitResponse.DescriptorStatus.Builder status = RateLimitResponse.DescriptorStatus.newBuilder();
      RlsLimit l = call.limits[i];
      if (call.unlimited[i]) {
        response.addStatuses(status.setCode(RateLimitResponse.Code.OK).setLimitRemaining(UNLIMITED_REMAINING));
        continue;
      }
      if (l == null || checkOnly(d)) {
        // a check-only descriptor counts nothing; Sluice never counts past a limit, so by the reference's
        // rule (over when the count with the hits added passes the limit) it is within it. It is answered
        // as a descriptor that was not evaluated: its remaining permits are not known without counting
        response.addStatuses(status.setCode(RateLimitResponse.Code.OK));
        continue;
      }
      Decision decision = status(l, call.decisions[i], status);
      if (!l.shadowMode()) {
        if (status.getCode() == RateLimitResponse.Code.OVER_LIMIT) {
          overall = RateLimitResponse.Code.OVER_LIMIT;
        }
        if (decision != null) {
          visible.add(decision);
        }
      }
      response.addStatuses(status);
    }
    response.setOverallCode(overall);
    if (responseHeaders && !visible.isEmpty()) {
      addHeaders(response, visible);
    }
    return response.build();
  }

  /**
   * A counted descriptor's status from its decision ({@code counted}; null for a cost above the limit or
   * a limit of 0, over the limit without counting); the decision, or null for a limit of 0 (which
   * denies without one).
   */
  private Decision status(RlsLimit l, Decision counted, RateLimitResponse.DescriptorStatus.Builder status) {
    status.setCurrentLimit(currentLimit(l));
    boolean over;
    long remaining;
    long resetNanos;
    Decision decision;
    if (counted == null) {
      // more than the whole limit (or a limit of 0): over without counting, as no window admits it
      over = true;
      remaining = 0;
      resetNanos = untilWindowEnd(l.unit());
      decision = l.requestsPerUnit() == 0 ? null : Decision.of(Outcome.DENIED,
          RlsLimiters.limit(l.requestsPerUnit(), l.unit()), 0, resetNanos, resetNanos);
    } else {
      decision = counted;
      over = !decision.allowed();
      remaining = over ? 0 : decision.remaining();
      resetNanos = decision.resetNanos();
    }
    status.setCode(over ? RateLimitResponse.Code.OVER_LIMIT : RateLimitResponse.Code.OK)
        .setLimitRemaining((int) Math.min(remaining, RlsLimit.MAX_REQUESTS_PER_UNIT))
        .setDurationUntilReset(duration(resetNanos));
    return decision;
  }

  /** The status's {@code current_limit}: the limit as the request sees it. */
  private static RateLimitResponse.RateLimit.Builder currentLimit(RlsLimit l) {
    RateLimitResponse.RateLimit.Builder current = RateLimitResponse.RateLimit.newBuilder()
        .setRequestsPerUnit((int) l.requestsPerUnit()).setUnit(l.unit().proto());
    if (l.name() != null) {
      current.setName(l.name());
    }
    return current;
  }

  /**
   * Whether a descriptor asks to be checked without adding hits: its own {@code hits_addend} set to 0,
   * as envoyproxy/ratelimit reads it (a request-level 0 is the field's default and means 1).
   */
  private static boolean checkOnly(RateLimitDescriptor d) {
    return d.hasHitsAddend() && d.getHitsAddend().getValue() == 0;
  }

  /**
   * The IETF RateLimit fields for the enforced limits a request met: every policy once in
   * {@code RateLimit-Policy}; {@code RateLimit} and {@code X-RateLimit-*} of the first denying one,
   * else of the one closest to its limit; {@code Retry-After} when one denied.
   */
  private void addHeaders(RateLimitResponse.Builder response, List<Decision> visible) {
    Decision reported = null;
    for (Decision d : visible) {
      if (!d.allowed()) {
        reported = d;
        break;
      }
    }
    boolean denied = reported != null;
    if (!denied) {
      reported = visible.get(0);
      for (Decision d : visible) {
        if (d.utilization() > reported.utilization()) {
          reported = d;
        }
      }
    }
    if (denied) {
      header(response, RateLimitHeaders.RETRY_AFTER, Long.toString(Math.max(1, reported.retryAfterSeconds())));
    }
    header(response, RateLimitHeaders.RATELIMIT_POLICY, policies(visible));
    header(response, RateLimitHeaders.RATELIMIT, RateLimitHeaders.rateLimit(reported));
    Limit limit = reported.limit();
    header(response, RateLimitHeaders.X_RATELIMIT_LIMIT, Long.toString(limit.capacity()));
    header(response, RateLimitHeaders.X_RATELIMIT_REMAINING, Long.toString(reported.remaining()));
    header(response, RateLimitHeaders.X_RATELIMIT_RESET, Long.toString(reported.resetSeconds()));
  }

  private static void header(RateLimitResponse.Builder response, String name, String value) {
    response.addResponseHeadersToAdd(HeaderValue.newBuilder().setKey(name).setValue(value));
  }

  /** Every policy once, in order: the one limit's item, made once per limit, or several joined. */
  private String policies(List<Decision> visible) {
    if (visible.size() == 1) {
      return policy(visible.get(0));
    }
    Set<String> policies = new LinkedHashSet<>();
    for (Decision d : visible) {
      policies.add(policy(d));
    }
    return String.join(", ", policies);
  }

  /**
   * A limit's {@code RateLimit-Policy} item, made once: its name, capacity and window never change.
   * Bounded, as the limiters are (an override's limit of a rate not seen before is made anew).
   */
  private String policy(Decision d) {
    Limit limit = d.limit();
    String item = policyItems.get(limit);
    if (item == null) {
      item = RateLimitHeaders.policy(d);
      if (policyItems.size() < MAX_POLICY_ITEMS) {
        policyItems.put(limit, item);
      }
    }
    return item;
  }

  /** Nanoseconds from now to the end of the unit's current window (windows aligned to the epoch). */
  private long untilWindowEnd(RlsUnit unit) {
    long windowMillis = unit.window().toMillis();
    long now = wallClockMillis.getAsLong();
    return (windowMillis - Math.floorMod(now, windowMillis)) * 1_000_000L;
  }

  private static Duration duration(long nanos) {
    long n = Math.max(0, nanos);
    return Duration.newBuilder().setSeconds(n / 1_000_000_000L).setNanos((int) (n % 1_000_000_000L)).build();
  }

  private static StatusRuntimeException invalid(String message) {
    return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
  }
}
