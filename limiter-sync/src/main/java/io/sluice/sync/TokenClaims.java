package io.sluice.sync;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.TokenGrant;
import io.sluice.sync.spi.TokenStore;
import java.util.Iterator;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * A token bucket or leaky bucket meter shared across nodes in batched mode: each node claims tokens of
 * the bucket from the store ({@link TokenStore#claimTokens}), some in the bucket now and some of the
 * refill to come, each usable only from its due time, and admits only claimed tokens at or after their
 * due times. Every token the nodes admit was taken from the one bucket in the store before it was
 * used, no earlier than the store's own schedule lets it, so the nodes together never pass the bucket.
 *
 * <p>A key's holding: tokens due and unused ({@code extra}), and the schedule of its last grant (the
 * claim's time, the bucket's backlog before it, the tokens granted and used). A decision its holding
 * pays for is local; one it cannot pay and no token of which is still to come asks the store, waiting
 * for one round trip, for what it needs now and, for a key in use, what the key is expected to ask
 * over the claim horizon (two sync intervals of its demand; at most the batch size and an even half
 * of the bucket per node, so that the nodes' holdings leave the others room). A holding unused for a
 * sync interval goes back to the store at the next sync: held tokens are refill the other nodes could
 * have had, and a token used long after it was drawn from a full bucket is what lets the nodes pass
 * it (the bucket refilled meanwhile).
 *
 * <p>Concurrency: a holding is guarded by its own monitor, held through the store call a decision
 * makes for it (as a window's view is); the table is a {@link ConcurrentHashMap}, swept at syncs.
 */
final class TokenClaims {
  /** A decision paid by the key's holding or a grant. */
  static final int ALLOWED = 0;
  /** Denied: the holding cannot pay and the store had too little (or tokens of the holding are still to come). */
  static final int DENIED = 1;
  /** The store call failed or the breaker refused it: the failure policy decides. */
  static final int FAILED = 2;

  private final Limit limit;
  private final Counter counter;
  private final TokenStore store;
  private final StoreCalls calls;
  private final long syncIntervalMicros;
  private final long horizonMicros;
  private final long batchSize;
  private final int maxKeys;
  private final IntSupplier nodes;
  private final java.time.Duration claimTimeout;
  private final ConcurrentHashMap<String, Holding> holdings = new ConcurrentHashMap<>();

  TokenClaims(Limit limit, TokenStore store, StoreCalls calls, long syncIntervalNanos, long batchSize, int maxKeys,
      IntSupplier nodes, java.time.Duration claimTimeout) {
    this.limit = limit;
    this.counter = Counter.of(limit);
    this.store = store;
    this.calls = calls;
    this.syncIntervalMicros = Math.max(1, TimeUnit.NANOSECONDS.toMicros(syncIntervalNanos));
    this.horizonMicros = Math.min(TokenStore.MAX_HORIZON_MICROS, 2 * syncIntervalMicros);
    this.batchSize = batchSize;
    this.maxKeys = maxKeys;
    this.nodes = nodes;
    this.claimTimeout = claimTimeout;
  }

  /** A key's claimed tokens; every field under the holding's monitor. */
  private static final class Holding {
    /** Tokens due and unused from earlier grants (and permits released back). */
    long extra;
    /** The last grant: when it was made (us), the backlog before it, the tokens granted and used of them. */
    long grantedAt;
    long backlogBefore;
    /** The backlog the last grant left in the store (scaled units): what covers the tokens held. */
    long backlogAfter;
    long granted;
    long used;
    /** Demand: tokens per microsecond, decaying over two sync intervals; and when it was last updated. */
    double rate;
    long rateAt = Long.MIN_VALUE;
    long lastUse = Long.MIN_VALUE;
    /** After the store had too little: decisions the holding cannot pay are denied until then (us). */
    long deniedUntil = Long.MIN_VALUE;
    /** Whole tokens the store had left at its last answer (for a decision's remaining permits). */
    long level = -1;
  }

  /**
   * Decides {@code cost} tokens of {@code key} at {@code nowNanos}: {@link #ALLOWED}, {@link #DENIED}
   * or {@link #FAILED}; {@code out[0]} gets the remaining permits as far as this node knows,
   * {@code out[1]} the nanoseconds until a retry may succeed (denials), {@code out[2]} 1 when the
   * decision asked the store (it waited for it), else 0.
   */
  int decide(String key, long cost, long nowNanos, long[] out) {
    out[2] = 0;
    long now = TimeUnit.NANOSECONDS.toMicros(nowNanos);
    Holding h = holding(key);
    synchronized (h) {
      noteDemand(h, now, cost);
      expire(h, now);
      long usable = usable(h, now);
      if (usable >= cost) {
        take(h, cost, now);
        out[0] = remaining(h, usable - cost);
        out[1] = 0;
        return ALLOWED;
      }
      long toCome = h.granted - due(h, now);
      if (toCome > 0 && cost <= h.extra + h.granted - h.used) {
        // tokens of this holding still to come pay for it: the bucket has none for anyone before them
        out[0] = remaining(h, usable);
        out[1] = TimeUnit.MICROSECONDS.toNanos(Math.max(1, dueOfNth(h, cost - usable) - now));
        return DENIED;
      }
      if (now < h.deniedUntil) {
        out[0] = 0;
        out[1] = TimeUnit.MICROSECONDS.toNanos(h.deniedUntil - now);
        return DENIED;
      }
      long need = cost - usable;
      // a key at its limit (the bucket was empty at the last answer) claims of the refill to come,
      // paced by due times; any other key only of what the bucket holds now, so that no node holds
      // tokens in debt that another node's request below the limit would need
      boolean atLimit = h.level == 0 && h.rate * horizonMicros >= 1;
      long horizon = atLimit ? horizonMicros : 0;
      long want = Math.min(limit.capacity(), need + ahead(h, atLimit));
      // (tokens still to come that cannot pay for this cost go back in the same call: the new grant's
      // schedule replaces the old one)
      TokenGrant grant = calls.guarded(() -> store.claimTokens(limit, key, want, need, toCome, horizon, now),
          claimTimeout);
      out[2] = 1;
      // the tokens to come were given back, or may have been (a call that failed may have run): the
      // holding keeps only those due, so that none is used twice
      h.granted -= toCome;
      if (grant == null) {
        return FAILED;
      }
      h.level = grant.level();
      if (grant.granted() == 0) {
        h.deniedUntil = now + Math.max(1, grant.retryAfterMicros());
        out[0] = 0;
        out[1] = TimeUnit.MICROSECONDS.toNanos(Math.max(1, grant.retryAfterMicros()));
        return DENIED;
      }
      // the tokens left of the old grant are all due (none was still to come): they join extra
      h.extra = usable;
      h.grantedAt = now;
      h.backlogBefore = grant.backlogBefore();
      h.granted = grant.granted();
      h.backlogAfter = grant.backlogBefore() + grant.granted() * counter.interval();
      h.used = 0;
      long nowUsable = usable(h, now);
      if (nowUsable >= cost) {
        take(h, cost, now);
        out[0] = remaining(h, nowUsable - cost);
        out[1] = 0;
        return ALLOWED;
      }
      // granted, but due later (the bucket is empty now): this node holds them for its next requests,
      // as the exact algorithm would deny this one now
      out[0] = remaining(h, nowUsable);
      out[1] = TimeUnit.MICROSECONDS.toNanos(Math.max(1, dueOfNth(h, cost - nowUsable) - now));
      return DENIED;
    }
  }

  /** Permits a decision gave back (another limit of the request denied it): the holding pays with them next. */
  void release(String key, long cost) {
    Holding h = holdings.get(key);
    if (h != null) {
      synchronized (h) {
        h.extra += cost;
      }
    }
  }

  /**
   * At a sync: every holding unused for a sync interval gives its tokens back (those due and those to
   * come), one store call each; holdings with nothing held and no recent use leave the table. With
   * {@code everything} (closing) every holding gives back.
   */
  void giveBackIdle(long nowNanos, boolean everything) {
    long now = TimeUnit.NANOSECONDS.toMicros(nowNanos);
    for (Iterator<java.util.Map.Entry<String, Holding>> it = holdings.entrySet().iterator(); it.hasNext(); ) {
      java.util.Map.Entry<String, Holding> e = it.next();
      Holding h = e.getValue();
      synchronized (h) {
        expire(h, now);
        boolean idle = h.lastUse == Long.MIN_VALUE || now - h.lastUse >= syncIntervalMicros;
        long held = h.extra + h.granted - h.used;
        // (under a hundredth of a large bucket is left to expire: a call would cost more than it frees)
        if ((idle || everything) && held >= Math.max(1, limit.capacity() / 100)) {
          TokenGrant back = calls.guarded(() -> store.claimTokens(limit, e.getKey(), 0, 0, held, 0, now));
          // given back, or maybe (a failed call may have run): dropped either way, so that no token is
          // both back in the bucket and used here (a failed give-back leaves them unused: under-admission)
          h.extra = 0;
          h.granted = 0;
          h.used = 0;
          h.level = back != null ? back.level() : h.level;
        } else if (idle && held == 0 && now - h.lastUse > 2 * horizonMicros) {
          it.remove(); // (a decision holding a reference decides on a removed holding: it only asks again)
        }
      }
    }
  }

  /** Keys with a holding (for tests and meters). */
  int keys() {
    return holdings.size();
  }

  private Holding holding(String key) {
    Holding h = holdings.get(key);
    if (h != null) {
      return h;
    }
    if (holdings.size() >= maxKeys) {
      // full: drop holdings that hold nothing (their keys ask the store again, as cold keys do)
      holdings.values().removeIf(x -> {
        synchronized (x) {
          return x.extra + x.granted - x.used == 0;
        }
      });
      if (holdings.size() >= maxKeys) {
        return new Holding(); // decided on a holding of its own, kept nowhere: it asks the store each time
      }
    }
    return holdings.computeIfAbsent(key, k -> new Holding());
  }

  private void noteDemand(Holding h, long now, long cost) {
    double tau = 2.0 * syncIntervalMicros;
    if (h.rateAt != Long.MIN_VALUE && now > h.rateAt) {
      h.rate *= Math.exp(-(now - h.rateAt) / tau);
    }
    h.rate += cost / tau;
    h.rateAt = Math.max(now, h.rateAt);
  }

  /**
   * Tokens to ask for beyond the need: what the key is expected to ask over the claim horizon, at most
   * the batch size and an even part per node of half what the bucket held at the last answer (at its
   * limit: of the refill over the horizon), as window claims take at most half of what is free; none
   * for a key asked less than about once a horizon (its next request asks the store, as a cold window
   * key's does).
   */
  private long ahead(Holding h, boolean atLimit) {
    long expected = (long) Math.floor(h.rate * horizonMicros);
    if (expected < 1) {
      return 0;
    }
    long n = Math.max(1, nodes.getAsInt());
    long fair = atLimit
        ? Math.max(1, (long) (limit.refillTokens() * (horizonMicros * 1_000.0 / limit.periodNanos())) / n)
        : (h.level < 0 ? limit.capacity() : h.level) / (2 * n);
    return Math.max(0, Math.min(expected, Math.min(batchSize, fair)));
  }

  /**
   * Under the monitor: drops the tokens the store's bucket has refilled past. The store counted them
   * taken when it granted them; from then its backlog drains, and once it is below what the holding
   * still holds (at the least it can be: other nodes' claims only add to it), tokens used now would be
   * on top of a bucket that refilled meanwhile: together with the others' admissions, more than the
   * bucket allows (a holding of 10 drawn from a full bucket of 20 and used after the bucket had
   * refilled let a node admit 30 at once). They are not given back: the refill already has.
   */
  private void expire(Holding h, long now) {
    long held = h.extra + h.granted - h.used;
    if (held <= 0) {
      return;
    }
    long elapsed = Math.max(0, Math.min(now - h.grantedAt, TokenStore.MAX_HORIZON_MICROS));
    long covered = Math.max(0, h.backlogAfter - counter.scale() * elapsed) / counter.interval();
    if (held > covered) {
      long drop = held - covered;
      long fromExtra = Math.min(h.extra, drop);
      h.extra -= fromExtra;
      h.granted -= drop - fromExtra; // (the last granted go first: the earliest due stay usable)
    }
  }

  /** Under the monitor: tokens of the holding usable at {@code now}. */
  private long usable(Holding h, long now) {
    return h.extra + due(h, now) - h.used;
  }

  /** Under the monitor: how many tokens of the last grant are due at {@code now} (used or not). */
  private long due(Holding h, long now) {
    if (h.granted == 0) {
      return 0;
    }
    long elapsed = Math.min(now - h.grantedAt, horizonMicros + 1);
    if (elapsed < 0) {
      elapsed = 0;
    }
    long capacityUnits = limit.capacity() * counter.interval();
    // token i is due once backlogBefore + i * interval - capacity * interval <= scale * elapsed
    long room = counter.scale() * elapsed + capacityUnits - h.backlogBefore;
    return room < 0 ? 0 : Math.min(h.granted, Math.floorDiv(room, counter.interval()));
  }

  /** Under the monitor: when the holding has {@code more} tokens usable beyond those usable now (us). */
  private long dueOfNth(Holding h, long more) {
    long index = h.used + more - h.extra; // of the last grant, counted from 1
    if (index < 1) {
      return h.grantedAt;
    }
    return TokenGrant.dueMicros(counter, h.grantedAt, h.backlogBefore, Math.min(index, h.granted));
  }

  /** Under the monitor: uses {@code cost} tokens, those due from earlier grants first. */
  private void take(Holding h, long cost, long now) {
    long fromExtra = Math.min(h.extra, cost);
    h.extra -= fromExtra;
    h.used += cost - fromExtra;
    h.lastUse = now;
  }

  private long remaining(Holding h, long usable) {
    return Math.max(0, usable) + Math.max(0, h.level);
  }
}
