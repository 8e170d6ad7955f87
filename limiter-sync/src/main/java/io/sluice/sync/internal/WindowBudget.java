package io.sluice.sync.internal;

import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.FlushResult;

/**
 * What a window limit's key is decided against, by the kind of limit, chosen once when the limiter is
 * built ({@link #of}): an ordinary limit's capacity ({@link Ordinary}), or a region's share of a global
 * quota ({@link Regional}), which the region coordinator moves by demand, so that it may grow within a
 * window, a region's denials are demand the coordinator must hear of, and the store's answers carry it.
 *
 * <p>Concurrency: immutable; the methods that take a view run under its monitor.
 */
abstract class WindowBudget {
  static WindowBudget of(LimiterSetup l) {
    return l.regional ? new Regional(l.counter) : new Ordinary(l.limit.capacity());
  }

  /** The budget of the view's window. */
  abstract long capacity(KeyView v);

  /**
   * Whether the budget stays what it is for the whole window, so that a fixed window whose store
   * counts fill it stays full until its end (a regional share may grow within its window).
   */
  abstract boolean fixedWithinWindow();

  /** Whether a denial is demand the store must count (the coordinator weighs a region's denials). */
  abstract boolean countsDenials();

  /**
   * Whether LOCAL_SHARE may admit on the view while the store is out of reach: not a region's node that
   * holds no share for the window (the coordinator counts the region at the shares its leases gave only
   * until they run out, and the static share could push the regions' sum over the quota).
   */
  abstract boolean localShareAllowed(KeyView v);

  /** Under the view's monitor: what the store's answer to delta i says of the budget. */
  abstract void answered(KeyView v, FlushResult result, int i);

  /** An ordinary limit: its capacity, all window long. */
  private static final class Ordinary extends WindowBudget {
    private final long capacity;

    Ordinary(long capacity) {
      this.capacity = capacity;
    }

    @Override
    long capacity(KeyView v) {
      return capacity;
    }

    @Override
    boolean fixedWithinWindow() {
      return true;
    }

    @Override
    boolean countsDenials() {
      return false;
    }

    @Override
    boolean localShareAllowed(KeyView v) {
      return true;
    }

    @Override
    void answered(KeyView v, FlushResult result, int i) {
    }
  }

  /**
   * A region's share of a global quota: the share the store last told the view of, else the static
   * share (the quota divided by the regions).
   */
  private static final class Regional extends WindowBudget {
    private final Counter counter;

    Regional(Counter counter) {
      this.counter = counter;
    }

    @Override
    long capacity(KeyView v) {
      long share = v.share();
      return share >= 0 ? share : counter.staticShare();
    }

    @Override
    boolean fixedWithinWindow() {
      return false;
    }

    @Override
    boolean countsDenials() {
      return true;
    }

    @Override
    boolean localShareAllowed(KeyView v) {
      return v.share() >= 0;
    }

    @Override
    void answered(KeyView v, FlushResult result, int i) {
      long before = capacity(v);
      // (an answer without a share for a window this node holds one for keeps the one it holds: see
      // KeyView#sharesAnswered)
      v.sharesAnswered(result.share(i), result.nextShare(i));
      if (capacity(v) > before) {
        v.denialOutOfDate(); // the coordinator gave more: the cached denial is out of date
      }
    }
  }
}
