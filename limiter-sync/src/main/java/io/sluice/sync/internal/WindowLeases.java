package io.sluice.sync.internal;

import io.sluice.node.Limit;
import io.sluice.node.Ticker;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.LeaseStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * Reservation mode's arithmetic for a window limit: how much a node asks the store to grant it at
 * once, whether asking may help, the call that asks, and the grant taken into the key's view. Every method that takes a view
 * runs under the view's monitor, but {@link #takeSyncLeases}, which takes each view's monitor in turn (the flusher's
 * thread, with no monitor held); the settings are immutable.
 */
final class WindowLeases {
  private final IntSupplier activeNodes;
  /** Whether the node count is one the node can act on (see NodeBeat#countConfirmed). */
  private final BooleanSupplier nodeCountConfirmed;
  private final StoreCalls calls;
  private final WindowClaims claims;
  private final Counter counter;
  private final Limit limit;
  private final LeaseStore store;
  private final long windowNanos;
  private final boolean sliding;
  /** The store's exact scripts, which give a window's permits back (null: a store without them). */
  private final ExactStore windows;
  private final Ticker ticker;
  private final long syncIntervalNanos;

  WindowLeases(LimiterSetup l, WindowClaims claims) {
    this.activeNodes = l.activeNodes;
    this.nodeCountConfirmed = l.nodeCountConfirmed;
    this.calls = l.calls;
    this.claims = claims;
    this.counter = l.counter;
    this.limit = l.limit;
    this.store = l.leases;
    this.windowNanos = l.windowNanos;
    this.sliding = l.sliding;
    this.windows = l.store instanceof ExactStore ? (ExactStore) l.store : null;
    this.ticker = l.ticker;
    this.syncIntervalNanos = l.syncIntervalNanos;
  }

  /**
   * At a sync (the flusher's thread): asks the store for each view's next grant and adds it to the
   * view. Every call goes out before any answer is waited for (one round trip for the sync's leases,
   * not one per key), and the answers are taken in the order asked, before the sync's flushes go; each
   * waited for at most {@code timeout}. A view whose grant did not come is handed to {@code toSync},
   * queued again: its lease is asked for at the next sync.
   */
  void takeSyncLeases(List<KeyView> wanted, Duration timeout, Consumer<KeyView> toSync) {
    if (wanted.isEmpty()) {
      return;
    }
    // (a view queued again by a decision while this sync drained it is in the list twice: one lease)
    List<KeyView> views = new ArrayList<>(new LinkedHashSet<>(wanted));
    List<StoreCalls.Started<LeaseStore.Lease>> asked = new ArrayList<>(views.size());
    long[] ws = new long[views.size()];
    long[] wants = new long[views.size()];
    for (int i = 0; i < views.size(); i++) {
      KeyView v = views.get(i);
      long at = ticker.read();
      synchronized (v) {
        ws[i] = v.window();
        wants[i] = leaseSize(v, at);
      }
      asked.add(beginLease(v.key(), ws[i], at, wants[i], 1));
    }
    int taken = 0;
    try {
      for (; taken < asked.size(); taken++) {
        takeSyncLease(views.get(taken), ws[taken], wants[taken], awaitLease(asked.get(taken), timeout), toSync);
      }
    } finally {
      // every call begun is awaited, so that the breaker hears of each (a half-open breaker's permits
      // would otherwise stay taken); the views' leases are asked for again at the next sync
      for (int i = taken + 1; i < asked.size(); i++) {
        awaitLease(asked.get(i), timeout);
        requeueLease(views.get(i), toSync);
      }
    }
  }

  /** A lease asked for and not taken in: asked for again on the next round. */
  private static void requeueLease(KeyView v, Consumer<KeyView> toSync) {
    synchronized (v) {
      v.grants().wanted(false);
      if (v.enqueue()) {
        v.grants().wanted(true);
        toSync.accept(v);
      }
    }
  }

  /** A view's grant of window {@code w}, asked for {@code want}, into the view; null: it did not come. */
  private void takeSyncLease(KeyView v, long w, long want, LeaseStore.Lease lease, Consumer<KeyView> toSync) {
    synchronized (v) {
      if (lease == null) {
        requeueLease(v, toSync); // ask again on the next round
        return;
      }
      v.grants().wanted(false);
      if (v.window() != w) {
        return; // the window ended while we asked: the grant is given up (under-admission only)
      }
      takeLeaseAnswer(v, lease, want, 1, ticker.read());
    }
  }

