package io.sluice.sync.internal;

import io.sluice.node.Ticker;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;

/**
 * How a {@link SyncedLimiter}'s flushes reach the store: each store group's deltas in batches of at
 * most the store's batch size, numbered per group (from the clock in microseconds at start, so a
 * restarted node never reuses a number), sent in waves; a batch that fails or times out is kept and
 * sent again, unchanged, before anything new (the store applies a number once, so a retried batch is
 * never counted twice). What an answer means for the keys is the limiter's: it is handed to
 * {@link Answers#take}, and deltas that did not go are handed back to be sent later.
 *
 * <p>Concurrency: the flusher's, called under the limiter's sync lock only; {@link #numberedSent()}
 * may be read from any thread.
 */
final class BatchSender {

  /** Takes a batch's answer into the views it carried; false keeps the batch for a retry. */
  @FunctionalInterface
  interface Answers {
    boolean take(InFlight batch, long index, FlushResult result);
  }

  private final CounterStore store;
  private final StoreCalls calls;
  private final Ticker ticker;
  /** The store keeps sequence numbers per owner (node and limit). */
  private final String owner;
  private final Duration flushTimeout;
  /** System.nanoTime after which no new batch starts (closing), MAX_VALUE while open. */
  private final LongSupplier closeDeadline;
  private final Answers answers;
  /** Where a delta that did not go (out of time, or behind a failed batch of its group) goes back. */
  private final Consumer<Pending> requeue;
  private final Map<Integer, Long> sequences = new HashMap<>();
  /** Wall-clock microseconds at start: numbers stay above an earlier instance's, should two ever share an owner. */
  private final long firstSequence = System.currentTimeMillis() * 1_000L;
  /** Per group, the batch kept from a failed send, sent again first. */
  private final Map<Integer, InFlight> inFlight = new HashMap<>();
  /** Numbered flushes sent (each send, retries too, gets the next number). */
  private final AtomicLong numberedSent = new AtomicLong();
  /** The node's heartbeat, when one is asked for, on a batch that may carry it (see NodeBeat#withAsked). */
  private final UnaryOperator<Batch> beatRider;

  BatchSender(CounterStore store, StoreCalls calls, Ticker ticker, String owner, Duration flushTimeout,
      LongSupplier closeDeadline, Answers answers, Consumer<Pending> requeue, UnaryOperator<Batch> beatRider) {
    this.beatRider = beatRider;
    this.store = store;
    this.calls = calls;
    this.ticker = ticker;
    this.owner = owner;
    this.flushTimeout = flushTimeout;
    this.closeDeadline = closeDeadline;
    this.answers = answers;
    this.requeue = requeue;
  }

  /** The numbered flushes sent so far (each send, retries too). */
  long numberedSent() {
    return numberedSent.get();
  }

  private Batch batch(int group, List<Pending> part) {
    long seq = sequences.merge(group, firstSequence, (last, one) -> last + 1);
    List<Delta> deltas = new ArrayList<>(part.size());
    for (Pending p : part) {
      deltas.add(p.delta);
    }
    // the store keeps sequences per (node, limit): limits of one node each number their own batches,
    // so one limit's numbers must not make the store take another's batches for replays
    return beatRider.apply(new Batch(owner, group, seq, TimeUnit.NANOSECONDS.toMicros(ticker.read()), deltas));
  }

