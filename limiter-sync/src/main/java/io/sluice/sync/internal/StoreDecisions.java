package io.sluice.sync.internal;

import io.sluice.node.Algorithm;
import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.RateLimiter;
import io.sluice.node.Ticker;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.ExactResult;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.ShareRecord;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The decisions one {@link SyncedLimiter} leaves to the store, one call each: exact mode's (batch
 * size 1, the algorithm's own script), a batched bucket's through its token claims ({@link
 * TokenClaims}), and, for buckets and logs, the failure policy's while the store fails (under
 * LOCAL_SHARE an even part of the limit in an in-process limiter of the node's own).
 *
 * <p>Concurrency: called on deciding threads at once; a window view is touched only under its monitor,
 * the meters are {@code LongAdder}s, the store calls go through {@link StoreCalls}.
 */
final class StoreDecisions {
  /** Per thread: what a token decision answers besides its outcome (see TokenClaims#decide). */
  private static final ThreadLocal<long[]> TOKEN_ANSWER = ThreadLocal.withInitial(() -> new long[3]);

  private final Limit limit;
  private final boolean windowed;
  private final long windowNanos;
  private final boolean sliding;
  private final long syncIntervalNanos;
  private final ExactStore exact;
  private final TokenClaims tokens;
  private final LocalShares localShares;
  private final StoreFailurePolicy onStoreFailure;
  private final StoreCalls calls;
  private final ViewTable views;
  private final FlushQueue queue;
  private final Ticker ticker;
  private final java.time.Duration flushTimeout;
  private final Answers answers;
  private final LongAdder fallbackDecisions;
  /** A region's part of a token-bucket global quota (exact mode, its own script); else null. */
  private final Counter regionalBucket;
  /** A regional bucket's share records, per key, as this node last read them (see {@link #acquire}). */
  private final ShareRecords records;
  /** Exact mode: give-backs (release) that failed, leaving their permits spent. */
  private final LongAdder giveBacksFailed = new LongAdder();

  StoreDecisions(LimiterSetup l, LocalShares localShares, FlushQueue queue, Answers answers) {
    this.limit = l.limit;
    this.windowed = l.windowed;
    this.windowNanos = l.windowNanos;
    this.sliding = l.sliding;
    this.syncIntervalNanos = l.syncIntervalNanos;
    this.exact = l.exact;
    this.regionalBucket = l.counter.regionalBucket() ? l.counter : null;
    this.records = l.shareRecords;
    this.tokens = l.tokens;
    this.localShares = localShares;
    this.onStoreFailure = l.onStoreFailure;
    this.calls = l.calls;
    this.views = l.views;
    this.ticker = l.ticker;
    this.flushTimeout = l.flushTimeout;
    this.fallbackDecisions = l.fallbackDecisions;
    this.queue = queue;
    this.answers = answers;
  }

  /** A batched bucket's decision by its token claims; null when the store failed it (the policy decides). */
  Decision onTokens(String key, long cost, int answer, long now) {
    return onTokens(key, cost, answer, now, true);
  }

  /**
   * {@link #onTokens(String, long, int, long)} when the holding decides without the store; null when
   * the decision would ask the store (nothing of the key changed then: it is to be made again where it
   * may wait). A decision made without a store call cannot have failed, so null means only that.
   */
  Decision onTokensWithoutWaiting(String key, long cost, int answer, long now) {
    return onTokens(key, cost, answer, now, false);
  }

  private Decision onTokens(String key, long cost, int answer, long now, boolean mayWait) {
    long[] out = TOKEN_ANSWER.get();
    long askedAt = System.nanoTime();
    int r = tokens.decide(key, cost, now, out, mayWait);
    if (out[2] != 0) {
      calls.waited(askedAt);
    }
    if (r == TokenClaims.WOULD_WAIT) {
      return null;
    }
    if (r == TokenClaims.FAILED) {
      return null;
    }
    // (window 0: decided on the store's bucket; what the failure policy decides carries none)
    return answers.answer(key, r == TokenClaims.ALLOWED, answer, out[0], limit.quotaWindowNanos(), out[1], 0);
  }

  /** A batched bucket's admitted {@code cost} released (another limit of the request denied it): see {@link TokenClaims#released}. */
  void tokensReleased(String key, long cost) {
    tokens.released(key, cost);
  }

  /** Exact mode's decision, one script call; null when the store failed it (the policy decides). */
  Decision exactly(String key, long cost, int answer, long now) {
    long askedAt = System.nanoTime();
    ExactResult r = calls.guarded(() -> acquire(key, cost, TimeUnit.NANOSECONDS.toMicros(now)));
    calls.waited(askedAt);
    return r == null ? null : exactDecision(key, now, cost, r, answer);
  }

  /**
   * {@link #exactly} without waiting: the stage completes with the decision, or with null when the
   * store failed it (the policy decides), on the thread that brought the answer (see {@link
   * StoreCalls#guardedAsync}). The same call, timeout, breaker and meters as {@code exactly}.
   */
  CompletableFuture<Decision> exactlyAsync(String key, long cost, int answer, long now) {
    long askedAt = System.nanoTime();
    return calls.<ExactResult>guardedAsync(() -> acquire(key, cost, TimeUnit.NANOSECONDS.toMicros(now)),
        flushTimeout).thenApply(r -> {
          calls.waited(askedAt);
          return r == null ? null : exactDecision(key, now, cost, r, answer);
        });
  }

