package io.sluice.sync;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.LeaseStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * Reservation mode's arithmetic for a window limit: how much a node asks the store to grant it at
 * once, whether asking may help, the call that asks, and the grant taken into the key's view. Every method that takes a view
 * runs under the view's monitor; the settings are immutable.
 */
final class WindowLeases {
  private final IntSupplier activeNodes;
  private final StoreCalls calls;
  private final WindowClaims claims;
  private final Counter counter;
  private final Limit limit;
  private final LeaseStore store;
  private final long windowNanos;
  private final boolean sliding;

  WindowLeases(SyncedLimiter l, WindowClaims claims) {
    this.activeNodes = l.activeNodes;
    this.calls = l.calls;
    this.claims = claims;
    this.counter = l.counter;
    this.limit = l.limit;
    this.store = l.leases;
    this.windowNanos = l.windowNanos;
    this.sliding = l.sliding;
  }

  /**
   * Reservation mode: asks the store for up to {@code want} permits of the key's window {@code w} at
   * ticker time {@code at}, waiting at most {@code timeout}; null when it did not answer.
   */
  LeaseStore.Lease askLease(String key, long w, long at, long want, long need, Duration timeout) {
    long elapsedMicros = TimeUnit.NANOSECONDS.toMicros(at - w * windowNanos);
    return calls.guarded(() -> store.lease(counter, key, w, elapsedMicros, want, need), timeout);
  }

  /**
   * Reservation mode: how much to ask for at once. Half of a node's share of what is left (so that
   * grants shrink as the budget does and one node cannot take it all), at most the batch size.
   */
  long leaseSize(KeyView view) {
    long left = view.lastRemaining >= 0 ? view.lastRemaining : limit.capacity();
    long nodes = Math.max(1, activeNodes.getAsInt());
    // (nor more than the key is likely to ask until the next regular sync: what a node holds unused
    // at the window's end is budget the others could not have)
    long size = Math.min(claims.batchFor(view), (left + 2 * nodes - 1) / (2 * nodes));
    long expected = claims.expectedUntilSync(view);
    return Math.max(1, expected > 0 ? Math.min(size, expected) : size);
  }

  /** Under the view's monitor: a grant of the view's window, asked for {@code want}, into the view. */
  void takeLeaseAnswer(KeyView v, LeaseStore.Lease lease, long want, long need, long now) {
    v.leased += lease.granted();
    v.globalCur = lease.current();
    v.globalPrev = lease.previous();
    // none granted for a need above 1: less than that was free, and a smaller request may still fit (a
    // hint that the next one asks, as for a claim: see #mayHelp; the store decides)
    v.lastRemaining = lease.granted() == 0 && need > 1
        ? Math.min(need - 1, Math.max(0, limit.capacity() - lease.current()))
        : lease.granted() < want ? 0 : Math.max(0, limit.capacity() - lease.current());
    v.syncedAt = now;
  }

  /**
   * Reservation mode: whether a lease asked for now may grant something: not when the store's last
   * answer in this fixed window left nothing, nor, in a sliding window, before a permit can have
   * faded since that answer.
   */
  boolean mayHelp(KeyView v, long now) {
    if (v.lastRemaining != 0 || v.syncedAt == Long.MIN_VALUE) {
      return true;
    }
    return sliding && now - v.syncedAt >= windowNanos / Math.max(1, v.globalPrev);
  }

  /**
   * Reservation mode, under the view's monitor: takes a grant of at least {@code need} permits, if
   * the store has them, and what the key is likely to ask before the next regular sync; false when
   * the store did not answer.
   */
  boolean leaseNow(KeyView v, long now, long need, Duration claimTimeout) {
    long want = Math.min(limit.capacity(), need + claims.aheadOfDemand(v, now, leaseSize(v)));
    long askedAt = System.nanoTime();
    LeaseStore.Lease lease;
    v.storeCallUnderway = true;
    try {
      lease = askLease(v.key, v.window, now, want, need, claimTimeout);
    } finally {
      v.storeCallUnderway = false;
    }
    calls.waited(askedAt);
    if (lease == null) {
      return false;
    }
    takeLeaseAnswer(v, lease, want, need, now);
    return true;
  }
}
