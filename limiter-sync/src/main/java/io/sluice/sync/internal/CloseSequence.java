package io.sluice.sync.internal;

import io.sluice.sync.SyncedLimiter;
import java.util.concurrent.locks.LockSupport;

/**
 * How one {@link SyncedLimiter} closes ({@link SyncedLimiter#close}): stops its flusher, flushes what
 * is left until the flush timeout, leaves the registry with the node's last limiter on the store, and
 * warns of permits the store will not count.
 *
 * <p>Concurrency: no state of its own; the last flushes are syncs like any other, under the flusher's
 * sync lock (waited for until the deadline), on the closing thread.
 */
final class CloseSequence {
  private static final System.Logger LOG = System.getLogger(SyncedLimiter.class.getName());

  private CloseSequence() {
  }

  /** Closes the limiter of {@code l}, whose flusher is {@code flusher}: see {@link SyncedLimiter#close}. */
  static void close(LimiterSetup l, Flusher flusher) {
    if (flusher.closed()) {
      return;
    }
    long deadline = System.nanoTime() + l.flushTimeout.toNanos();
    flusher.stop(deadline);
    while (!flusher.sync(true, deadline) && System.nanoTime() < deadline) {
      LockSupport.parkNanos(10_000_000L);
    }
    if (flusher.lastOfNode() && !l.calls.open()) {
      // out of the registry on purpose: a region coordinator tells this from a node cut off (which may
      // still be admitting) and does not hold the region's shares for it. Only with the node's last
      // limiter on this store: while another still runs, the node is still admitting
      l.calls.guarded(() -> l.store.leave(l.nodeId, System.currentTimeMillis()));
    }
    long left = l.queue.pendingPermits.sum();
    if (left > 0) {
      LOG.log(System.Logger.Level.WARNING, "sluice: limiter {0} (node {1}) closed with {2} admitted permits not"
          + " flushed to the store within the flush timeout ({3} ms): the store does not count them",
          l.limit.name(), l.nodeId, left, l.flushTimeout.toMillis());
    }
  }
}
