package io.sluice.envoy;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.LeaseStore;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The store side of RLQS assignments: a bucket's limit leased in shares, one assignment period at a
 * time, through Sluice's reservation mode ({@link LeaseStore#lease}). Two counters per bucket and
 * period, both fixed windows as long as the period and aligned to the epoch, so every server on the
 * store agrees on them:
 *
 * <ul>
 *   <li>the <b>share</b> counter, whose limit is the bucket's {@code requests_per_unit}: each stream
 *       takes its share of a period from it atomically, so the shares of one period, over every stream
 *       of every server, sum to at most the limit. A share is a rate (requests per unit), live until
 *       its period ends; a stream that goes away takes nothing from the next period, and what it held
 *       is free again when its period is over;</li>
 *   <li>the <b>demand</b> counter: each stream adds its weight ({@link RlqsShares#weight}) to the
 *       period it takes a share of, and reads back the total weight of the period before, every
 *       stream's (the lease's {@code previous} count). Its share of the next period is then its part of
 *       the limit by weight ({@link RlqsShares#want}), so shares follow demand.</li>
 * </ul>
 *
 * <p>Nothing is returned to a counter: a share a stream did not use is lost until the period ends
 * (under-admission, never over). Keys expire two periods after their last grant.
 *
 * <p>Concurrency: the streams' threads call it at once. Its only mutable state is the counters of
 * the rates seen, in a concurrent map ({@code computeIfAbsent}: one counter per rate); the shares
 * themselves are the store's, taken atomically by its lease script.
 */
final class RlqsBudget {
  private final LeaseStore store;
  private final Duration period;
  private final long periodMicros;
  private final Counter demand;
  private final ConcurrentHashMap<RlsLimiters.Rate, Counter> shares = new ConcurrentHashMap<>();

  RlqsBudget(LeaseStore store, Duration period) {
    this.store = store;
    this.period = period;
    this.periodMicros = period.toNanos() / 1_000;
    // the period's length is in both names: servers configured with different periods never read each
    // other's counts with another meaning
    this.demand = Counter.of(Limit.fixedWindow("rlqs-demand-p" + period.toMillis())
        .limit(Limit.MAX_WINDOW_LIMIT).window(period).build());
  }

  /** The share counter of a limit: {@code rlqs-<requests_per_unit>-per-<unit>-p<period ms>}. */
  private Counter share(long requestsPerUnit, RlsUnit unit) {
    return shares.computeIfAbsent(new RlsLimiters.Rate(requestsPerUnit, unit), r -> Counter.of(Limit.fixedWindow(
        "rlqs-" + requestsPerUnit + "-per-" + unit.name().toLowerCase(java.util.Locale.ROOT) + "-p" + period.toMillis())
        .limit(requestsPerUnit).window(period).build()));
  }

  /**
   * A share of the current period for a stream that has none in it (a new subscription, or one whose
   * renewal did not happen): its weight is added to the period's demand, and it asks for its part of
   * the limit by the weight of every stream counted in this period so far (itself included: alone, the
   * whole limit), taking what is free up to that.
   *
   * @return the permits per unit granted (0 when none are free)
   */
  CompletionStage<Long> join(String key, long limit, RlsUnit unit, long periodIndex, long elapsedMicros, long weight) {
    long elapsed = Math.max(0, Math.min(periodMicros - 1, elapsedMicros));
    return store.lease(demand, key, periodIndex, elapsed, weight).thenCompose(d ->
        take(key, limit, unit, periodIndex, elapsed, RlqsShares.want(limit, weight, d.current())));
  }

  /**
   * A share of the next period, taken before it begins: the stream's weight is added to that
   * period's demand, and it asks for its part of the limit by the total weight of the period before
   * it (every stream that took a share of it, or joined it), with its own weight there
   * ({@code previousWeight}, 0 if it added none) replaced by its weight now: a stream alone asks for
   * the whole limit even when its demand fell.
   */
  CompletionStage<Long> renew(String key, long limit, RlsUnit unit, long nextPeriod, long weight,
      long previousWeight) {
    return store.lease(demand, key, nextPeriod, 0, weight).thenCompose(d ->
        take(key, limit, unit, nextPeriod, 0, RlqsShares.want(limit, weight,
            Math.max(0, d.previous() - previousWeight) + weight)));
  }

  private CompletionStage<Long> take(String key, long limit, RlsUnit unit, long periodIndex, long elapsed, long want) {
    if (want <= 0) {
      return CompletableFuture.completedFuture(0L);
    }
    return store.lease(share(limit, unit), key, periodIndex, elapsed, want, 1).thenApply(LeaseStore.Lease::granted);
  }

  /**
   * A bucket's key in the store: the domain, then the bucket id's entries sorted by key (the order of
   * a bucket id's keys does not matter in RLQS), every part prefixed by its length, so that no two
   * (domain, bucket id) give the same key whatever characters they hold.
   */
  static String key(String domain, Map<String, String> bucketId) {
    StringBuilder sb = new StringBuilder(domain.length() + 32 * bucketId.size());
    sb.append(domain.length()).append(':').append(domain);
    for (Map.Entry<String, String> e : new TreeMap<>(bucketId).entrySet()) {
      sb.append('|').append(e.getKey().length()).append(':').append(e.getKey())
          .append('=').append(e.getValue().length()).append(':').append(e.getValue());
    }
    return sb.toString();
  }
}