  /**
   * Reservation mode: asks the store for up to {@code want} permits of the key's window {@code w} at
   * ticker time {@code at}, waiting at most {@code timeout}; null when it did not answer.
   */
  LeaseStore.Lease askLease(String key, long w, long at, long want, long need, Duration timeout) {
    return awaitLease(beginLease(key, w, at, want, need), timeout);
  }

  /**
   * {@link #askLease} without waiting: the call goes out now and its answer is read with
   * {@link #awaitLease}, so that a sync asks every key's lease before it waits for any.
   */
  StoreCalls.Started<LeaseStore.Lease> beginLease(String key, long w, long at, long want, long need) {
    long elapsedMicros = TimeUnit.NANOSECONDS.toMicros(at - w * windowNanos);
    return calls.begin(() -> store.lease(counter, key, w, elapsedMicros, want, need));
  }

  /** The answer of a lease call begun, waiting at most {@code timeout} from its start; null when it did not answer. */
  LeaseStore.Lease awaitLease(StoreCalls.Started<LeaseStore.Lease> asked, Duration timeout) {
    return calls.finish(asked, timeout.toNanos());
  }

  /**
   * Reservation mode: how much to ask for at once. A node alone (the registry has confirmed it): half
   * of what is left; with others, an eighth of its even share of it (so that grants shrink as the budget does, and what the nodes
   * hold unused when the budget runs out is a small part of it), at most the batch size.
   */
  long leaseSize(KeyView view, long now) {
    long last = view.grants().lastRemaining();
    long left = last >= 0 ? last : limit.capacity();
    long nodes = Math.max(1, activeNodes.getAsInt());
    if (nodes == 1 && !nodeCountConfirmed.getAsBoolean()) {
      // a node that counts itself alone before the registry has confirmed it (nodes started together
      // beat one after the other, and the first counts only itself until its next beat) asks as one
      // of two: half of what was left held the rest of a burst key's window from the nodes started
      // beside it (the accuracy kit's shapes, fixed, 3 nodes, on another seed set: 0.81% of requests
      // denied that the exact algorithm admitted, 0.49% not made up; 0 now)
      nodes = 2;
    }
    // (grants are taken first come, first served: what one node holds unused when the budget runs
    // out, another node's requests are denied for. Half of an even share held so at 5 nodes a limit
    // of 20 spent with 10 used, and a key at half its limit was denied; the accuracy kit, false
    // denials at 8 nodes on its shapes profile, fixed windows 0.526% -> 0.083%, sliding 2.313% ->
    // 1.234%, for 34% more store calls there)
    long part = nodes == 1 ? (left + 1) / 2 : (left + 8 * nodes - 1) / (8 * nodes);
    // (nor more than the key is likely to ask until the next regular sync: what a node holds unused
    // at the window's end is budget the others could not have)
    long size = Math.min(claims.sizing.batchFor(view), part);
    long expected = claims.sizing.expectedUntilSync(view);
    size = Math.max(1, expected > 0 ? Math.min(size, expected) : size);
    double rate = sliding ? claims.sizing.askedRate(view, now) : 0;
    if (rate > 0) {
      // nor, in a sliding window, more than it is likely to ask before the window ends: the store
      // counted the grant, so what is left unused at the end weighs in the next window as the previous
      // one's count, budget lost for a whole window more
      long rest = Math.max(0, (view.window() + 1) * windowNanos - now);
      size = Math.max(1, Math.min(size, (long) Math.ceil(rate * rest / 1e9)));
    }
    return size;
  }

  /**
   * Reservation mode, sliding window, under the view's monitor as it rolls into a new window: gives
   * the store back what the view's grant on the window gone by left unused
   * ({@link LeaseGrants#takeLeftover}), so that the previous window's count weighs only what the nodes
   * admitted. One call per key and window that left some, not waited for: a give-back that fails
   * leaves the permits spent, which errs on the safe side. Nothing while the breaker is open.
   * (Counted as spent, such grants weighed 7 to 25 permits more than the node admitted in the accuracy
   * kit's shapes profile, at one node; given back, its false denials there went from 1.9% to 0.)
   */
  void giveBackLeftover(KeyView v, long now) {
    long back = v.grants().takeLeftover();
    if (windows == null || calls.open()) {
      return;
    }
    try {
      windows.giveBack(limit, v.key(), back, TimeUnit.NANOSECONDS.toMicros(now), v.window() - 1);
    } catch (RuntimeException e) {
      // (a store that refuses at once: the permits stay spent)
    }
  }

