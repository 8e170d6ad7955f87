package io.sluice.sync.internal;

import io.sluice.node.Ticker;
import io.sluice.sync.internal.BatchSender.Pending;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;

/**
 * What one sync of the {@link Flusher} takes out of the queue: per queued view, whether it goes now or
 * waits for a later sync (its credit harvested and renewed while what it was granted on holds), and the
 * deltas of the views that go (their windows' counts, the claim each wants, the allowance spent, the
 * settling of a take whose answer never came), put in their store groups' lists for the batch sender.
 *
 * <p>Concurrency: called only by the sync holding the flusher's sync lock; a view is read and written
 * only under its own monitor, one at a time. Its own fields are final; the heat is the flusher's, under
 * the same lock.
 */
final class SyncDrain {
  private final Counter counter;
  private final CounterStore store;
  private final Ticker ticker;
  private final long windowNanos;
  private final long syncIntervalNanos;
  /**
   * An ordinary fixed window's: its permits sent once their window is over go as count-only deltas
   * ({@link Delta#afterItsWindow()}).
   */
  private final boolean countsAfterWindow;
  private final WindowClaims claims;
  /** What a current window's delta carries besides its counts: the mode's claim, if any. */
  private final FlushClaims flushClaims;
  private final FlushQueue queue;
  private final ConcurrentLinkedQueue<KeyView> dirty;
  private final KeyHeat heat;
  private final NodeBeat beats;
  /** Whether the limiter is closing (its last flushes send everything and give every claim up). */
  private final BooleanSupplier closed;
  /** Whether the caller is the flusher's own thread (or there is none: a tool drives the syncs). */
  private final BooleanSupplier onFlusherThread;

  SyncDrain(LimiterSetup l, WindowClaims claims, FlushClaims flushClaims, FlushQueue queue, KeyHeat heat,
      NodeBeat beats, BooleanSupplier closed, BooleanSupplier onFlusherThread) {
    this.counter = l.counter;
    this.store = l.store;
    this.ticker = l.ticker;
    this.windowNanos = l.windowNanos;
    this.syncIntervalNanos = l.syncIntervalNanos;
    this.countsAfterWindow = Delta.goesAfterItsWindow(l.counter);
    this.claims = claims;
    this.flushClaims = flushClaims;
    this.queue = queue;
    this.dirty = queue.dirty;
    this.heat = heat;
    this.beats = beats;
    this.closed = closed;
    this.onFlusherThread = onFlusherThread;
  }

  /**
   * Under the sync lock: drains the queued views into their groups' lists ({@link #drain}); the views
   * with nothing that cannot wait stay queued.
   */
  void drainDirty(boolean everything, Map<Integer, List<Pending>> byGroup, List<KeyView> wantLeases) {
    List<KeyView> later = new ArrayList<>();
    long drainedAt = ticker.read();
    // a round whose beat may ride on a flush sends some of what claims would have held back: the
    // call is made anyway, and the counts it carries keep the other nodes' view of the keys fresh
    boolean carry = beats.asked() && onFlusherThread.getAsBoolean();
    for (KeyView v; (v = dirty.poll()) != null; ) {
      synchronized (v) {
        // (only a view that has spent since its last send as much as its claim has left, so that
        // the answer tops up its claim before it runs out: every view with counts, each a key read
        // and write, was a key update per key and node each second on windows of a minute, where
        // claims last, 2.9 times the key updates of this rule on the accuracy kit's sparse keys; a
        // view with nothing new to count stays held too: a refresh of every held view at each round
        // was 6.5 key updates per decision)
        boolean sends = everything || (carry && (v.unsentPrev() > 0 || v.deniedUnsent() > 0
            || (v.unsentCur() > 0 && v.unsentCur() >= claims.claimHeld(v, drainedAt) - v.pendingCur())));
        if (!drain(v, drainedAt, sends, byGroup, wantLeases)) {
          later.add(v);
        }
      }
    }
    dirty.addAll(later);
  }

