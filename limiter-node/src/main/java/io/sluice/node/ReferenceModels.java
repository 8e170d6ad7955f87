package io.sluice.node;

import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Deliberately naive models of the five algorithms, written from their textbook definitions with
 * exact big-integer arithmetic and no shared code with the kernels (except the sliding counter's time
 * unit, which is part of its contract). Each answers one request at a time for a single key. They are
 * slow and keep every key's state: for tests, not for deciding. The in-process kernels are checked
 * against them ({@code AlgorithmModelTest}), so are a store's exact scripts (limiter-sync-testkit's
 * {@code ExactStoreContract}) and the batched modes (its accuracy kit's exact algorithm); public so
 * that a store written outside this project can be checked against the same models.
 */
public final class ReferenceModels {
  private ReferenceModels() {
  }

  /** What a model says of one request; times in nanoseconds. */
  public static final class Answer {
    public final boolean allowed;
    public final long remaining;
    /** Nanoseconds until the request could pass; -1 when the model does not define it. */
    public final long retryAfter;
    /** Nanoseconds a shaper holds the request before it passes (0 for every other algorithm). */
    public final long delay;

    Answer(boolean allowed, long remaining, long retryAfter, long delay) {
      this.allowed = allowed;
      this.remaining = remaining;
      this.retryAfter = retryAfter;
      this.delay = delay;
    }

    @Override
    public String toString() {
      return (allowed ? "allowed" : "denied") + " remaining=" + remaining + " retryAfter=" + retryAfter
          + " delay=" + delay;
    }
  }

  /** One key's model. */
  public interface Model {
    /** The answer to a request of {@code cost} permits at {@code now} (nanoseconds, never going back). */
    Answer request(long now, long cost);
  }

  /** The model of {@code limit} for a key first seen at {@code start} (nanoseconds). */
  public static Model of(Limit limit, long start) {
    switch (limit.algorithm()) {
      case TOKEN_BUCKET:
        return new TokenBucket(limit, start);
      case LEAKY_BUCKET:
        return new LeakyMeter(limit, start);
      case LEAKY_BUCKET_SHAPER:
        return new LeakyShaper(limit, start);
      case FIXED_WINDOW:
        return new FixedWindow(limit);
      case SLIDING_WINDOW_LOG:
        return new SlidingLog(limit);
      case SLIDING_WINDOW_COUNTER:
        return new SlidingCounter(limit);
      default:
        throw new AssertionError();
    }
  }

  private static BigInteger big(long v) {
    return BigInteger.valueOf(v);
  }

  private static long ceilDiv(BigInteger a, BigInteger b) {
    BigInteger[] qr = a.divideAndRemainder(b);
    return qr[0].add(qr[1].signum() > 0 ? BigInteger.ONE : BigInteger.ZERO).longValueExact();
  }

  /** Tokens as a fraction with denominator P (the refill period in ns); starts full. */
  static final class TokenBucket implements Model {
    final BigInteger capacity;
    final BigInteger refill;
    final BigInteger period;
    BigInteger tokensTimesPeriod;
    long last;

    TokenBucket(Limit l, long start) {
      capacity = big(l.capacity());
      refill = big(l.refillTokens());
      period = big(l.periodNanos());
      tokensTimesPeriod = capacity.multiply(period);
      last = start;
    }

    @Override
    public Answer request(long now, long cost) {
      tokensTimesPeriod = tokensTimesPeriod.add(big(now - last).multiply(refill)).min(capacity.multiply(period));
      last = now;
      BigInteger need = big(cost).multiply(period);
      if (tokensTimesPeriod.compareTo(need) >= 0) {
        tokensTimesPeriod = tokensTimesPeriod.subtract(need);
        return new Answer(true, tokensTimesPeriod.divide(period).longValueExact(), 0, 0);
      }
      long wait = ceilDiv(need.subtract(tokensTimesPeriod), refill);
      return new Answer(false, tokensTimesPeriod.divide(period).longValueExact(), wait, 0);
    }
  }

  /** Water in the bucket, leaking at the rate; a request adds its cost unless it would overflow. */
  static final class LeakyMeter implements Model {
    final BigInteger capacity;
    final BigInteger leak;
    final BigInteger period;
    BigInteger waterTimesPeriod = BigInteger.ZERO;
    long last;

    LeakyMeter(Limit l, long start) {
      capacity = big(l.capacity());
      leak = big(l.refillTokens());
      period = big(l.periodNanos());
      last = start;
    }

    @Override
    public Answer request(long now, long cost) {
      waterTimesPeriod = waterTimesPeriod.subtract(big(now - last).multiply(leak)).max(BigInteger.ZERO);
      last = now;
      BigInteger full = capacity.multiply(period);
      BigInteger after = waterTimesPeriod.add(big(cost).multiply(period));
      if (after.compareTo(full) <= 0) {
        waterTimesPeriod = after;
        return new Answer(true, full.subtract(after).divide(period).longValueExact(), 0, 0);
      }
      long wait = ceilDiv(after.subtract(full), leak);
      return new Answer(false, full.subtract(waterTimesPeriod).divide(period).longValueExact(), wait, 0);
    }
  }

  /**
   * A queue served at a constant rate: a request waits until the work queued before it is done, and
   * is turned away if the queue would hold more than capacity permits. Time is in ns * leak units.
   */
  static final class LeakyShaper implements Model {
    final long capacity;
    final BigInteger leak;
    final BigInteger period;
    BigInteger busyUntil;

    LeakyShaper(Limit l, long start) {
      capacity = l.capacity();
      leak = big(l.refillTokens());
      period = big(l.periodNanos());
      busyUntil = big(start).multiply(leak);
    }

    @Override
    public Answer request(long now, long cost) {
      BigInteger t = big(now).multiply(leak);
      BigInteger start = busyUntil.max(t);
      BigInteger end = start.add(big(cost).multiply(period));
      BigInteger maxQueue = big(capacity).multiply(period);
      BigInteger queuedAfter = end.subtract(t);
      if (queuedAfter.compareTo(maxQueue) <= 0) {
        busyUntil = end;
        long delay = ceilDiv(start.subtract(t), leak);
        return new Answer(true, maxQueue.subtract(queuedAfter).divide(period).longValueExact(), 0, delay);
      }
      long wait = ceilDiv(queuedAfter.subtract(maxQueue), leak);
      return new Answer(false, maxQueue.subtract(start.subtract(t)).divide(period).longValueExact(), wait, 0);
    }
  }

  static final class FixedWindow implements Model {
    final long limit;
    final long window;
    final Map<Long, Long> counts = new HashMap<>();

    FixedWindow(Limit l) {
      limit = l.capacity();
      window = l.periodNanos();
    }

    @Override
    public Answer request(long now, long cost) {
      long w = Math.floorDiv(now, window);
      long count = counts.getOrDefault(w, 0L);
      if (count + cost <= limit) {
        counts.put(w, count + cost);
        return new Answer(true, limit - count - cost, 0, 0);
      }
      return new Answer(false, limit - count, (w + 1) * window - now, 0);
    }
  }

  /** Every admitted permit's timestamp; those within the window ending now count. */
  static final class SlidingLog implements Model {
    final long limit;
    final long window;
    final List<Long> log = new ArrayList<>();

    SlidingLog(Limit l) {
      limit = l.capacity();
      window = l.periodNanos();
    }

    @Override
    public Answer request(long now, long cost) {
      ArrayDeque<Long> live = new ArrayDeque<>();
      for (long ts : log) {
        if (ts > now - window) {
          live.add(ts);
        }
      }
      if (live.size() + cost <= limit) {
        for (long i = 0; i < cost; i++) {
          log.add(now);
        }
        return new Answer(true, limit - live.size() - cost, 0, 0);
      }
      List<Long> sorted = new ArrayList<>(live);
      long oldestToGo = sorted.get((int) (live.size() + cost - limit - 1));
      return new Answer(false, limit - live.size(), oldestToGo + window - now, 0);
    }
  }

  /** Counts per window; the estimate weighs the previous window by its overlap. */
  static final class SlidingCounter implements Model {
    final long limit;
    final long window;
    final long unit;
    final Map<Long, Long> counts = new HashMap<>();

    SlidingCounter(Limit l) {
      limit = l.capacity();
      window = l.periodNanos();
      unit = SlidingCounterKernel.unitFor(limit, window);
    }

    @Override
    public Answer request(long now, long cost) {
      long w = Math.floorDiv(now, window);
      long cur = counts.getOrDefault(w, 0L);
      long prev = counts.getOrDefault(w - 1, 0L);
      BigInteger wu = big(window / unit);
      BigInteger elapsed = big((now - w * window) / unit);
      // estimate * W = prev * (W - elapsed) + (cur + cost) * W
      BigInteger used = big(prev).multiply(wu.subtract(elapsed)).add(big(cur + cost).multiply(wu));
      BigInteger budget = big(limit).multiply(wu);
      if (used.compareTo(budget) <= 0) {
        counts.put(w, cur + cost);
        return new Answer(true, budget.subtract(used).divide(wu).longValueExact(), -1, 0);
      }
      BigInteger usedNow = used.subtract(big(cost).multiply(wu));
      long remaining = budget.subtract(usedNow).max(BigInteger.ZERO).divide(wu).longValueExact();
      return new Answer(false, remaining, -1, 0);
    }
  }
}
