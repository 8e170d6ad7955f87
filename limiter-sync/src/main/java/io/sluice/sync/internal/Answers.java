package io.sluice.sync.internal;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.LimitListener;
import io.sluice.node.Mode;
import io.sluice.node.Outcome;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.internal.WindowDecisions.Judgement;
import java.util.concurrent.atomic.LongAdder;

/**
 * How one {@link SyncedLimiter} answers a decision, whichever part made it: the outcome (a soft or
 * shadow limit's own for a breach), the decision's numbers, the count of admissions and denials, and
 * the breach told to the listener. {@code tryAcquire} gets one of the prebuilt decisions, which carry
 * no numbers, so that it allocates nothing.
 *
 * <p>Concurrency: immutable but for the {@code LongAdder}s; the listener is called on the deciding
 * thread.
 */
final class Answers {
  /** How a decision answers: its outcome only (one of the prebuilt decisions: tryAcquire allocates nothing). */
  static final int BARE = 0;
  /** A decision of its own, a breach told to the listener. */
  static final int TOLD = 1;
  /** A decision of its own, a breach left for the caller to tell (acquireUntold). */
  static final int UNTOLD = 2;

  private final Limit limit;
  private final LimitListener listener;
  private final long windowNanos;
  private final boolean sliding;
  /** One decision per outcome with no numbers, for {@code tryAcquire}, which reads only the outcome. */
  private final Decision[] bare;
  private final LongAdder admitted = new LongAdder();
  private final LongAdder denied = new LongAdder();

  Answers(Limit limit, LimitListener listener, boolean sliding) {
    this.limit = limit;
    this.listener = listener;
    this.windowNanos = limit.periodNanos();
    this.sliding = sliding;
    this.bare = new Decision[Outcome.values().length];
    for (Outcome o : Outcome.values()) {
      bare[o.ordinal()] = Decision.of(o, limit, 0, 0, 0);
    }
  }

  /** An admission answered with the prebuilt decision (the credit path of {@code tryAcquire}). */
  Decision allowedBare() {
    admitted.increment();
    return bare[Outcome.ALLOWED.ordinal()];
  }

  long admitted() {
    return admitted.sum();
  }

  long denied() {
    return denied.sum();
  }

  /** The decision a window verdict makes: counted, and told to the listener when it is a breach. */
  Decision decision(String key, Judgement j, int answer) {
    Outcome outcome = j.admit ? Outcome.ALLOWED : outcomeOfBreach();
    if (outcome == Outcome.DENIED) {
      denied.increment();
    } else {
      admitted.increment();
    }
    boolean breach = outcome == Outcome.SOFT_EXCEEDED || outcome == Outcome.SHADOW_DENIED;
    if (answer == BARE && !(breach && listener != LimitListener.NONE)) {
      return bare[outcome.ordinal()];
    }
    long now = j.now;
    long reset = (Math.floorDiv(now, windowNanos) + (sliding ? 2 : 1)) * windowNanos - now;
    Decision d = Decision.of(outcome, limit, j.remaining, reset, j.retryAfter, j.countedWindow);
    if (breach && answer != UNTOLD) {
      notifyBreach(key, d);
    }
    return d;
  }

  /** Tells the listener of a soft or shadow limit's breach; a listener must not fail the request. */
  void notifyBreach(String key, Decision d) {
    if (listener == LimitListener.NONE) {
      return;
    }
    try {
      listener.onBreach(limit, key, d);
    } catch (RuntimeException ignored) {
      // (the request goes on: it was allowed)
    }
  }

  /**
   * The decision of a bucket or log, or of the exact mode: counted, the limit's mode applied to a
   * denial (soft and shadow limits answer with their own outcome and notify the listener, unless the
   * caller tells it: {@link #UNTOLD}), and for {@code tryAcquire} ({@link #BARE}) an admission answered
   * with a prebuilt decision.
   */
  Decision answer(String key, boolean allowed, int answer, long remaining, long resetNanos,
      long retryAfterNanos, long window) {
    Outcome outcome = allowed ? Outcome.ALLOWED : outcomeOfBreach();
    if (outcome == Outcome.DENIED) {
      denied.increment();
    } else {
      admitted.increment();
    }
    if (answer == BARE && outcome == Outcome.ALLOWED) {
      return bare[outcome.ordinal()];
    }
    Decision d = Decision.of(outcome, limit, remaining, resetNanos, allowed ? 0 : retryAfterNanos, window);
    if ((outcome == Outcome.SOFT_EXCEEDED || outcome == Outcome.SHADOW_DENIED) && answer != UNTOLD) {
      notifyBreach(key, d);
    }
    return d;
  }

  private Outcome outcomeOfBreach() {
    return limit.mode() == Mode.SOFT ? Outcome.SOFT_EXCEEDED
        : limit.mode() == Mode.SHADOW ? Outcome.SHADOW_DENIED : Outcome.DENIED;
  }
}
