package io.sluice.envoy;

import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse.BucketAction;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaServiceGrpc;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.sluice.sync.spi.LeaseStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Envoy's rate limit quota service (RLQS):
 * {@code envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas}. Each stream
 * is one Envoy; the first usage report of a bucket subscribes the stream to it, and the server pushes
 * the bucket's assignments from then on:
 *
 * <ul>
 *   <li>a limited bucket ({@code requests_per_unit} N per unit, {@link RlqsConfig}) gets a share of N:
 *       {@code token_bucket} of s tokens filled with s per unit (or {@code requests_per_time_unit} s per unit), with an
 *       {@code assignment_time_to_live} reaching the end of the current assignment period. Shares are
 *       leased from the store one period at a time ({@link RlqsBudget}), so the shares live at any
 *       moment, over every stream of every server on the store, sum to at most N; a share of 0 is
 *       {@code deny_all};</li>
 *   <li>shares follow demand: each report's allowed and denied requests over its {@code time_elapsed}
 *       give the stream's demand, and the next period's share is its part of N by demand (a lone
 *       stream: all of N);</li>
 *   <li>renewal: a little before a period ends, every subscription leases its share of the next one and
 *       is sent the smaller of its two shares, live to the end of the next period (only that is within
 *       both periods' budgets); a larger share is sent when the next period has begun;</li>
 *   <li>{@code requests_per_unit: 0}: {@code deny_all}; {@code unlimited}, or no rule and no default:
 *       {@code allow_all} (renewed each period like the others);</li>
 *   <li>a bucket whose reports show no requests for {@code abandon_after} gets {@code abandon_action}
 *       and is dropped; so is a bucket past the stream's bound of buckets;</li>
 *   <li>a stream that ends (or fails) takes no share of later periods: what it held is free once its
 *       assignments' TTL has passed.</li>
 * </ul>
 *
 * <p>A request that breaks the protocol ends its stream with {@code INVALID_ARGUMENT} naming the field
 * ({@code bucket_quota_usages[0].time_elapsed: required, must be positive}); a domain the configuration
 * does not have ends it with {@code NOT_FOUND}; streams past the bound, with {@code RESOURCE_EXHAUSTED}.
 * When the store cannot be reached, no assignment is sent: Envoy's {@code no_assignment_behavior} and
 * {@code expired_assignment_behavior} decide until it can.
 */
public final class RlqsService extends RateLimitQuotaServiceGrpc.RateLimitQuotaServiceImplBase
    implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(RlqsService.class.getName());
  public static final int DEFAULT_MAX_STREAMS = 1024;
  public static final int DEFAULT_MAX_BUCKETS_PER_STREAM = 1024;

  /** Replaced whole by a reload ({@link #config(RlqsConfig)}); read once per use. */
  private volatile RlqsConfig config;
  private final RlqsBudget budget;
  private final LongSupplier wallMillis;
  private final long periodMillis;
  private final long leadMillis;
  private final int maxStreams;
  private final int maxBuckets;
  private final ScheduledExecutorService ticker;
  private final Set<Stream> streams = ConcurrentHashMap.newKeySet();
  /** The last period renewed and the last period raised, so that a late tick never runs one twice. */
  private long renewed = Long.MIN_VALUE;
  private long raised = Long.MIN_VALUE;
  private volatile boolean closed;

  /**
   * @param ticker runs the renewals at each period's end (this service schedules on it and shuts it
   *     down on close); null: the caller runs {@link #renew} and {@link #raise} (tests)
   */
  RlqsService(RlqsConfig config, LeaseStore store, LongSupplier wallMillis, int maxStreams, int maxBuckets,
      ScheduledExecutorService ticker) {
    this.config = Objects.requireNonNull(config, "config");
    this.budget = new RlqsBudget(store, config.period());
    this.wallMillis = wallMillis;
    this.periodMillis = config.period().toMillis();
    // renewals start this long before a period ends: a fifth of it, 100 ms to 2 s, time enough for
    // two store calls per subscription
    this.leadMillis = Math.max(100, Math.min(2_000, periodMillis / 5));
    if (maxStreams < 1) {
      throw new IllegalArgumentException("maxStreams: must be at least 1, got " + maxStreams);
    }
    if (maxBuckets < 1) {
      throw new IllegalArgumentException("maxBuckets: must be at least 1, got " + maxBuckets);
    }
    this.maxStreams = maxStreams;
    this.maxBuckets = maxBuckets;
    this.ticker = ticker;
    if (ticker != null) {
      scheduleTick();
    }
  }

  /** The single daemon thread a service's renewals run on (see the constructor's {@code ticker}). */
  static ScheduledExecutorService newTicker() {
    return Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sluice-envoy-rlqs");
      t.setDaemon(true);
      return t;
    });
  }

  public RlqsConfig config() {
    return config;
  }

  /**
   * A reloaded configuration: streams opened from now on are checked against its domains, and every
   * bucket is matched against its rules again when its next period's assignment is made (the current
   * period's shares, leased under the rule they were leased by, stay as they are). The period cannot
   * change without a restart: the periods' leases in the store are keyed by it.
   */
  void config(RlqsConfig next) {
    String refused = refusal(next);
    if (refused != null) {
      throw new IllegalArgumentException(refused);
    }
    this.config = next;
  }

  /** Why {@code next} cannot replace the configuration in use, or null when it can. */
  String refusal(RlqsConfig next) {
    return next.period().equals(config.period()) ? null : "period: cannot change from "
        + io.sluice.node.Durations.format(config.period()) + " to " + io.sluice.node.Durations.format(next.period())
        + " without a restart (the leases in the store are kept per period)";
  }

  /** Streams open now. */
  public int streams() {
    return streams.size();
  }

  /** Buckets subscribed to now, over every stream. */
  public int subscriptions() {
    int n = 0;
    for (Stream s : streams) {
      synchronized (s) {
        n += s.subs.size();
      }
    }
    return n;
  }

  long period(long millis) {
    return Math.floorDiv(millis, periodMillis);
  }

  private long periodEnd(long period) {
    return (period + 1) * periodMillis;
  }

  @Override
  public StreamObserver<RateLimitQuotaUsageReports> streamRateLimitQuotas(
      StreamObserver<RateLimitQuotaResponse> responses) {
    if (closed) {
      responses.onError(Status.UNAVAILABLE.withDescription("the server is shutting down").asRuntimeException());
      return new Ignored();
    }
    synchronized (streams) {
      if (streams.size() >= maxStreams) {
        responses.onError(Status.RESOURCE_EXHAUSTED.withDescription("too many streams: " + streams.size()
            + " are open (at most " + maxStreams + ")").asRuntimeException());
        return new Ignored();
      }
      Stream s = new Stream(responses);
      streams.add(s);
      return s;
    }
  }

  // ---- the period's ticks ------------------------------------------------------------------------

  private void scheduleTick() {
    if (closed) {
      return;
    }
    long now = wallMillis.getAsLong();
    long next = period(now) + 1;
    long boundary = next * periodMillis;
    long at = now < boundary - leadMillis ? boundary - leadMillis : boundary;
    try {
      ticker.schedule(() -> {
        try {
          long t = wallMillis.getAsLong();
          long p = period(t);
          if (t >= periodEnd(p) - leadMillis) {
            renew(p + 1);
          } else {
            raise(p);
          }
        } catch (RuntimeException e) {
          LOG.log(System.Logger.Level.WARNING, "sluice envoy: RLQS renewal failed", e);
        } finally {
          scheduleTick();
        }
      }, Math.max(1, at - now), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // shut down
    }
  }

  /**
   * Before period {@code next} begins: abandons idle buckets, and leases every other subscription's
   * share of {@code next}, sending the smaller of its two shares with a TTL to the end of {@code next}.
   */
  void renew(long next) {
    synchronized (this) {
      if (next <= renewed) {
        return;
      }
      renewed = next;
    }
    for (Stream s : streams) {
      s.renew(next);
    }
  }

  /**
   * Once period {@code current} has begun: sends the shares larger than what was sent before it
   * began, and gives a share of it to subscriptions that have none (joined late, or their renewal failed).
   */
  void raise(long current) {
    synchronized (this) {
      if (current <= raised) {
        return;
      }
      raised = current;
    }
    for (Stream s : streams) {
      s.raise(current);
    }
  }

  /** Ends every stream with UNAVAILABLE (Envoy reconnects, to another replica if there is one). */
  @Override
  public void close() {
    closed = true;
    if (ticker != null) {
      ticker.shutdownNow();
    }
    for (Stream s : new ArrayList<>(streams)) {
      s.fail(Status.UNAVAILABLE.withDescription("the server is shutting down"));
    }
  }

  // ---- one stream ---------------------------------------------------------------------------------

  /** A subscription: one bucket of one stream. Guarded by its stream. */
  private static final class Sub {
    final BucketId id;
    final String key;
    /** The rule the bucket matched: again at each renewal, so that a reload reaches it from its next period. */
    RlqsConfig.Rule rule;
    /** Requests per unit, smoothed over reports; NaN before the first report with a time. */
    double demand = Double.NaN;
    long lastActiveMillis;
    /** Shares granted, by period (the current and the next at most). */
    final Map<Long, Long> grants = new HashMap<>();
    /** The weight this subscription added to each period's demand (the current and the next at most). */
    final Map<Long, Long> weights = new HashMap<>();
    /** The period and rate of the last assignment sent (-1: none yet). */
    long sentPeriod = Long.MIN_VALUE;
    long sentRate = -1;
    /** The period a lease is under way for (MIN_VALUE: none), so that a tick does not take a second share of it. */
    long pending = Long.MIN_VALUE;

    Sub(BucketId id, String key, RlqsConfig.Rule rule, long now) {
      this.id = id;
      this.key = key;
      this.rule = rule;
      this.lastActiveMillis = now;
    }

    /** Whether the bucket's limit is leased in shares (a limit above 0). */
    boolean shared() {
      return rule != null && !rule.limit().unlimited() && rule.limit().requestsPerUnit() > 0;
    }

    long weight() {
      return RlqsShares.weight(demand, rule.limit().requestsPerUnit());
    }
  }

  private final class Stream implements StreamObserver<RateLimitQuotaUsageReports> {
    private final StreamObserver<RateLimitQuotaResponse> out;
    private final Map<String, Sub> subs = new LinkedHashMap<>();
    private String domain;
    private boolean ended;

    Stream(StreamObserver<RateLimitQuotaResponse> out) {
      this.out = out;
    }

    @Override
    public synchronized void onNext(RateLimitQuotaUsageReports reports) {
      if (ended) {
        return;
      }
      try {
        check(reports);
      } catch (StatusRuntimeException e) {
        fail(e.getStatus());
        return;
      }
      long now = wallMillis.getAsLong();
      List<BucketAction> actions = new ArrayList<>();
      for (RateLimitQuotaUsageReports.BucketQuotaUsage u : reports.getBucketQuotaUsagesList()) {
        String key = RlqsBudget.key(domain, u.getBucketId().getBucketMap());
        Sub sub = subs.get(key);
        boolean fresh = sub == null;
        if (fresh) {
          if (subs.size() >= maxBuckets) {
            LOG.log(System.Logger.Level.WARNING, "sluice envoy: RLQS stream has {0} buckets (the most), abandoning {1}",
                subs.size(), u.getBucketId().getBucketMap());
            actions.add(RlqsActions.abandon(u.getBucketId()));
            continue;
          }
          sub = new Sub(u.getBucketId(), key, config.match(domain, u.getBucketId().getBucketMap()), now);
          subs.put(key, sub);
        }
        long requests = u.getNumRequestsAllowed() + u.getNumRequestsDenied();
        if (requests != 0) {
          sub.lastActiveMillis = now;
        }
        if (sub.shared()) {
          long elapsedNanos = u.getTimeElapsed().getSeconds() * 1_000_000_000L + u.getTimeElapsed().getNanos();
          sub.demand = RlqsShares.smooth(sub.demand, RlqsShares.demandPerUnit(u.getNumRequestsAllowed(),
              u.getNumRequestsDenied(), elapsedNanos, sub.rule.limit().unit().window().toNanos()));
        }
        if (fresh) {
          long p = period(now);
          if (sub.shared()) {
            join(sub, p, now);
          } else {
            actions.add(blanket(sub, p, now));
          }
        }
      }
      send(actions);
    }

    /** The protocol's rules on a message, before anything of it is used. */
    private void check(RateLimitQuotaUsageReports r) {
      if (domain == null) {
        if (r.getDomain().isEmpty()) {
          throw invalid("domain: must not be empty in a stream's first message");
        }
        if (!config.hasDomain(r.getDomain())) {
          throw Status.NOT_FOUND.withDescription("domain: \"" + r.getDomain() + "\" is not configured for RLQS"
              + " (configured: " + String.join(", ", config.domains()) + ")").asRuntimeException();
        }
      } else if (!r.getDomain().isEmpty() && !r.getDomain().equals(domain)) {
        throw invalid("domain: a stream has one domain, \"" + domain + "\", got \"" + r.getDomain()
            + "\" (open another stream for another domain)");
      }
      if (r.getBucketQuotaUsagesCount() == 0) {
        throw invalid("bucket_quota_usages: must not be empty");
      }
      for (int i = 0; i < r.getBucketQuotaUsagesCount(); i++) {
        RateLimitQuotaUsageReports.BucketQuotaUsage u = r.getBucketQuotaUsages(i);
        String at = "bucket_quota_usages[" + i + "]";
        if (!u.hasBucketId() || u.getBucketId().getBucketCount() == 0) {
          throw invalid(at + ".bucket_id.bucket: required, at least one key and value");
        }
        for (Map.Entry<String, String> e : u.getBucketId().getBucketMap().entrySet()) {
          if (e.getKey().isEmpty()) {
            throw invalid(at + ".bucket_id.bucket: a key must not be empty");
          }
          if (e.getValue().isEmpty()) {
            throw invalid(at + ".bucket_id.bucket[" + e.getKey() + "]: the value must not be empty");
          }
        }
        if (!u.hasTimeElapsed() || u.getTimeElapsed().getSeconds() < 0 || u.getTimeElapsed().getNanos() < 0
            || (u.getTimeElapsed().getSeconds() == 0 && u.getTimeElapsed().getNanos() == 0)) {
          throw invalid(at + ".time_elapsed: required, must be positive");
        }
      }
      if (domain == null) {
        domain = r.getDomain();
      }
    }

    /** A share of the current period for a subscription that has none (see {@link RlqsBudget#join}). */
    private void join(Sub sub, long p, long now) {
      long limit = sub.rule.limit().requestsPerUnit();
      sub.pending = p;
      long weight = sub.weight();
      sub.weights.put(p, weight);
      budget.join(sub.key, limit, sub.rule.limit().unit(), p, (now - p * periodMillis) * 1_000, weight)
          .whenComplete((granted, error) -> {
            synchronized (this) {
              if (!granted(sub, p, granted, error, "leased")) {
                return;
              }
              long t = wallMillis.getAsLong();
              if (period(t) == p) {
                send(List.of(assignment(sub, sub.grants.get(p), p, t)));
              }
            }
          });
    }

    synchronized void renew(long next) {
      if (ended) {
        return;
      }
      long now = wallMillis.getAsLong();
      List<BucketAction> actions = new ArrayList<>();
      RlqsConfig rules = config;
      for (Iterator<Sub> it = subs.values().iterator(); it.hasNext(); ) {
        Sub sub = it.next();
        if (now - sub.lastActiveMillis >= rules.abandonAfter().toMillis()) {
          it.remove();
          actions.add(RlqsActions.abandon(sub.id));
          continue;
        }
        if (rules.hasDomain(domain)) {
          // (a domain a reload removed keeps its streams' rules until they end: new streams are refused)
          sub.rule = rules.match(domain, sub.id.getBucketMap());
        }
        sub.grants.keySet().removeIf(p -> p < next - 1);
        sub.weights.keySet().removeIf(p -> p < next - 1);
        if (!sub.shared()) {
          actions.add(blanket(sub, next, now));
          continue;
        }
        if (sub.grants.containsKey(next) || sub.pending == next) {
          continue; // joined it already (a period shorter than the lead)
        }
        renewShare(sub, next);
      }
      send(actions);
    }

    /**
     * Leases the subscription's share of {@code next}; once granted, while the period before it lasts,
     * sends the smaller of its two shares live to the end of {@code next}.
     */
    private void renewShare(Sub sub, long next) {
      sub.pending = next;
      long weight = sub.weight();
      long previousWeight = sub.weights.getOrDefault(next - 1, 0L);
      sub.weights.put(next, weight);
      budget.renew(sub.key, sub.rule.limit().requestsPerUnit(), sub.rule.limit().unit(), next, weight, previousWeight)
          .whenComplete((granted, error) -> {
            synchronized (this) {
              if (!granted(sub, next, granted, error, "renewed")) {
                return;
              }
              Long current = sub.grants.get(next - 1);
              long t = wallMillis.getAsLong();
              if (current != null && period(t) == next - 1) {
                // live in both periods: only the smaller share is within both budgets
                send(List.of(assignment(sub, RlqsShares.spanning(current, granted), next, t)));
              }
            }
          });
    }

    /**
     * Under this stream's monitor: the budget's answer to a share of {@code period} asked for
     * {@code sub}, recorded; false when there is none to use (it failed, logged as not {@code verb},
     * or the stream or subscription is gone).
     */
    private boolean granted(Sub sub, long period, Long granted, Throwable error, String verb) {
      if (sub.pending == period) {
        sub.pending = Long.MIN_VALUE;
      }
      if (error != null) {
        LOG.log(System.Logger.Level.WARNING, "sluice envoy: RLQS share of {0} not " + verb + ": {1}", sub.key,
            error.toString());
        return false;
      }
      if (ended || subs.get(sub.key) != sub) {
        return false;
      }
      sub.grants.put(period, granted);
      return true;
    }

    synchronized void raise(long current) {
      if (ended) {
        return;
      }
      long now = wallMillis.getAsLong();
      List<BucketAction> actions = new ArrayList<>();
      for (Sub sub : subs.values()) {
        if (!sub.shared()) {
          continue;
        }
        Long granted = sub.grants.get(current);
        if (granted == null) {
          if (sub.pending != current) {
            join(sub, current, now);
          }
        } else if (sub.sentPeriod != current || sub.sentRate != granted) {
          actions.add(assignment(sub, granted, current, now));
        }
      }
      send(actions);
    }

    /** A quota assignment of {@code rate} per unit, live to the end of {@code period}. */
    private BucketAction assignment(Sub sub, long rate, long period, long now) {
      sub.sentPeriod = period;
      sub.sentRate = rate;
      return RlqsActions.assignment(sub.id, RlqsActions.share(sub.rule, rate), periodEnd(period) - now);
    }

    /** {@code allow_all} (unlimited, or no limit) or {@code deny_all} (a limit of 0), live to the end of {@code period}. */
    private BucketAction blanket(Sub sub, long period, long now) {
      return RlqsActions.assignment(sub.id, RlqsActions.blanket(sub.rule), periodEnd(period) - now);
    }

    /** Sends the actions in one response (none: nothing; the protocol wants at least one). */
    private void send(List<BucketAction> actions) {
      if (actions.isEmpty() || ended) {
        return;
      }
      try {
        out.onNext(RateLimitQuotaResponse.newBuilder().addAllBucketAction(actions).build());
      } catch (RuntimeException e) {
        // the call is over (cancelled by the client, or the server is stopping): nobody reads it
        end();
      }
    }

    @Override
    public synchronized void onError(Throwable t) {
      end();
    }

    @Override
    public synchronized void onCompleted() {
      if (!ended) {
        end();
        try {
          out.onCompleted();
        } catch (RuntimeException ignored) {
          // already over
        }
      }
    }

    synchronized void fail(Status status) {
      if (!ended) {
        end();
        try {
          out.onError(status.asRuntimeException());
        } catch (RuntimeException ignored) {
          // already over
        }
      }
    }

    /** Drops every subscription: the stream takes no share of any later period. */
    private void end() {
      ended = true;
      subs.clear();
      streams.remove(this);
    }
  }

  private static StatusRuntimeException invalid(String message) {
    return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
  }

  /** The stream of a call refused at its start: what the client sends after is dropped. */
  private static final class Ignored implements StreamObserver<RateLimitQuotaUsageReports> {
    @Override
    public void onNext(RateLimitQuotaUsageReports value) {
    }

    @Override
    public void onError(Throwable t) {
    }

    @Override
    public void onCompleted() {
    }
  }
}