  /**
   * Under the view's monitor, at a sync: puts what the view has to send in its group's list (its
   * windows' deltas, the claim it wants, the settling of a take whose answer never came) and notes
   * a lease it wants. False when the view has nothing that cannot wait for a later sync: it stays
   * queued.
   */
  private boolean drain(KeyView v, long drainedAt, boolean everything, Map<Integer, List<Pending>> byGroup,
      List<KeyView> wantLeases) {
    // (a credit may go on paying while the view waits for a later sync: counted, not taken back, unless
    // the view goes now or what it was granted on no longer holds. Taken back at every sync, a key asked
    // about once a sync interval was decided under the monitor every time: on 100,000 keys, most of a
    // decision's cost)
    boolean harvested = !everything && !closed.getAsBoolean() && v.holdsCredit()
        && v.window() == Math.floorDiv(drainedAt, windowNanos);
    if (harvested) {
      if (v.creditFilledBatch()) {
        // the decision that filled the batch asked for this sync: the view goes, as it would have had the
        // decision been judged under the monitor (kept, with its credit renewed, a lasting claim's view
        // went on filling batches and sent none: a ledger on a window of an hour held its permits unsent
        // through a chaos run, and its node's backlog never came back down)
        v.wantSync();
      }
      queue.harvest(v);
    } else {
      queue.settle(v);
    }
    if (v.window() < Math.floorDiv(drainedAt, windowNanos) && claims.windowDone(v)
        && v.unsentPrev() == 0 && !v.prevClaimHeld() && !v.syncWanted() && !v.hasUnsettledTake() && !v.leaseWanted()) {
      // its window is over with nothing left to send: nothing left to say (and no credit: harvested
      // only in the view's window)
      v.dequeue();
      return true;
    }
    if (!keeps(v, drainedAt, everything)) {
      queue.settle(v);
      return send(v, drainedAt, byGroup, wantLeases);
    }
    if (harvested) {
      renewCredit(v, drainedAt);
    }
    return false;
  }

  /**
   * Under the view's monitor, keeping it for a later sync: its credit goes on paying where what it was
   * granted on still holds (the allowance as a decision found it, for two more sync intervals at most; a
   * claim that lasts, while no permit of the window gone by is on its way: on a sliding window what the
   * claim pays then shrinks as that window fades, and the credit was sized before), and is taken back
   * where not.
   */
  private void renewCredit(KeyView v, long drainedAt) {
    if (v.creditFromAllowance()) {
      if (claims.allowances.renewsCredit(v, drainedAt)) {
        v.creditUntil(claims.allowances.creditUntil(v.window(), drainedAt));
        return;
      }
    } else if (v.pendingPrev() == 0 && claims.lasts(v, drainedAt)) {
      v.creditUntil(claims.lastingCreditUntil(v, drainedAt));
      return;
    }
    queue.settle(v);
  }

  /**
   * Under the view's monitor, at a sync: whether the view has nothing that cannot wait for a later
   * sync, and stays queued.
   */
  private boolean keeps(KeyView v, long drainedAt, boolean everything) {
    // (unless it renews its claims ahead: the window ends before the next regular sync)
    boolean renewsAhead = flushClaims.renewsAhead(v, drainedAt);
    if (v.unsentCur() == 0 && v.unsentPrev() == 0 && !v.prevClaimHeld() && v.deniedUnsent() == 0 && v.deniedUnsentPrev() == 0
        && !v.leaseWanted() && !renewsAhead
        && !v.syncWanted() && v.syncedAt() != Long.MIN_VALUE && drainedAt - v.syncedAt() < syncIntervalNanos
        && !closed.getAsBoolean()) {
      // nothing to send and answered within the sync interval: it waits for the regular sync
      // (a claim it holds is given up there if the key went idle), not for every sync another
      // key asked for; a closing limiter's last flushes give such a claim up (ClosedNodeClaimTest)
      return true;
    }
    if (!everything && !closed.getAsBoolean() && !renewsAhead && v.allowedUnsent() == 0 && claims.claimLasts(v, drainedAt)) {
      // a claim that still pays for what the key asks until the next regular sync: its permits
      // are covered (the store counts the claim), so they wait for the claim to run low, the
      // batch to fill or the key to go idle, and a key asked a few times a second costs a few
      // store calls a window, not one per request or sync interval
      heat.update(v, drainedAt);
      return true;
    }
    if (!everything && !closed.getAsBoolean() && !renewsAhead
        && claims.allowances.defers(v, drainedAt, claims.claimHeld(v, drainedAt))) {
      // permits of the allowance alone, far from using it up: they wait for the window's last sync
      // that still counts them within the reserve, with those admitted meanwhile (Allowances#defers)
      heat.update(v, drainedAt);
      return true;
    }
    return false;
  }