  /**
   * The exact script's call: the limit's own, or a regional bucket's, which is given the share record
   * this node last read for the key (so that a region whose Redis lost the key keeps to the share the
   * coordinator counts it at, see {@link ExactStore#acquireRegional}) and answers the record it holds.
   */
  private CompletionStage<ExactResult> acquire(String key, long cost, long nowMicros) {
    if (regionalBucket == null) {
      return exact.acquire(limit, key, cost, nowMicros);
    }
    ShareRecord known = records.known(key);
    return exact.acquireRegional(regionalBucket, key, cost, nowMicros, known).thenApply(d -> {
      records.remember(key, known, d.record());
      return d.result();
    });
  }

  long giveBacksFailed() {
    return giveBacksFailed.sum();
  }

  /**
   * A bucket's or a log's decision while the store fails: the failure policy's. Under LOCAL_SHARE the
   * node keeps to an even part of the limit (the burst and the rate, or the log's limit, divided by the
   * nodes the registry counts) in an in-process limiter of its own, which starts full: nodes cut off
   * together admit at most the limit's burst again, then its rate, whatever the store had counted.
   */
  Decision fallbackDecision(String key, long cost, int answer) {
    fallbackDecisions.increment();
    boolean allowed;
    long remaining = 0;
    long retryAfter = syncIntervalNanos;
    long reset = limit.quotaWindowNanos();
    switch (onStoreFailure) {
      case FAIL_OPEN:
        allowed = true;
        break;
      case FAIL_CLOSED:
        allowed = false;
        break;
      default: {
        RateLimiter part = localShares.limiter();
        // (a cost above the part is denied: the part cannot pay for it however long the node waits)
        if (part == null || cost > part.limit().capacity()) {
          allowed = false;
        } else {
          Decision d = part.acquire(key, cost);
          allowed = d.allowed();
          remaining = d.remaining();
          retryAfter = Math.max(d.retryAfterNanos(), 1);
          reset = d.resetNanos();
        }
      }
    }
    return answers.answer(key, allowed, answer, remaining, reset, retryAfter, Long.MIN_VALUE);
  }

  /** Batch size 1: the store decided, in one script call; the view only keeps this node's own count. */
  private Decision exactDecision(String key, long now, long cost, ExactResult r, int answer) {
    if (r.allowed() && windowed) {
      KeyView view = views.viewFor(key);
      synchronized (view) {
        view.roll(Math.floorDiv(now, windowNanos), queue.orphanSink, sliding);
        view.ownAdmitted(cost);
      }
    }
    // the window the store counted in (the next one where a node whose clock is ahead opened it; for a
    // bucket, the refill period's index): what release gives back to, and the mark of a permit the
    // store took (a fallback's admission has none)
    long window = !r.allowed() || limit.algorithm() == Algorithm.SLIDING_WINDOW_LOG ? Long.MIN_VALUE
        : (windowed || regionalBucket != null) && r.window() >= 0 ? r.window() : Math.floorDiv(now, windowNanos);
    return answers.answer(key, r.allowed(), answer, r.remaining(), TimeUnit.MICROSECONDS.toNanos(r.resetMicros()),
        TimeUnit.MICROSECONDS.toNanos(r.retryAfterMicros()), window);
  }

  /**
   * Exact mode: the store took the permits when it decided; one more script gives them back (a
   * bucket its tokens, a window its count in the decision's window), without waiting for the answer:
   * the request is already denied by another limit, and a give-back that fails leaves the permits
   * spent, which errs on the safe side. Not for the log, nor for what the failure policy admitted
   * while the store failed (such decisions carry no window), nor while the breaker is open. A bucket
   * gets its tokens back at the time of the release: the refill between the acquire and the release
   * (the time the request's other limits took to decide) is not taken off, so a release may leave
   * the bucket that much fuller than had the request never come.
   */
  void giveBackExact(String key, long cost, Decision acquired) {
    if (acquired.window() == Long.MIN_VALUE || calls.open()) {
      return;
    }
    long back = cost;
    KeyView v = windowed ? views.get(key) : null;
    if (v != null) {
      synchronized (v) {
        // at most what this node admitted in that window: releases beyond it hand out no other node's permits
        if (v.window() == acquired.window()) {
          back = Math.min(cost, v.ownCur());
          v.ownReleased(back);
        }
      }
    }
    if (back <= 0) {
      return;
    }
    long nowMicros = TimeUnit.NANOSECONDS.toMicros(ticker.read());
    try {
      (regionalBucket != null ? exact.giveBackRegional(regionalBucket, key, back, nowMicros, acquired.window())
          : exact.giveBack(limit, key, back, nowMicros, acquired.window())).whenComplete((done, failure) -> {
        if (failure != null) {
          giveBacksFailed.increment();
        }
      });
    } catch (RuntimeException e) {
      giveBacksFailed.increment(); // (a store that refuses at once: the permits stay spent)
    }
  }
}