  /**
   * Reservation mode, under the view's monitor, at a closing limiter's last flush (and for an idle key,
   * {@link #giveBackIdle}): gives the store back what the node holds of its grant on the view's window,
   * so that the store's count no longer holds permits
   * for a node that is gone (a lease of 9 on a window of 10 per 15 minutes, left by a node that closed,
   * held the node started in its place to 1 permit: WindowProbe seed 700207). Null where nothing goes
   * back or the store cannot take it (the permits then stay counted: under-admission only).
   */
  CompletionStage<Void> giveBackHeld(KeyView v, long now) {
    long back = v.leaseHeld();
    if (back <= 0 || windows == null || calls.open()) {
      return null;
    }
    v.grants().use(back);
    try {
      return windows.giveBack(limit, v.key(), back, TimeUnit.NANOSECONDS.toMicros(now), v.window());
    } catch (RuntimeException e) {
      return null; // (a store that refuses at once: the permits stay counted)
    }
  }

  /**
   * Reservation mode, the regular sync's sweep, under the view's monitor: gives the store back what the
   * node holds of its grant on the current window of a key it has not been asked for in a while, where
   * other nodes share the limit. A grant is counted in the store whether or not its node uses it, and a
   * node whose requests stopped (a load balancer that moved them, a client gone) held it to its window's
   * end while the other nodes' requests were denied (IdleLeaseTest). Idle: no request for two sync
   * intervals and for twice the key's mean gap between requests. Only for a key the store's last answer
   * counted at half its limit or more, grants included (a sliding window's previous window at its
   * weight); below, the others have room. The call ({@link #giveBackHeld}) is not waited for: one that
   * fails leaves the permits counted (under-admission only). Nothing while the breaker is open or a
   * grant is on its way (its answer adds to what is held).
   */
  void giveBackIdle(KeyView v, long now) {
    long back = v.leaseHeld();
    if (back <= 0 || v.leaseWanted() || activeNodes.getAsInt() <= 1) {
      return;
    }
    long w = v.window();
    long current = Math.floorDiv(now, windowNanos);
    if (w != current) {
      return; // (a sliding window's grant on the window gone by goes back when the view rolls into this one)
    }
    // (below half: given back there, the sparse keys' grants of a permit cost a call each, 2% more
    // store calls on the accuracy kit's sparse profile at 8 nodes)
    double prevWeight = sliding ? claims.sizing.prevWeight(w, now) : 0;
    if (2 * ClaimSizing.weighted(v.globalPrev(), v.globalCur(), prevWeight) < limit.capacity()) {
      return;
    }
    double rate = v.rate();
    long meanGap = rate > 0 ? (long) (2e9 * Math.max(1, v.meanCost()) / rate) : 0;
    long idleAfter = Math.max(2 * syncIntervalNanos, meanGap);
    if (v.demandAt() != Long.MIN_VALUE && now - v.demandAt() <= idleAfter) {
      return;
    }
    if (giveBackHeld(v, now) != null) {
      v.countGivenBack(back);
      // (the store's last answer counted these permits as granted: a request here may ask again)
      long last = v.grants().lastRemaining();
      v.grants().lastRemaining(last < 0 ? -1 : last + back);
    }
  }

  /** Under the view's monitor: a grant of the view's window, asked for {@code want}, into the view. */
  void takeLeaseAnswer(KeyView v, LeaseStore.Lease lease, long want, long need, long now) {
    LeaseGrants grants = v.grants();
    grants.add(lease.granted());
    v.countsAnswered(lease.current(), lease.previous(), now);
    // none granted for a need above 1: less than that was free, and a smaller request may still fit (a
    // hint that the next one asks, as for a claim: see #mayHelp; the store decides)
    long left = remainingAt(v, lease, now);
    grants.lastRemaining(lease.granted() == 0 && need > 1
        ? Math.min(need - 1, left)
        : lease.granted() < want ? 0 : left);
  }

