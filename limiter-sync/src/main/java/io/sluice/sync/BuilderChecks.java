package io.sluice.sync;

import static io.sluice.sync.SyncedLimiter.batches;
import static io.sluice.sync.SyncedLimiter.claimsTokens;

import io.sluice.node.Algorithm;
import io.sluice.node.Durations;
import io.sluice.node.Limit;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.LeaseStore;
import io.sluice.sync.spi.TokenStore;
import java.time.Duration;

/**
 * The checks of a {@link SyncedLimiter.Builder} that need the limit or the store, each refusing with an
 * {@link IllegalArgumentException} that names the setting; and the batch size a built limiter takes.
 */
final class BuilderChecks {
  private BuilderChecks() {
  }

  /** A limit and store a builder can take. */
  static void checkLimitAndStore(Limit limit, CounterStore store) {
    if (limit == null) {
      throw new IllegalArgumentException("limit: must not be null");
    }
    if (store == null) {
      throw new IllegalArgumentException("store: must not be null");
    }
    if (limit.algorithm() == Algorithm.LEAKY_BUCKET_SHAPER) {
      throw new IllegalArgumentException("limit: " + limit.name() + " is a leaky bucket shaper, which delays"
          + " requests in one local queue and is not shared across nodes (use LEAKY_BUCKET, the meter, or"
          + " TOKEN_BUCKET)");
    }
  }

  /** A batch size the limit's algorithm can take. */
  static void checkBatchSize(Limit limit, long batchSize) {
    if (batchSize > 1 && !batches(limit) && !claimsTokens(limit)) {
      throw new IllegalArgumentException("batchSize: " + limit.name() + " is a " + limit.algorithm()
          + ", shared in exact mode only (batch size 1, one store script per decision); batches and claims"
          + " count windows (FIXED_WINDOW, SLIDING_WINDOW_COUNTER) and buckets (TOKEN_BUCKET, LEAKY_BUCKET),"
          + " got " + batchSize);
    }
  }

  /** A window limit syncs at most twice a window. */
  static void checkSyncInterval(Limit limit, Duration interval) {
    if (batches(limit) && interval.toNanos() * 2 > limit.periodNanos()) {
      throw new IllegalArgumentException("syncInterval: at most half the window "
          + Durations.formatNanos(limit.periodNanos()) + " of limit " + limit.name() + ", got " + Durations.format(interval));
    }
  }

  /**
   * The batch size a limiter for {@code limit} on {@code store} takes with config {@code c}, once the
   * config, the limit and the store are checked against each other; {@code bucketBatchSize} is the
   * builder's own batch size for a bucket (1 unless set on the builder).
   */
  static long batchSize(Limit limit, CounterStore store, SyncConfig c, long bucketBatchSize) {
    boolean reservation = c.reservation();
    // buckets batch only when this builder was given a batch size (their default is exact mode), or in
    // reservation mode: a bucket's reservations are its token claims (every token taken from the
    // store's bucket before it is used, so the nodes never pass the bucket together)
    long batchSize = batches(limit) ? c.batchSize().orElse(SyncConfig.DEFAULT_BATCH_SIZE)
        : !claimsTokens(limit) ? 1
        : reservation && bucketBatchSize == 1 ? c.batchSize().orElse(SyncConfig.DEFAULT_BATCH_SIZE) : bucketBatchSize;
    checkStore(limit, store, reservation, batchSize);
    checkSyncInterval(limit, c.syncInterval());
    if (!batches(limit)) {
      if (reservation && !claimsTokens(limit)) {
        throw new IllegalArgumentException("reservation: a " + limit.algorithm() + " is shared in exact mode only"
            + " (batch size 1: one store script per decision); " + limit.name() + " is one");
      }
      if (limit.algorithm() != Algorithm.SLIDING_WINDOW_LOG) {
        Counter.of(limit); // a refill period in whole microseconds, a burst the store can hold: or a message
      }
    }
    if (c.regions() > 0) {
      checkRegional(limit, store, c, batchSize);
    }
    return batchSize;
  }

  /** A store with what the mode needs: token claims, leases or exact scripts. */
  private static void checkStore(Limit limit, CounterStore store, boolean reservation, long batchSize) {
    if (batchSize > 1 && claimsTokens(limit) && !(store instanceof TokenStore)) {
      throw new IllegalArgumentException("batchSize: a batched " + limit.algorithm() + " needs a store that"
          + " grants token claims (a TokenStore such as RedisCounterStore or HazelcastCounterStore); "
          + store.getClass().getSimpleName() + " is not one");
    }
    if (reservation && batches(limit) && !(store instanceof LeaseStore)) {
      throw new IllegalArgumentException("reservation: needs a store that grants leases (a LeaseStore such as"
          + " RedisCounterStore); " + store.getClass().getSimpleName() + " is not one");
    }
    if (!batches(limit) && !(store instanceof ExactStore)) {
      throw new IllegalArgumentException("limit: " + limit.name() + " is a " + limit.algorithm() + ", shared by"
          + " the store's exact scripts only (an ExactStore such as RedisCounterStore or HazelcastCounterStore); "
          + store.getClass().getSimpleName() + " is not one");
    }
    if (batchSize == 1 && !(reservation && batches(limit)) && !(store instanceof ExactStore)) {
      throw new IllegalArgumentException("batchSize: 1 means exact checking, one store call per decision,"
          + " which needs a store with exact scripts (an ExactStore such as RedisCounterStore); "
          + store.getClass().getSimpleName() + " is not one");
    }
  }

  /**
   * A regional quota: a fixed window or sliding window counter with room for every region in the
   * approximate mode, or a token bucket in exact mode or with token claims, with a failure policy that
   * admits nothing the coordinator does not count; a store that keeps shares.
   */
  private static void checkRegional(Limit limit, CounterStore store, SyncConfig c, long batchSize) {
    Counter counter = Counter.regional(limit, c.regions()); // room for every region, or a message
    if (counter.regionalBucket()) {
      if (c.reservation()) {
        throw new IllegalArgumentException("regionalQuota: a token-bucket quota's share is enforced in exact mode"
            + " (batch size 1: one script per decision on the region's Redis) or with token claims (a bucket"
            + " batch size above 1); not with reservation");
      }
      if (c.onStoreFailure() == StoreFailurePolicy.LOCAL_SHARE) {
        throw new IllegalArgumentException("onStoreFailure: a token-bucket regional quota takes FAIL_CLOSED or"
            + " FAIL_OPEN; LOCAL_SHARE would admit an even part of the static share, which the region coordinator"
            + " does not count for a region whose nodes lost their Redis");
      }
    } else if (c.reservation() || batchSize == 1) {
      throw new IllegalArgumentException("regionalQuota: shares are enforced in the approximate mode; not with "
          + (c.reservation() ? "reservation" : "batchSize 1 (exact mode)"));
    }
    if (!store.sharesRegionalQuotas()) {
      throw new IllegalArgumentException("regionalQuota: needs a store that keeps regional quotas (a standalone"
          + " RedisCounterStore); " + store.getClass().getSimpleName() + " does not");
    }
  }
}
