package io.sluice.node;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * Checks a request against every limit its {@link Rules} apply. All hard limits must allow it; when
 * one denies, the permits already taken from the others are given back, so a denied request costs no
 * limit anything. Soft and shadow limits are checked and recorded but never deny. Thread-safe.
 *
 * <p>Each limit is enforced by a {@link KeyedLimiter}: an in-process {@link RateLimiter} by default,
 * or whatever {@link Builder#limiters} builds, such as limiter-sync's {@code SyncedLimiter}, so that
 * the same rules hold across every node of a service rather than per process.
 *
 * <p>The limits are checked one after another, not as one atomic step: a concurrent request may see
 * permits that are given back a moment later, so near the limit a request can be denied that a
 * strictly serial order would have allowed, never the reverse.
 */
public final class RequestLimiter implements AutoCloseable {
  private final Rules rules;
  private final Ticker ticker;
  private final Map<String, KeyedLimiter> limiters;
  /** Every limiter an in-process RateLimiter: decided on its kernels directly (no Decision per limit). */
  private final boolean inProcess;

  private RequestLimiter(Builder b) {
    this.rules = b.rules;
    this.ticker = b.ticker;
    Map<String, KeyedLimiter> map = new LinkedHashMap<>();
    boolean all = true;
    try {
      for (Limit limit : rules.limits()) {
        KeyedLimiter limiter = b.factory == null
            ? RateLimiter.builder(limit).ticker(b.ticker).maxKeys(b.maxKeys).listener(b.listener).build()
            : b.factory.apply(limit);
        if (limiter == null || !limiter.limit().equals(limit)) {
          if (limiter != null) {
            limiter.close();
          }
          throw new IllegalArgumentException("limiters: the factory must build a limiter of the limit it is given ("
              + limit.name() + "), got " + (limiter == null ? "null" : "one of " + limiter.limit().name()));
        }
        map.put(limit.name(), limiter);
        all &= limiter instanceof RateLimiter;
      }
    } catch (RuntimeException e) {
      map.values().forEach(KeyedLimiter::close);
      throw e;
    }
    this.limiters = Map.copyOf(map);
    // (the fast path reads one clock for every limit: only for the limiters built here, on b.ticker)
    this.inProcess = all && b.factory == null;
  }

  public static Builder builder(Rules rules) {
    return new Builder(rules);
  }

  /** The per-limit limiters, for metrics and inspection. */
  public Collection<KeyedLimiter> limiters() {
    return limiters.values();
  }

  /** Closes every limiter (a distributed one flushes what it admitted). */
  @Override
  public void close() {
    limiters.values().forEach(KeyedLimiter::close);
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
   * @throws IllegalArgumentException if no limit applies to the request (see {@link
   *     #checkIfAnyApplies}), the cost is invalid, or the request names a plan the rules do not have
   *     and there is no default plan
   */
  public Decision check(RequestContext request, long cost) {
    Decision d = checkIfAnyApplies(request, cost);
    if (d == null) {
      throw new IllegalArgumentException("request: no limit applies to " + request.method() + " " + request.path());
    }
    return d;
  }

  /**
   * {@link #check(RequestContext, long)} for a request that may have no limit: null when none applies
   * (no rule matches it, or none of the matching rules' keys resolves), so that a caller lets such a
   * request pass without evaluating the rules a second time to find out.
   *
   * @throws IllegalArgumentException if the cost is invalid, or the request names a plan the rules do
   *     not have and there is no default plan (the message starts with the field: {@code cost:},
   *     {@code plan:})
   */
  public Decision checkIfAnyApplies(RequestContext request, long cost) {
    if (request == null) {
      throw new IllegalArgumentException("request: must not be null");
    }
    if (!inProcess) {
      return checkEach(request, cost);
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
      RateLimiter limiter = (RateLimiter) limiters.get(rule.limit().name());
      limiter.checkRequest(key, cost);
      used[count] = limiter;
      keys[count] = key;
      count++;
    }
    if (count == 0) {
      return null;
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

  /**
   * {@link #checkIfAnyApplies} over any {@link KeyedLimiter}: each limit decides in turn;
   * when a hard one denies, the permits the limits before it took are given back ({@link
   * KeyedLimiter#release}) and the others are not asked.
   */
  private Decision checkEach(RequestContext request, long cost) {
    Check check = resolve(request, cost);
    if (check == null) {
      return null;
    }
    try {
      for (int i = 0; i < check.apply.size(); i++) {
        if (check.decided(check.apply.get(i).acquireUntold(check.keys.get(i), cost))) {
          return check.denial;
        }
      }
    } catch (RuntimeException e) {
      check.releaseAll(); // (a limiter that failed half way: nothing kept)
      throw e;
    }
    return check.finish();
  }

  /**
   * {@link #checkIfAnyApplies} for a caller that must not block (an event loop): the limits decide
   * in turn through {@link KeyedLimiter#acquireUntoldAsync}, each after the one before answered, so
   * that a denial still costs the others nothing. When every limit decides without waiting for a
   * store, the stage is complete when this returns, decided on the caller's thread; otherwise it
   * completes on the thread that brought the last store answer, and the caller's thread never waits.
   * The stage's value is null when no limit applies.
   *
   * @throws IllegalArgumentException as {@link #checkIfAnyApplies}, before any limit decides
   */
  public CompletionStage<Decision> checkIfAnyAppliesAsync(RequestContext request, long cost) {
    if (request == null) {
      throw new IllegalArgumentException("request: must not be null");
    }
    if (inProcess) {
      return CompletableFuture.completedFuture(checkIfAnyApplies(request, cost)); // (never waits)
    }
    Check check = resolve(request, cost);
    if (check == null) {
      return CompletableFuture.completedFuture(null);
    }
    return check.from(0);
  }

  /** The limits that apply to a request and its key in each, every key and the cost checked; null when none. */
  private Check resolve(RequestContext request, long cost) {
    List<Rule> applicable = rules.rulesFor(request);
    // every key and the cost checked before anything is taken, as on the in-process path
    List<KeyedLimiter> apply = new ArrayList<>(applicable.size());
    List<String> keys = new ArrayList<>(applicable.size());
    for (Rule rule : applicable) {
      String key = rule.keyResolver().resolve(request);
      if (key == null) {
        continue;
      }
      KeyedLimiter limiter = limiters.get(rule.limit().name());
      RateLimiter.checkRequest(limiter.limit(), key, cost);
      apply.add(limiter);
      keys.add(key);
    }
    return apply.isEmpty() ? null : new Check(apply, keys, cost);
  }

  /**
   * One request's decision over any {@link KeyedLimiter}s: each limit decides in turn; when a hard
   * one denies, the permits the limits before it took are given back ({@link KeyedLimiter#release})
   * and the others are not asked. Used by one thread at a time (the async form hands it from one
   * answer's thread to the next, each step after the one before).
   */
  private static final class Check {
    final List<KeyedLimiter> apply;
    final List<String> keys;
    final long cost;
    final List<Decision> parts;
    Decision deciding;
    Decision denial;

    Check(List<KeyedLimiter> apply, List<String> keys, long cost) {
      this.apply = apply;
      this.keys = keys;
      this.cost = cost;
      this.parts = new ArrayList<>(apply.size());
    }

    /** Takes in the next limit's decision: true when it denied (then {@link #denial} is the answer). */
    boolean decided(Decision d) {
      int i = parts.size();
      parts.add(d);
      if (d.outcome() == Outcome.DENIED) {
        releaseTaken(apply, keys, parts, i, cost);
        denial = d.withParts(parts);
        return true;
      }
      if (deciding == null || moreTelling(d, deciding)) {
        deciding = d;
      }
      return false;
    }

    void releaseAll() {
      releaseTaken(apply, keys, parts, parts.size(), cost);
    }

    /** Every limit allowed (or breached softly): their breaches are told now, the deciding part answers. */
    Decision finish() {
      // the request goes on: its soft and shadow breaches are told now (a denied one told none, as on
      // the in-process path)
      for (int i = 0; i < parts.size(); i++) {
        Outcome o = parts.get(i).outcome();
        if (o == Outcome.SOFT_EXCEEDED || o == Outcome.SHADOW_DENIED) {
          apply.get(i).tellBreach(keys.get(i), parts.get(i));
        }
      }
      return deciding.withParts(parts);
    }

    /**
     * The limits from the {@code i}-th on: on this thread while their stages are complete already,
     * then chained on the first that is not (its answer's thread goes on with the rest).
     */
    CompletionStage<Decision> from(int i) {
      for (; i < apply.size(); i++) {
        CompletableFuture<Decision> stage;
        try {
          stage = apply.get(i).acquireUntoldAsync(keys.get(i), cost).toCompletableFuture();
        } catch (RuntimeException e) {
          releaseAll();
          return CompletableFuture.failedFuture(e);
        }
        if (!stage.isDone()) {
          int next = i + 1;
          return stage.handle((d, failure) -> {
            if (failure != null) {
              releaseAll();
              return CompletableFuture.<Decision>failedFuture(unwrap(failure));
            }
            return decided(d) ? CompletableFuture.completedFuture(denial) : from(next);
          }).thenCompose(s -> s);
        }
        Decision d;
        try {
          d = stage.join();
        } catch (CompletionException e) {
          releaseAll();
          return CompletableFuture.failedFuture(unwrap(e));
        }
        if (decided(d)) {
          return CompletableFuture.completedFuture(denial);
        }
      }
      try {
        return CompletableFuture.completedFuture(finish());
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
    }

    private static Throwable unwrap(Throwable t) {
      return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }
  }

  /** Gives back what the allowed parts before {@code end} took, newest first. */
  private static void releaseTaken(List<KeyedLimiter> apply, List<String> keys, List<Decision> parts, int end,
      long cost) {
    for (int j = Math.min(end, parts.size()) - 1; j >= 0; j--) {
      if (parts.get(j).outcome() == Outcome.ALLOWED) {
        apply.get(j).release(keys.get(j), cost, parts.get(j));
      }
    }
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

  /** Builds a {@link RequestLimiter}. */
  public static final class Builder {
    private final Rules rules;
    private Ticker ticker = Ticker.cached();
    private int maxKeys = RateLimiter.DEFAULT_MAX_KEYS;
    private LimitListener listener = LimitListener.NONE;
    private java.util.function.Function<Limit, ? extends KeyedLimiter> factory;

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

    /**
     * Builds the limiter of each limit of the rules (called once per limit, with that limit): for
     * example {@code limit -> SyncedLimiter.builder(limit, store).build()}, so that the rules hold
     * across every node sharing the store. The default builds an in-process {@link RateLimiter} with
     * this builder's ticker, key bound and listener (a factory's limiters carry their own listener,
     * e.g. {@code SyncedLimiter.Builder.listener}). The request limiter closes what it builds.
     */
    public Builder limiters(java.util.function.Function<Limit, ? extends KeyedLimiter> factory) {
      if (factory == null) {
        throw new IllegalArgumentException("limiters: must not be null");
      }
      this.factory = factory;
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
