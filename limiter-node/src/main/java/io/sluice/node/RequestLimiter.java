package io.sluice.node;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks a request against every limit its {@link Rules} apply. All hard limits must allow it; when
 * one denies, the permits already taken from the others are given back, so a denied request costs no
 * limit anything. Soft and shadow limits are checked and recorded but never deny. Thread-safe.
 *
 * <p>The limits are checked one after another, not as one atomic step: a concurrent request may see
 * permits that are given back a moment later, so near the limit a request can be denied that a
 * strictly serial order would have allowed, never the reverse.
 */
public final class RequestLimiter {
  private final Rules rules;
  private final Ticker ticker;
  private final Map<String, RateLimiter> limiters;

  private RequestLimiter(Builder b) {
    this.rules = b.rules;
    this.ticker = b.ticker;
    Map<String, RateLimiter> map = new LinkedHashMap<>();
    for (Limit limit : rules.limits()) {
      map.put(limit.name(), RateLimiter.builder(limit).ticker(b.ticker).maxKeys(b.maxKeys)
          .listener(b.listener).build());
    }
    this.limiters = Map.copyOf(map);
  }

  public static Builder builder(Rules rules) {
    return new Builder(rules);
  }

  /** The per-limit limiters, for metrics and inspection. */
  public Collection<RateLimiter> limiters() {
    return limiters.values();
  }

  public Rules rules() {
    return rules;
  }

  public Decision check(RequestContext request) {
    return check(request, 1);
  }

  /**
   * Takes {@code cost} permits from every limit that applies. Returns the deciding part (see
   * {@link Decision}) with every part in {@link Decision#parts()}.
   *
   * @throws IllegalArgumentException if no limit applies to the request or the cost is invalid
   */
  public Decision check(RequestContext request, long cost) {
    if (request == null) {
      throw new IllegalArgumentException("request: must not be null");
    }
    List<Rule> applicable = rules.rulesFor(request);
    int n = applicable.size();
    RateLimiter[] used = new RateLimiter[n];
    String[] keys = new String[n];
    long[] results = new long[n];
    int count = 0;
    for (Rule rule : applicable) {
      String key = rule.keyResolver().resolve(request);
      if (key == null) {
        continue;
      }
      RateLimiter limiter = limiters.get(rule.limit().name());
      limiter.checkRequest(key, cost);
      used[count] = limiter;
      keys[count] = key;
      count++;
    }
    if (count == 0) {
      throw new IllegalArgumentException("request: no limit applies to " + request.method() + " " + request.path());
    }
    long now = ticker.read();
    for (int i = 0; i < count; i++) {
      results[i] = used[i].take(keys[i], now, cost);
      if (results[i] < 0 && used[i].limit().mode() == Mode.HARD) {
        for (int j = i - 1; j >= 0; j--) {
          if (results[j] >= 0) {
            used[j].refund(keys[j], now, cost);
          }
        }
        Decision denial = used[i].decisionOf(keys[i], now, results[i]);
        used[i].count(Outcome.DENIED, keys[i], denial);
        List<Decision> parts = new ArrayList<>(i + 1);
        for (int j = 0; j < i; j++) {
          parts.add(used[j].decisionOf(keys[j], now, results[j]));
        }
        parts.add(denial);
        return denial.withParts(parts);
      }
    }
    List<Decision> parts = new ArrayList<>(count);
    Decision deciding = null;
    for (int i = 0; i < count; i++) {
      Decision d = used[i].decisionOf(keys[i], now, results[i]);
      used[i].count(d.outcome(), keys[i], d);
      parts.add(d);
      if (deciding == null || moreTelling(d, deciding)) {
        deciding = d;
      }
    }
    return deciding.withParts(parts);
  }

  /** A breach tells more than an allowance; among allowances, the one closest to its limit. */
  private static boolean moreTelling(Decision a, Decision b) {
    boolean aBreach = a.outcome() != Outcome.ALLOWED;
    boolean bBreach = b.outcome() != Outcome.ALLOWED;
    if (aBreach != bBreach) {
      return aBreach;
    }
    return a.utilization() > b.utilization();
  }

  public static final class Builder {
    private final Rules rules;
    private Ticker ticker = Ticker.cached();
    private int maxKeys = RateLimiter.DEFAULT_MAX_KEYS;
    private LimitListener listener = LimitListener.NONE;

    Builder(Rules rules) {
      if (rules == null) {
        throw new IllegalArgumentException("rules: must not be null");
      }
      this.rules = rules;
    }

    public Builder ticker(Ticker ticker) {
      if (ticker == null) {
        throw new IllegalArgumentException("ticker: must not be null");
      }
      this.ticker = ticker;
      return this;
    }

    /** Most keys held at once by each limit. */
    public Builder maxKeys(int maxKeys) {
      if (maxKeys < 1) {
        throw new IllegalArgumentException("maxKeys: must be positive, got " + maxKeys);
      }
      this.maxKeys = maxKeys;
      return this;
    }

    public Builder listener(LimitListener listener) {
      if (listener == null) {
        throw new IllegalArgumentException("listener: must not be null");
      }
      this.listener = listener;
      return this;
    }

    public RequestLimiter build() {
      return new RequestLimiter(this);
    }
  }
}
