package io.sluice.sync.internal;

import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Decisions' claim calls of one limiter, many keys per call: while a claim call of a store group (a
 * Redis Cluster slot; one group elsewhere) is on its way, the claim calls other keys' decisions ask
 * for in that group wait in its lane and go together, in one claim-only batch, as soon as it is
 * answered. A lone decision's call goes at once, as before; under concurrent cold keys (many keys
 * each asked a few times a window, the sidecar's usual traffic) the store runs one script, or one
 * call, per batch instead of one per decision, and a decision waits at most for the call under way
 * and then its own.
 *
 * <p>Each decision's deltas keep their own meaning in the shared batch (claim-only deltas are applied
 * key by key, every take with its own token) and each decision reads its own answer at its own
 * place in the batch's. The batch's time is the earliest of its decisions' (a claim's time is where
 * its part of a sliding window's fading starts: the store then counts the claimant's part from no
 * later than the node does).
 *
 * <p>Concurrency: any deciding thread asks (each under its own key's view monitor, which this class
 * never takes); a lane's queue is guarded by the lane; the next batch is sent by the thread that
 * brings the answer of the one before (the store's, or the call timeout's), which only starts an
 * asynchronous call. Lanes are one per group, at most the store's groups (16,384 slots).
 */
final class ClaimLanes {
  /**
   * A decision's place in its batch's answer: the answer (null when the call failed, timed out or was
   * refused) and where the decision's deltas start in it.
   */
  record Answer(FlushResult result, int offset) {}

  private static final Answer NONE = new Answer(null, 0);

  private final ConcurrentHashMap<Integer, Lane> lanes = new ConcurrentHashMap<>();
  private final StoreCalls calls;
  private final CounterStore store;
  private final Flusher flusher;
  private final Duration timeout;
  private final String caller;
  private final int maxDeltas;

  ClaimLanes(StoreCalls calls, CounterStore store, Flusher flusher, Duration timeout, String caller) {
    this.calls = calls;
    this.store = store;
    this.flusher = flusher;
    this.timeout = timeout;
    this.caller = caller;
    this.maxDeltas = Math.max(1, store.maxBatchSize());
  }

  /**
   * Sends {@code deltas} (one key's) in the next claim-only batch of {@code group} and waits, at most
   * the claim timeout, for the answer: null when there was none (the failure policy decides; a take
   * in a call still under way is settled by the key's next flush, as any take whose answer never
   * came). A call that goes at once is waited for until it ends, which its own timeout bounds, so
   * that the breaker has heard of a call that timed out by the time its decision is made.
   */
  Answer ask(int group, List<Delta> deltas, long nowMicros) {
    Ask ask = new Ask(deltas, nowMicros);
    Lane lane = lanes.computeIfAbsent(group, Lane::new);
    List<Ask> now = null;
    synchronized (lane) {
      lane.queued.add(ask);
      if (!lane.busy) {
        lane.busy = true;
        now = lane.next(maxDeltas);
      }
    }
    if (now != null) {
      send(lane, now);
    }
    long waitNanos = timeout.toNanos();
    if (now != null) {
      // its call went at once, bounded by the claim timeout: its answer (the call's, or null once the
      // call failed or timed out, the breaker told) always comes; the margin only guards the wait
      waitNanos += TimeUnit.SECONDS.toNanos(1);
    }
    try {
      Answer answer = ask.answer.get(waitNanos, TimeUnit.NANOSECONDS);
      return answer.result == null ? null : answer;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      ask.abandoned = true;
      return null;
    } catch (TimeoutException | ExecutionException e) {
      // queued behind a call, its own went late: it waited the claim timeout (the breaker hears of
      // its call when that ends; one not sent yet never goes)
      ask.abandoned = true;
      return null;
    }
  }

  /**
   * Sends a batch of asks, and the lane's next ones as each is answered: in a loop while the store
   * answers at once (an in-memory store, in the caller's thread), else from the answer's thread.
   */
  private void send(Lane lane, List<Ask> first) {
    for (List<Ask> asks = first; asks != null; ) {
      List<Delta> deltas = new ArrayList<>();
      long nowMicros = Long.MAX_VALUE;
      for (Ask a : asks) {
        deltas.addAll(a.deltas);
        nowMicros = Math.min(nowMicros, a.nowMicros);
      }
      Batch batch = flusher.withAskedBeat(new Batch(caller, lane.group, Batch.CLAIM_ONLY, nowMicros, deltas));
      CompletableFuture<FlushResult> call;
      try {
        call = calls.guardedAsync(() -> store.flush(batch), timeout);
      } catch (RuntimeException e) {
        call = CompletableFuture.completedFuture(null); // (it does not throw; a lane must never stall on one)
      }
      if (!call.isDone()) {
        List<Ask> sent = asks;
        // (guardedAsync's stage never completes exceptionally: a failure is a null answer)
        call.whenComplete((result, failure) -> {
          List<Ask> next = answered(lane, batch, sent, failure == null ? result : null);
          if (next != null) {
            send(lane, next);
          }
        });
        return;
      }
      asks = answered(lane, batch, asks, call.getNow(null));
    }
  }

  /** Completes a batch's asks with its answer; the lane's next asks to send (null: the lane is idle). */
  private List<Ask> answered(Lane lane, Batch batch, List<Ask> asks, FlushResult result) {
    if (batch.beats()) {
      flusher.beatCarried(result);
    }
    int offset = 0;
    for (Ask a : asks) {
      a.answer.complete(result == null ? NONE : new Answer(result, offset));
      offset += a.deltas.size();
    }
    synchronized (lane) {
      List<Ask> next = lane.next(maxDeltas);
      if (next == null) {
        lane.busy = false;
      }
      return next;
    }
  }

  /** One decision's claim call: its key's deltas, the time it was asked at, and its answer. */
  private static final class Ask {
    final List<Delta> deltas;
    final long nowMicros;
    final CompletableFuture<Answer> answer = new CompletableFuture<>();
    /** Its decision stopped waiting before the call went: it never goes. */
    volatile boolean abandoned;

    Ask(List<Delta> deltas, long nowMicros) {
      this.deltas = deltas;
      this.nowMicros = nowMicros;
    }
  }

  /** A group's queue of asks not sent yet, and whether a call of the group is on its way. */
  private static final class Lane {
    final int group;
    final ArrayDeque<Ask> queued = new ArrayDeque<>();
    boolean busy;

    Lane(int group) {
      this.group = group;
    }

    /** Under the lane's monitor: the asks of the next batch, at most {@code maxDeltas} deltas (null: none). */
    List<Ask> next(int maxDeltas) {
      List<Ask> batch = null;
      int size = 0;
      while (!queued.isEmpty()) {
        Ask a = queued.peek();
        if (a.abandoned) {
          queued.poll();
          continue;
        }
        if (batch != null && size + a.deltas.size() > maxDeltas) {
          break;
        }
        queued.poll();
        if (batch == null) {
          batch = new ArrayList<>();
        }
        batch.add(a);
        size += a.deltas.size();
      }
      return batch;
    }
  }
}
