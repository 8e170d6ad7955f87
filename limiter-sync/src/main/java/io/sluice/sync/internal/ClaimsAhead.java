package io.sluice.sync.internal;

import io.sluice.sync.spi.Delta;
import java.util.concurrent.TimeUnit;

/**
 * The claims a fixed window's key asks for on the windows after its own ({@link Delta#claimingAhead}):
 * how many, how large, and when a sync renews them. Part of {@link ClaimSizing}, whose demand and limit
 * arithmetic it uses.
 *
 * <p>Concurrency: immutable; every method that reads a view runs under the view's monitor.
 */
final class ClaimsAhead {
  private final ClaimSizing sizing;
  private final boolean sliding;
  private final long syncIntervalNanos;
  private final long windowNanos;

  ClaimsAhead(ClaimSizing sizing, boolean sliding, long syncIntervalNanos, long windowNanos) {
    this.sizing = sizing;
    this.sliding = sliding;
    this.syncIntervalNanos = syncIntervalNanos;
    this.windowNanos = windowNanos;
  }

  /**
   * The most windows a claim asks for ahead of its own: eight, or as many as fit in ten minutes, so
   * that a key does not live in the store for long after its last request; none for windows of more
   * than five minutes, where a key far below its limit holds a claim for the rest of its window
   * anyway and a claim ahead would spare one store call an hour.
   */
  int aheadWindows() {
    long fit = TimeUnit.MINUTES.toNanos(10) / windowNanos;
    return fit < 2 ? 0 : (int) Math.min(Math.min(8, Delta.MAX_AHEAD), fit);
  }

  /**
   * Under the view's monitor: {@code d} (a delta that asks for a claim on the view's window) also
   * asking for claims ahead, on the windows after it, where that saves store calls: a fixed window of
   * an ordinary limit, on a key far below its limit (its rate over all nodes at most a sixteenth of the
   * limit a window: the store lets claims ahead hold an eighth of it, twice that demand) that this node
   * has seen a few times (a measured rate), and whose claims ahead run out within half of their span.
   * Each window's claim is twice this node's demand a window (at least one permit). A key that warms
   * up finds them spread over the nodes whether or not its requests go there: held to an eighth of the
   * limit (a quarter let 8 nodes hold 240 of a limit of 500 on the accuracy kit's ramp, and false
   * denials at the limit went from 0.09% to 1.06% of requests). Such a key, asked a few times a minute
   * or a second on each node, otherwise makes one store call per key, node and window (its first
   * decision there asks for a claim). A key nearer its limit, within a quarter of it, asked a few times a
   * window on this node, asks in its window's last sync interval for a claim on the next window alone
   * (see {@link #windowsAhead}, {@link #claimsAheadDue}). {@code d} as it is otherwise.
   */
  Delta withClaimsAhead(Delta d, KeyView v, long now) {
    int ahead = aheadWindows();
    if (ahead == 0 || sliding || !sizing.asksClaims() || d.want() == 0 || d.window() != v.window()
        || v.aheadThrough() >= v.window() + (ahead + 1) / 2) {
      return d;
    }
    double ownRate = aheadRate(v, now);
    int windows = windowsAhead(v, now, ownRate);
    if (windows == 0) {
      return d;
    }
    // far below the limit: twice this node's demand a window on each; the next window only: what it
    // asks until the first regular sync there tops its claim up (two sync intervals of demand). (A
    // decision's claim call asking as much on its own window too saved 4% of the calls on 1 s windows,
    // and cost 10-37% more key updates per decision on 60 s windows in the accuracy sweep: each such
    // claim was given up by a flush of its own once the key went idle.)
    long perWindow = Math.max(1, (long) Math.ceil(ownRate * 2 * (windows > 1 ? windowNanos : syncIntervalNanos) / 1e9));
    return d.claimingAhead(windows, perWindow);
  }