  /**
   * What the answer's counts leave of the limit at {@code now}: on a sliding window less the previous
   * window at its weight. (Without that weight a node read hundreds free at a window's start where the
   * fading had freed a permit or two, asked for grants ahead of its requests ({@link #leaseSize}), and
   * held each permit as it faded for its own next request while the other nodes' requests were denied:
   * the accuracy kit's shapes at 3 / 8 nodes, 0.76% / 1.12% of requests denied that the exact algorithm
   * admitted; ReservationSlidingNodesTest.)
   */
  private long remainingAt(KeyView v, LeaseStore.Lease lease, long now) {
    double prevWeight = prevWeightWithin(v, now);
    return Math.max(0, (long) Math.floor(limit.capacity()
        - ClaimSizing.weighted(lease.previous(), lease.current(), prevWeight) + 1e-9));
  }

  /**
   * The previous window's sliding weight at {@code now}, taken within the view's window: a time after its
   * end, before the view rolls, would weigh the previous window below nothing (0 for a fixed window).
   */
  private double prevWeightWithin(KeyView v, long now) {
    long windowStart = v.window() * windowNanos;
    return claims.sizing.prevWeight(v.window(), Math.min(Math.max(now, windowStart), windowStart + windowNanos));
  }

  /**
   * Reservation mode, under the view's monitor: whether a lease of {@code cost} more permits asked for
   * now may be granted: not when the store's last answer in this fixed window left less than that (but now and
   * then where other nodes may have given grants back since), nor, in a sliding
   * window, before the previous window has faded enough for it by the counts of that answer (this
   * node's grants are in them; the other nodes' since then are not, so the store may still refuse).
   * (Waiting a permit's fading time from the answer instead denied the request that came when the
   * fading since the answer crossed a permit sooner: on the accuracy kit's shapes profile at one node,
   * 9.0% of requests denied where the exact algorithm admitted, 2.2% asking by the counts.)
   */
  boolean mayHelp(KeyView v, long now, long cost) {
    // (what the last answer left, where that covers the cost: a request larger than it, asked for again
    // at once, found the same and was denied again, a store call each; the kit's large limit, whose
    // costs reach 2,000, 6-13% of its reservation runs' store calls, the same decisions)
    long last = v.grants().lastRemaining();
    if (last < 0 || last >= cost || v.syncedAt() == Long.MIN_VALUE) {
      return true;
    }
    if (!sliding) {
      // a fixed window's count falls only where another node gives back a grant it no longer uses
      // (giveBackIdle) or closes: a node told that nothing was left asks again now and then, at most
      // once per eight sync intervals, to find what came back (the node that took the key over from
      // an idle one was denied to the window's end: IdleLeaseTest)
      return activeNodes.getAsInt() > 1 && now - v.syncedAt() >= 8 * syncIntervalNanos;
    }
    double prevWeight = prevWeightWithin(v, now);
    return ClaimSizing.weighted(v.globalPrev(), v.globalCur(), prevWeight) + cost <= claims.capacity(v);
  }

  /**
   * Reservation mode, under the view's monitor: takes a grant of at least {@code need} permits, if
   * the store has them, and what the key is likely to ask before the next regular sync; false when
   * the store did not answer.
   */
  boolean leaseNow(KeyView v, long now, long need, Duration claimTimeout) {
    long size = leaseSize(v, now);
    // nothing ahead of the request where this node's part of what is left is a permit or less and
    // other nodes share the key: a permit held ahead here is one another node's request is denied
    // (nor where what it asks for ahead would pay for less than one of the key's requests: held between its
    // requests, it pays none of another node's, which the store denies while it fits what the exact
    // algorithm has free)
    boolean ahead = activeNodes.getAsInt() <= 1 || (size > 1 && size >= v.meanCost());
    long want = Math.min(limit.capacity(), need + (ahead ? claims.sizing.aheadOfDemand(v, now, size) : 0));
    long askedAt = System.nanoTime();
    LeaseStore.Lease lease;
    v.storeCallUnderway(true);
    try {
      lease = askLease(v.key(), v.window(), now, want, need, claimTimeout);
    } finally {
      v.storeCallUnderway(false);
    }
    calls.waited(askedAt);
    if (lease == null) {
      return false;
    }
    takeLeaseAnswer(v, lease, want, need, now);
    return true;
  }
}