  /**
   * Sends the groups' batches in waves: each group's next batch, every group's sent before any answer
   * is awaited, so that a sync over many store groups (a Redis Cluster's slots) costs about one round
   * trip per wave, not one per group; within a group, batches go one after the other (its sequence
   * numbers are checked in order). A group whose batch fails keeps it for the next sync, and its later
   * batches wait unchanged; past the deadline (closing) what is left stays unsent. True when all went.
   */
  boolean sendInWaves(List<Map.Entry<Integer, List<Pending>>> groups, long deadline) {
    boolean all = true;
    int[] from = new int[groups.size()];
    while (true) {
      List<Sending> wave = new ArrayList<>();
      List<Integer> waveGroups = new ArrayList<>();
      for (int g = 0; g < groups.size() && wave.size() < MAX_WAVE; g++) {
        List<Pending> list = groups.get(g).getValue();
        if (from[g] >= list.size()) {
          continue;
        }
        if (System.nanoTime() > Math.min(deadline, closeDeadline.getAsLong())) {
          // out of time (closing): the rest stays unsent, for the caller to report
          for (Pending p : list.subList(from[g], list.size())) {
            requeue.accept(p);
          }
          from[g] = list.size();
          all = false;
          continue;
        }
        List<Pending> part = list.subList(from[g], Math.min(list.size(), from[g] + store.maxBatchSize()));
        from[g] += part.size();
        wave.add(start(new InFlight(batch(groups.get(g).getKey(), part), List.copyOf(part))));
        waveGroups.add(g);
      }
      if (wave.isEmpty()) {
        return all;
      }
      RuntimeException thrown = null;
      for (int i = 0; i < wave.size(); i++) {
        Sending sending = wave.get(i);
        boolean taken;
        try {
          taken = finish(sending);
        } catch (RuntimeException e) {
          // (taking an answer in failed: the batch is kept and sent again, a replay the store
          // recognises; the wave's other answers are still read, so no call is left unaccounted)
          thrown = thrown == null ? e : thrown;
          taken = false;
        }
        if (!taken) {
          int g = waveGroups.get(i);
          List<Pending> list = groups.get(g).getValue();
          inFlight.put(groups.get(g).getKey(), sending.flight);
          // later batches of this group wait for the failed one: requeued unchanged
          for (Pending p : list.subList(from[g], list.size())) {
            requeue.accept(p);
          }
          from[g] = list.size();
          all = false;
        }
      }
      if (thrown != null) {
        throw thrown;
      }
    }
  }

  /**
   * The batches kept from a failed sync, sent again first, together (one wave); true when every one
   * was answered, and only then does the sync send anything new.
   */
  boolean resendKept() {
    if (inFlight.isEmpty()) {
      return true;
    }
    List<Map.Entry<Integer, Sending>> kept = new ArrayList<>();
    for (Map.Entry<Integer, InFlight> e : inFlight.entrySet()) {
      kept.add(Map.entry(e.getKey(), start(e.getValue())));
    }
    boolean all = true;
    RuntimeException thrown = null;
    for (Map.Entry<Integer, Sending> e : kept) {
      boolean taken;
      try {
        taken = finish(e.getValue());
      } catch (RuntimeException ex) {
        thrown = thrown == null ? ex : thrown;
        taken = false;
      }
      if (taken) {
        inFlight.remove(e.getKey());
      } else {
        all = false;
      }
    }
    if (thrown != null) {
      throw thrown;
    }
    return all;
  }

  /** Most batches out at once in a wave (a sync over more groups takes more waves). */
  static final int MAX_WAVE = 256;

  /** A batch sent whose answer is not read yet. */
  private static final class Sending {
    final InFlight flight;
    /** Its number among the node's numbered batches (see numberedSent). */
    final long index;
    /** The call, timed to its own answer (not to when the wave got to reading it). */
    final StoreCalls.Started<FlushResult> call;

    Sending(InFlight flight, long index, StoreCalls.Started<FlushResult> call) {
      this.flight = flight;
      this.index = index;
      this.call = call;
    }
  }

  /** Sends one batch through the breaker, without waiting for the answer. */
  private Sending start(InFlight f) {
    long index = numberedSent.incrementAndGet();
    StoreCalls.Started<FlushResult> call = calls.begin(() -> store.flush(f.batch));
    f.sentAt = call.startedAt;
    return new Sending(f, index, call);
  }

  /** Waits for a batch's answer (at most the flush timeout from its start) and takes it in. */
  private boolean finish(Sending s) {
    if (s.call.answer == null) {
      return false;
    }
    FlushResult result = calls.finish(s.call, flushTimeout.toNanos());
    return result != null && answers.take(s.flight, s.index, result);
  }


  static final class Pending {
    final KeyView view;
    final Delta delta;
    /**
     * A delta of the view's current window that gives the node's claim up, or a part of it (see {@link
     * KeyView#releasesInFlight}).
     */
    final boolean release;

    Pending(KeyView view, Delta delta) {
      this(view, delta, false);
    }

    Pending(KeyView view, Delta delta, boolean release) {
      this.view = view;
      this.delta = delta;
      this.release = release;
    }
  }

  static final class InFlight {
    final Batch batch;
    final List<Pending> parts;
    /** System.nanoTime when the batch was last sent. */
    long sentAt;

    InFlight(Batch batch, List<Pending> parts) {
      this.batch = batch;
      this.parts = parts;
    }
  }
}
