package io.sluice.envoy;

/**
 * The arithmetic of RLQS assignments: how much of a bucket's limit one stream (one Envoy) asks the
 * store for in an assignment period, from its demand and the demand of every stream sharing the
 * bucket. Pure functions; the store's atomic leases ({@link RlqsBudget}) are what make the shares of
 * all streams sum to at most the limit whatever these return, and these are written so that, with
 * consistent inputs, they already do (no stream's ask is cut short by another's).
 *
 * <p>Demand is a weight from {@link #MIN_WEIGHT} to {@link #FULL_WEIGHT}: a stream's requests (allowed and
 * denied) per unit as a fraction of the limit, in thousandths, never below the floor so that an idle
 * Envoy keeps a little of the budget and its first requests are not all denied. Capping at the full
 * limit keeps the store's sum of weights small (a stream asking for ten times the limit can use no
 * more than all of it).
 */
final class RlqsShares {
  /** The weight of a stream whose demand is the whole limit or more. */
  static final long FULL_WEIGHT = 1_000;
  /** The weight of an idle stream: 1% of a full one. */
  static final long MIN_WEIGHT = 10;

  private RlqsShares() {
  }

  /**
   * A stream's weight for a demand of {@code demandPerUnit} requests per unit of a limit of
   * {@code limit} per unit: {@code 1000 * demand / limit}, within [{@link #MIN_WEIGHT},
   * {@link #FULL_WEIGHT}]. A stream that has not reported yet is counted at the full weight (it may
   * be alone, and then it gets the whole limit).
   */
  static long weight(double demandPerUnit, long limit) {
    if (limit <= 0 || Double.isNaN(demandPerUnit) || demandPerUnit >= limit) {
      return FULL_WEIGHT;
    }
    long w = (long) Math.ceil(FULL_WEIGHT * Math.max(0, demandPerUnit) / limit);
    return Math.max(MIN_WEIGHT, Math.min(FULL_WEIGHT, w));
  }

  /**
   * The permits per unit a stream of weight {@code weight} asks for when the streams sharing the
   * bucket weigh {@code totalWeight} together (its own included): {@code floor(limit * weight /
   * total)}, so that the asks of streams whose weights sum to the total never sum over the limit, and
   * a lone stream (total = its weight) asks for the whole limit. A total below the stream's own
   * weight (the store had not seen it yet) counts as its weight.
   */
  static long want(long limit, long weight, long totalWeight) {
    if (limit <= 0) {
      return 0;
    }
    if (weight <= 0) {
      throw new IllegalArgumentException("weight: must be positive, got " + weight);
    }
    long total = Math.max(weight, totalWeight);
    // limit <= 2^31-1 and weight <= 1000: the product fits a long
    return Math.multiplyExact(limit, weight) / total;
  }

  /**
   * The rate to assign for the rest of period k and all of period k+1 when the stream holds
   * {@code current} of period k and {@code next} of period k+1: the smaller. An assignment sent
   * before period k+1 starts is live in both, and only the smaller share is within both periods'
   * budgets; a larger next share is sent once period k+1 has begun.
   */
  static long spanning(long current, long next) {
    return Math.min(current, next);
  }

  /** A stream's demand in requests per unit from one usage report (allowed and denied over the time elapsed). */
  static double demandPerUnit(long allowed, long denied, long elapsedNanos, long unitNanos) {
    if (elapsedNanos <= 0) {
      throw new IllegalArgumentException("elapsedNanos: must be positive, got " + elapsedNanos);
    }
    double requests = unsigned(allowed) + unsigned(denied);
    return requests * ((double) unitNanos / elapsedNanos);
  }

  /**
   * The demand after a report: the report's own when there was none, else the mean of the two, so
   * that one unusual report interval moves it half way (the next period's share follows demand
   * within a report or two, and a single quiet interval does not give the budget away).
   */
  static double smooth(double previous, double reported) {
    return Double.isNaN(previous) ? reported : (previous + reported) / 2;
  }

  private static double unsigned(long v) {
    return v >= 0 ? v : (double) (v >>> 1) * 2 + (v & 1);
  }
}