  /**
   * Under the view's monitor: this node's demand for the key that sizes its claims ahead, permits a
   * second (0: unknown): for a key the view saw through the window before, what this node admitted
   * since that window's start; else the flusher's measure, and where the flusher has not measured it,
   * a key this node has seen once before, a sync interval or more ago (most keys of many-key traffic,
   * at first), counts as one request in the time since. (A first request tells nothing: a hot key's
   * first on a node would hold claims ahead it outgrows at once, and they keep its claims from being
   * given up when idle; nor does a burst's second request, at the same moment.)
   */
  private double aheadRate(KeyView v, long now) {
    double ownRate = sizing.demandRate(v, now);
    if (!(ownRate > 0) && v.rateSince() != Long.MIN_VALUE && v.hits() <= 0 && now - v.rateSince() >= syncIntervalNanos) {
      ownRate = 1e9 / (now - v.rateSince());
    } else if (!(ownRate > 0) && v.rateSince() == Long.MIN_VALUE && v.seenBefore() != Long.MIN_VALUE
        && now - v.seenBefore() >= syncIntervalNanos) {
      ownRate = 1e9 / (now - v.seenBefore()); // (the first request of a view made again: the same, since the last one)
    }
    // for a key the view saw through the window before: what this node admitted since that window's
    // start. The flusher's rate swings by a factor of ten either way on a key asked about once a
    // second (one request in a sync interval reads as several a second, and it halves at each sync
    // without one), and claims ahead sized or refused by it were renewed in few of the windows where
    // they would have spared a decision its store call
    if (v.lastWindowTotal() < 0 && v.ownPrev() == 0) {
      return ownRate;
    }
    long since = windowNanos + Math.max(0, now - v.window() * windowNanos);
    return (v.ownCur() + v.ownPrev()) * 1e9 / since;
  }

  /**
   * Under the view's monitor: how many windows after the view's a claim asks for ahead, at this
   * node's demand {@code ownRate}: {@link #aheadWindows} on a key far below its limit (its rate over
   * all nodes at most a sixteenth of the limit a window), else, in the window's last sync interval,
   * the next window alone for a key within a quarter of its limit that this node expects a request
   * for there. (A key asked a few times a window on each node otherwise made one store call per key,
   * node and window, its first decision in each window waiting for a claim: on Zipf traffic over 1,000
   * keys, ranks 8 to 15, 70% of the node-windows. Within half its limit instead of a quarter, 19% fewer
   * store calls on the accuracy kit's sparse keys at 3 nodes, but a key that rose to its limit in the
   * next window found the last permits held by the nodes that had claimed them: 8 nodes' false
   * denials on its shapes profile 0.168% -> 0.205%, and 0.149% with a quarter.) 0: none.
   */
  private int windowsAhead(KeyView v, long now, double ownRate) {
    if (!(ownRate > 0)) {
      return 0;
    }
    double perWindow = sizing.keyRate(v, now, ownRate) * windowNanos / 1e9;
    if (perWindow <= sizing.capacity(v) / 16.0) {
      return aheadWindows();
    }
    return perWindow <= sizing.capacity(v) / 4.0 && lastSyncOfWindow(v, now) && ownRate * windowNanos / 1e9 >= 1 ? 1 : 0;
  }

  /** Whether {@code now} is in the view's window's last sync interval: the next regular sync comes after it ends. */
  private boolean lastSyncOfWindow(KeyView v, long now) {
    long rest = (v.window() + 1) * windowNanos - now;
    return rest > 0 && rest <= syncIntervalNanos;
  }

  /**
   * Under the view's monitor, at a drain: whether the view should go with this sync, whatever its
   * claim still covers, to renew its claims ahead before they run out: a fixed window's key that holds
   * none beyond its window, in that window's last sync interval, not idle, that this node expects to be
   * asked for in what the claims ahead would cover. Its next window's first decision then finds a
   * claim instead of asking the store and waiting (a key read and write in a flush, where the decision
   * took one script call of its own and its round trip).
   */
  boolean claimsAheadDue(KeyView v, long now) {
    if (aheadWindows() == 0 || sliding || !sizing.asksClaims() || v.aheadThrough() > v.window()
        || v.window() != Math.floorDiv(now, windowNanos) || !lastSyncOfWindow(v, now)
        || v.demandAt() == Long.MIN_VALUE || now - v.demandAt() > sizing.idleAfterNanos(v, now)) {
      return false;
    }
    double ownRate = aheadRate(v, now);
    int windows = windowsAhead(v, now, ownRate);
    return windows > 0 && ownRate * windows * windowNanos / 1e9 >= 1;
  }
}
