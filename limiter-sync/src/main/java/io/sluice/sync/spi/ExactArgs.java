package io.sluice.sync.spi;

import io.sluice.node.Algorithm;
import io.sluice.node.Limit;

/**
 * What an exact acquire ({@link ExactStore}), a lease ({@link LeaseStore}) and a token claim
 * ({@link TokenStore}) may ask, checked one way for every store. The Redis scripts compute in doubles
 * (integers exact below 2^53) and the Hazelcast entry processors in longs; both stores accept the
 * very same requests, refuse the rest with the same message (starting with the field), and round
 * alike, so that a limit behaves the same on either.
 */
public final class ExactArgs {
  /** Latest time an exact acquire may carry (year 2112): sums of times and windows stay below 2^53. */
  static final long MAX_NOW_MICROS = 1L << 52;
  /** Longest window of an exact acquire (about 71 years). */
  static final long MAX_WINDOW_MICROS = 1L << 51;

  private ExactArgs() {
  }

  /** The checks {@link ExactStore#acquire} promises, before anything is sent. */
  public static void checkAcquire(Limit limit, String key, long cost, long nowMicros) {
    if (limit == null) {
      throw new IllegalArgumentException("limit: must not be null");
    }
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("key: must not be null or empty");
    }
    if (cost < 1 || cost > limit.capacity()) {
      throw new IllegalArgumentException("cost: must be between 1 and the capacity " + limit.capacity()
          + " of limit " + limit.name() + ", got " + cost);
    }
    if (nowMicros < 0 || nowMicros > MAX_NOW_MICROS) {
      throw new IllegalArgumentException("nowMicros: must be between 0 and 2^52 (microseconds since the epoch),"
          + " got " + nowMicros);
    }
  }

  /**
   * The checks {@link ExactStore#acquireRegional} and {@link ExactStore#giveBackRegional} promise: a
   * regional bucket's counter, a key, a cost within the region's part of the burst, a time in range.
   */
  public static void checkRegional(Counter counter, String key, long cost, long nowMicros) {
    if (counter == null || !counter.regionalBucket()) {
      throw new IllegalArgumentException("counter: must be a regional token bucket's (Counter.regional), got "
          + counter);
    }
    checkAcquire(counter.limit(), key, 1, nowMicros);
    if (cost < 1 || cost > counter.staticBurst()) {
      throw new IllegalArgumentException("cost: must be between 1 and the region's part " + counter.staticBurst()
          + " of the burst of limit " + counter.limit().name() + ", got " + cost);
    }
  }

  /** The checks {@link TokenStore#claimRegionalTokens} promises, before anything is sent. */
  public static void checkRegionalClaim(Counter counter, String key, long want, long need, long nowMicros,
      long unused, long ifAt, long ifBacklog) {
    checkRegional(counter, key, 1, nowMicros); // (the counter, key and time; the want is checked below)
    if (want < 1 || want > counter.staticBurst()) {
      throw new IllegalArgumentException("want: must be between 1 and the region's part " + counter.staticBurst()
          + " of the burst of limit " + counter.limit().name() + ", got " + want);
    }
    if (need < 0 || need > want) {
      throw new IllegalArgumentException("need: must be between 0 and want " + want + ", got " + need);
    }
    checkUnused(unused, ifAt, ifBacklog);
  }

  /**
   * The checks {@link TokenStore#claimTokens} promises, before anything is sent; answers the limit's
   * counter. Every number the claim computes stays below 2^53: the burst ({@link Counter#of}) and the
   * horizon in scaled units together fit 2^52, so does a give-back's units, and so do the backlogs a
   * claim writes (at most the two together).
   */
  /**
   * Checks a claim's conditional give-back (see {@link
   * TokenStore#claimTokens(Limit, String, long, long, long, long, long, long, long, long)}).
   */
  public static void checkUnused(long unused, long ifAt, long ifBacklog) {
    if (unused < 0 || unused > Counter.LUA_MAX_EXACT / 2) {
      throw new IllegalArgumentException("unused: must be between 0 and 2^52 (scaled units), got " + unused);
    }
    if (ifAt < 0 || ifAt > MAX_NOW_MICROS) {
      throw new IllegalArgumentException("ifAt: must be between 0 and 2^52, got " + ifAt);
    }
    if (ifBacklog < 0 || ifBacklog > Counter.LUA_MAX_EXACT / 2) {
      throw new IllegalArgumentException("ifBacklog: must be between 0 and 2^52, got " + ifBacklog);
    }
  }

  public static Counter checkClaim(Limit limit, String key, long want, long need, long giveBack, long horizonMicros,
      long nowMicros) {
    if (limit == null) {
      throw new IllegalArgumentException("limit: must not be null");
    }
    if (limit.algorithm() != Algorithm.TOKEN_BUCKET && limit.algorithm() != Algorithm.LEAKY_BUCKET) {
      throw new IllegalArgumentException("limit: tokens are claimed from a token bucket or a leaky bucket meter, not "
          + limit.algorithm() + " (limit " + limit.name() + ")");
    }
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("key: must not be null or empty");
    }
    if (nowMicros < 0 || nowMicros > MAX_NOW_MICROS) {
      throw new IllegalArgumentException("nowMicros: must be between 0 and 2^52 (microseconds since the epoch),"
          + " got " + nowMicros);
    }
    Counter c = Counter.of(limit); // whole microseconds, 53-bit burst: or a message naming the field
    long burst = limit.capacity() * c.interval();
    long room = Counter.LUA_MAX_EXACT / 2 - burst;
    if (horizonMicros < 0 || horizonMicros > TokenStore.MAX_HORIZON_MICROS
        || (horizonMicros > 0 && c.scale() > room / horizonMicros)) {
      throw new IllegalArgumentException("horizonMicros: must be between 0 and " + TokenStore.MAX_HORIZON_MICROS
          + " and keep capacity * interval + horizon * scale within 2^52 (at most " + room / c.scale()
          + " us for limit " + limit.name() + "), got " + horizonMicros);
    }
    if (giveBack < 0 || giveBack > Counter.LUA_MAX_EXACT / 2 / c.interval()) {
      throw new IllegalArgumentException("giveBack: must be between 0 and " + Counter.LUA_MAX_EXACT / 2 / c.interval()
          + " for limit " + limit.name() + ", got " + giveBack);
    }
    // the most a claim can grant: a full bucket and the whole horizon's refill
    long most = limit.capacity() + horizonMicros * c.scale() / c.interval();
    if (want < (giveBack > 0 ? 0 : 1) || want > most) {
      throw new IllegalArgumentException("want: must be between " + (giveBack > 0 ? 0 : 1) + " and " + most
          + " (the capacity and the tokens refilled in " + horizonMicros + " us) for limit " + limit.name() + ", got "
          + want);
    }
    if (need < 0 || need > want) {
      throw new IllegalArgumentException("need: must be between 0 and want " + want + ", got " + need);
    }
    return c;
  }

  /** The checks of a lease, before anything is sent; answers the limit's window in microseconds. */
  public static long checkLease(Counter counter, String key, long want, long need) {
    long windowMicros = checkLease(counter, key, want);
    if (need < 1 || need > want) {
      throw new IllegalArgumentException("need: must be between 1 and want " + want + ", got " + need);
    }
    return windowMicros;
  }

  public static long checkLease(Counter counter, String key, long want) {
    Limit limit = counter.limit();
    if (counter.kind() != Counter.Kind.WINDOW) {
      throw new IllegalArgumentException("counter: leases are taken from window limits, not " + limit.algorithm());
    }
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("key: must not be null or empty");
    }
    if (want < 1 || want > limit.capacity()) {
      throw new IllegalArgumentException("want: must be between 1 and the limit " + limit.capacity() + ", got " + want);
    }
    return windowMicros(limit);
  }

  /**
   * The sliding estimate's unit of a lease, microseconds; 0 for a fixed window, where the window
   * before does not count.
   */
  public static long leaseUnitMicros(Limit limit, long windowMicros) {
    return limit.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER ? slidingUnitMicros(limit.capacity(), windowMicros) : 0;
  }

  /** A lease's time into its window, kept inside the window (a node's clock may be a little off). */
  public static long leaseElapsedMicros(long elapsedMicros, long windowMicros) {
    return Math.max(0, Math.min(windowMicros - 1, elapsedMicros));
  }

  /** The window of a window limit (or log) in whole microseconds, or a message naming {@code window}. */
  public static long windowMicros(Limit limit) {
    long nanos = limit.periodNanos();
    if (nanos % 1_000 != 0) {
      throw new IllegalArgumentException("window: must be a whole number of microseconds for a distributed store,"
          + " got " + nanos + " ns in limit " + limit.name());
    }
    if (nanos / 1_000 > MAX_WINDOW_MICROS) {
      throw new IllegalArgumentException("window: at most 2^51 us for a distributed store, got " + nanos
          + " ns in limit " + limit.name());
    }
    return nanos / 1_000;
  }

  /**
   * The sliding window counter's time unit in the store, in microseconds: the smallest power of 1000
   * for which {@code 3 * limit * (window / unit)} fits Lua's 53-bit integers and which is no finer than
   * the unit limiter-node's kernel uses for the same limit (its {@code unitFor}: the smallest power of
   * 1000 ns for which {@code 3 * limit * window} fits a long), so that both round elapsed time alike
   * whenever the store can.
   */
  public static long slidingUnitMicros(long limit, long windowMicros) {
    long windowNanos = windowMicros * 1_000;
    long kernelUnitNanos = 1;
    while (windowNanos / kernelUnitNanos > Long.MAX_VALUE / 3 / limit) {
      kernelUnitNanos *= 1000;
    }
    long unit = 1;
    while (unit * 1_000 < kernelUnitNanos || windowMicros / unit > Counter.LUA_MAX_EXACT / 3 / limit) {
      unit *= 1000;
    }
    return unit;
  }
}
