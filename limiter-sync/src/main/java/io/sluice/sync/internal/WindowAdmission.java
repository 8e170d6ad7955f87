package io.sluice.sync.internal;

import io.sluice.node.Decision;
import io.sluice.node.Ticker;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.internal.WindowDecisions.Judgement;

/**
 * A window limit's decisions (fixed window, sliding window counter) in the approximate and reservation
 * modes, on each key's view: a credit that pays is taken without the view's monitor (the
 * allocation-free path of {@code tryAcquire}); every other decision is {@link WindowDecisions}' judgement
 * under the monitor, which asks the store for a claim or a grant where it must, and the failure
 * policy's where the store fails. Exact mode's window limits decide here only by the failure policy
 * ({@link ExactAdmission}). A release takes its permits off what the view has not sent yet, or keeps
 * them to pay for the node's next admissions of the key.
 *
 * <p>Concurrency: no state of its own; called on deciding threads at once; a view is judged and
 * released into only under its monitor.
 */
final class WindowAdmission extends Admission {
  private final Ticker ticker;
  /** Approximate mode: decisions may take a view's credit without its monitor. */
  private final boolean credited;
  /** Reservation mode: a permit given back returns to the node's grant. */
  private final boolean reservation;
  private final StoreCalls calls;
  private final ViewTable views;
  private final FlushQueue queue;
  private final Answers answers;
  private final WindowDecisions windows;

  WindowAdmission(LimiterSetup l, FlushQueue queue, Answers answers, WindowDecisions windows) {
    this.ticker = l.ticker;
    this.credited = l.credited;
    this.reservation = l.leases != null;
    this.calls = l.calls;
    this.views = l.views;
    this.queue = queue;
    this.answers = answers;
    this.windows = windows;
  }

  @Override
  Decision decide(String key, long cost, int answer, long now, boolean fallback) {
    if (answer == Answers.BARE && credited && !fallback) {
      KeyView known = views.get(key);
      int paid = known != null ? known.takeCredit(now, cost) : KeyView.UNPAID;
      if (paid != KeyView.UNPAID) {
        if (paid == KeyView.PAID_SYNC) {
          queue.requestSync();
        }
        return answers.allowedBare();
      }
    }
    return onView(key, cost, answer, now, fallback, false);
  }

  @Override
  Decision decideNow(String key, long cost, int answer, long now, boolean fallback) {
    KeyView view = views.viewFor(key);
    if (view.storeCallUnderway()) {
      return null; // (entering its monitor would wait for that call)
    }
    Judgement j = WindowDecisions.judgement(cost, now, fallback);
    j.noWait = true;
    try {
      Decision d = judgeOn(view, key, answer, j);
      if (d != null || j.wouldWait) {
        return d;
      }
    } finally {
      j.inUse = false;
    }
    // (retired meanwhile: decided on its successor)
    return decideNow(key, cost, answer, ticker.read(), calls.keepsDecisionOut());
  }

  /**
   * {@link #decide}, or null where the decision would wait for the answer to a flush that gives this
   * node's claim on the key up (see {@link SyncedLimiter#acquireUnlessAwaitingRelease}).
   */
  Decision decideUnlessAwaitingRelease(String key, long cost, long now, boolean fallback) {
    Judgement j = WindowDecisions.judgement(cost, now, fallback);
    j.noReleaseWait = true;
    try {
      Decision d = judgeOn(views.viewFor(key), key, Answers.TOLD, j);
      if (d != null || j.wouldWait) {
        return d;
      }
    } finally {
      j.inUse = false;
    }
    // (retired meanwhile: decided on its successor)
    return decideUnlessAwaitingRelease(key, cost, ticker.read(), calls.keepsDecisionOut());
  }

  @Override
  Decision fallbackDecision(String key, long cost, int answer, long now) {
    return onView(key, cost, answer, now, true, true);
  }

  /**
   * The decision on the key's view, under its monitor; one on a view retired from the table meanwhile is
   * made again on its successor, by the failure policy again where {@code policyOnly}.
   */
  private Decision onView(String key, long cost, int answer, long now, boolean fallback, boolean policyOnly) {
    Judgement j = WindowDecisions.judgement(cost, now, fallback);
    try {
      Decision d = judgeOn(views.viewFor(key), key, answer, j);
      if (d != null) {
        return d;
      }
    } finally {
      j.inUse = false;
    }
    return policyOnly ? fallbackDecision(key, cost, answer, ticker.read())
        : decide(key, cost, answer, ticker.read(), calls.keepsDecisionOut());
  }

  /**
   * {@code j} judged on the key's view under its monitor, answered as {@code answer} says; null where the
   * view was retired from the table meanwhile or the judgement would wait ({@link Judgement#noWait},
   * {@link Judgement#noReleaseWait}).
   */
  private Decision judgeOn(KeyView view, String key, int answer, Judgement j) {
    synchronized (view) {
      windows.judge(view, j);
    }
    if (j.retired || j.wouldWait) {
      return null;
    }
    if (j.urgent) {
      queue.requestSync();
    }
    return answers.decision(key, j, answer);
  }

  @Override
  void release(String key, long cost, Decision acquired) {
    KeyView v = views.get(key);
    if (v == null) {
      // a key not in the table was decided on the overflow view, while the table was full (or its
      // view has been dropped since, with its windows over: the window check below refuses those)
      v = views.get(ViewTable.OVERFLOW_KEY);
      if (v == null) {
        return;
      }
    }
    synchronized (v) {
      releaseIntoWindow(v, cost, acquired);
    }
  }

  /** Under the view's monitor: takes the permits off the window they were counted in, if it is still the view's. */
  private void releaseIntoWindow(KeyView v, long cost, Decision acquired) {
    queue.settle(v);
    long back = Math.min(cost, v.ownCur());
    // (only into the window the permits were counted in: after a roll they are that window's, gone by)
    if (v.window() != acquired.window() || v.retired() || back <= 0) {
      return;
    }
    if (reservation) {
      v.ownReleased(back);
      v.grants().add(back); // (the permit came out of the node's grant)
      return;
    }
    queue.pendingPermits.add(-v.released(back));
  }
}