  /**
   * Under the view's monitor, its credit taken back: puts what the view has to send in its group's list
   * ({@link #drain}); true (it went there for a flush).
   */
  private boolean send(KeyView v, long drainedAt, Map<Integer, List<Pending>> byGroup, List<KeyView> wantLeases) {
    int out = v.deltasOut(); // (before this drain's own deltas)
    v.dequeueForFlush();
    heat.update(v, drainedAt);
    if (v.leaseWanted()) {
      wantLeases.add(v);
    }
    int group = store.group(counter, v.key());
    List<Pending> list = byGroup.computeIfAbsent(group, g -> new ArrayList<>());
    // a take whose answer never came goes with this flush, on its window's delta
    long settles = v.startSettling(); // (Long.MIN_VALUE: no take to settle)
    addEarlierWindows(v, list, settles);
    // always send the current window, even with nothing new: the answer refreshes the view
    // (in reservation mode the lease answer does that, so only real deltas go)
    if (flushClaims.sendsWithoutPermits() || v.unsentCur() > 0) {
      addCurrentWindow(v, drainedAt, list, settles, out);
    }
    return true;
  }

  /**
   * Under the view's monitor: the deltas of the windows before the view's, the window gone by's
   * permits and claim, and a take of an older window to settle.
   */
  private void addEarlierWindows(KeyView v, List<Pending> list, long settles) {
    if (v.unsentPrev() > 0 || v.prevClaimHeld() || v.deniedUnsentPrev() > 0 || settles == v.window() - 1) {
      // (a delta asks for no claim: it also gives up the one held on the window gone by)
      Delta prev = new Delta(counter, v.key(), v.window() - 1, v.unsentPrev(), v.deniedUnsentPrev());
      boolean settling = settles == v.window() - 1;
      list.add(new Pending(v, settling ? v.settling(prev) : countsAfterWindow ? prev.afterItsWindow() : prev));
      v.prevSent();
    }
    if (settles != Long.MIN_VALUE && settles < v.window() - 1) {
      list.add(new Pending(v, v.settling(new Delta(counter, v.key(), settles, 0))));
      v.settlingSent();
    }
  }

  /**
   * Under the view's monitor: the current window's delta, with the claim the view asks for (and
   * keeps of the one it holds); {@code out}: the view's deltas on their way before this drain's.
   */
  private void addCurrentWindow(KeyView v, long drainedAt, List<Pending> list, long settles, int out) {
    Delta plain = new Delta(counter, v.key(), v.window(), v.unsentCur(), v.deniedUnsent());
    Delta d = flushClaims.asking(v, plain, drainedAt);
    // the node's allowance on the window is spent with its first delta there, used or given up (a key
    // this node flushes is paid for by its claim), so that the reserve goes back to the claims at once;
    // unless the node has used part of it and the delta asks for no claim or the key is far below its
    // limit: the node keeps the rest, spending only what it used, and the key's next requests in the window
    // that no claim pays are admitted without a store call (on a large limit, a key asked a few times a
    // window held no claim after its flush, or one sized to its demand, and a request past it waited
    // for a claim call)
    long reserve = claims.allowances.reserve(v.window(), drainedAt);
    long perKey = claims.allowances.perKey();
    boolean keeps = !closed.getAsBoolean() && v.allowedInWindow() > 0 && v.allowedInWindow() < perKey
        && (d.want() == 0 || claims.sizing.farBelowLimit(v, drainedAt));
    long spentInAll = keeps ? v.allowedInWindow() : perKey;
    long spent = reserve > 0 ? Math.max(0, spentInAll - v.allowanceSpentSoFar()) : 0;
    // (the delta carries what the node has spent in all: the store records it per node, and a flush
    // after an unanswered claim call that spent it spends it again only if the call never arrived)
    if (v.allowedUnsent() > 0 || reserve > 0) {
      d = d.allowing(v.allowedUnsent(), reserve > 0 ? Math.max(spentInAll, v.allowanceSpentSoFar()) : 0, reserve);
    }
    if (countsAfterWindow && v.window() < Math.floorDiv(drainedAt, windowNanos) && settles != v.window()
        && d.aheadWindows() == 0) {
      // a fixed window that is over: its permits are counted and nothing else (no claim on it weighs
      // now; one Redis command instead of a read and a write of the key's claims), and with none
      // there is nothing to say. (Unless it renews the key's claims on the windows after it: those
      // spare the next windows' decisions a store call each.)
      if (v.unsentCur() > 0) {
        list.add(new Pending(v, plain.afterItsWindow(), false));
        v.curSent(0);
      }
      return;
    }
    if (settles == v.window()) {
      d = v.settling(d);
    }
    list.add(flushClaims.sent(v, d, out, settles, drainedAt));
    v.curSent(spent);
  }
}
