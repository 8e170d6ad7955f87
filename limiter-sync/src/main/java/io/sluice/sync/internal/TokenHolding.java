package io.sluice.sync.internal;

import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.TokenGrant;

/**
 * A key's tokens claimed from the store's bucket ({@link TokenClaims}): the tokens due and unused of
 * earlier grants, the schedule of the last grant (each token usable from its due time, and only while
 * the store's bucket still covers it), what the node admitted of the key as a bucket of its own, its
 * demand, and the store's level at the last answer; with the arithmetic of that schedule in this node's
 * model of the bucket ({@link Bucket}).
 *
 * <p>Concurrency: every field and method under the holding's monitor, which a decision holds through
 * its store call; only {@link #storeCallUnderway} is read without it.
 */
final class TokenHolding {
  /**
   * The store's bucket as this node models it: its burst (tokens), units per token and units per
   * microsecond (see TokenClaims' fields of the same names).
   */
  record Bucket(long capacity, long interval, long scale) {
    /** A backlog of {@code backlog} (scaled units) at {@code at}, drained to {@code now} (never below 0). */
    long drained(long backlog, long at, long now) {
      return Counter.drained(backlog, Math.max(0, now - at), scale);
    }

    /** Whole tokens a backlog of {@code after} (scaled units) left at {@code at} still covers at {@code now}. */
    long covered(long after, long at, long now) {
      return drained(after, at, now) / interval;
    }

    /**
     * When token {@code i} of a grant made at {@code at} on a backlog of {@code backlogBefore} is due (us):
     * as {@link TokenGrant#dueMicros}, in this node's model of the bucket.
     */
    long dueMicros(long at, long backlogBefore, long i) {
      long over = backlogBefore + i * interval - capacity * interval;
      return over <= 0 ? at : at - Math.floorDiv(-over, scale);
    }
  }

  /**
   * Tokens due and unused from earlier grants, and the coverage of the oldest of them: the backlog
   * its grant left ({@code extraAfter}, scaled units) at {@code extraAt} (us).
   */
  long extra;
  long extraAfter;
  long extraAt;
  /** The last grant: when it was made (us), the backlog before it, the tokens granted and used of them. */
  long grantedAt;
  long backlogBefore;
  /** The backlog the last grant left in the store (scaled units): what covers its tokens. */
  long backlogAfter;
  long granted;
  long used;
  /** Demand: tokens per microsecond (each cost at most four times the mean before it), decaying over two sync intervals; and when it was last updated. */
  double rate;
  long rateAt = Long.MIN_VALUE;
  /** The cost of the key's decisions, a running mean (0 before the first). */
  double meanCost;
  /** The largest cost decided on the key by this node lately (see {@link #noteLargestCost}) and when (us). */
  long largestCost;
  long largestCostAt;
  long lastUse = Long.MIN_VALUE;
  /** The latest time a decision saw (us): a thread that read the clock before waiting decides at it. */
  long seen = Long.MIN_VALUE;
  /** After the store had too little for {@code deniedNeed}: such costs are denied until then (us). */
  long deniedUntil = Long.MIN_VALUE;
  long deniedNeed;
  /**
   * This node's own admissions of the key as a bucket of their own (the GCRA state: its time, us, and
   * backlog, scaled units), started at the last grant from the store's backlog before it: never below
   * what the node's admissions alone leave in the store's bucket, and equal to it while the node is
   * the bucket's only writer. See {@code TokenClaims#askStore}.
   */
  long ownAt;
  long ownBacklog;
  /**
   * The latest time (us) an answer of the store showed another node's claims on the key's bucket: a
   * backlog above what this node's own last grant left there, drained to the answer's time.
   */
  long othersSeenAt = Long.MIN_VALUE;
  /** Whole tokens the store had left at its last answer (for a decision's remaining permits). */
  long level = -1;
  /** The store's backlog after its last answer (scaled units) and when it counted it (us): {@link #levelNow}. */
  long levelBacklog;
  long levelAt;
  /**
   * A decision holds the monitor through a store call: read without the monitor by a decision that
   * must not wait (see {@link SyncedLimiter#acquireAsync}).
   */
  volatile boolean storeCallUnderway;
  /** A regional bucket: permits admitted and denied in window {@code demandWindow}, not yet sent. */
  long demandWindow = Long.MIN_VALUE;
  long demandAdmitted;
  long demandDenied;
  /** Kept in no table (the table was full): its demand goes out with each decision. */
  boolean kept = true;

  /**
   * Under the monitor: drops the tokens the store's bucket has refilled past. The store counted them
   * taken when it granted them; from then its backlog drains, and once it is below what a grant's
   * tokens still held need (at the least it can be: other nodes' later claims only add above them),
   * tokens used now would be on top of a bucket that refilled meanwhile: together with the others'
   * admissions, more than the bucket allows (a holding of 10 drawn from a full bucket of 20 and used
   * after the bucket had refilled let a node admit 30 at once). Tokens of an older grant (extra) are
   * covered by that grant's backlog, lower than the last one's. They are not given back: the refill
   * already has.
   */
  void expire(Bucket b, long now) {
    if (extra > 0) {
      extra = Math.min(extra, b.covered(extraAfter, extraAt, now));
    }
    long held = granted - used;
    if (held > 0) {
      long covered = b.covered(backlogAfter, grantedAt, now);
      if (held > covered) {
        granted -= held - covered; // (the last granted go first: the earliest due stay usable)
      }
    }
  }

  /** Under the monitor: {@code tokens} due tokens of the last grant become extra, with that grant's coverage. */
  void keepAsExtra(Bucket b, long tokens, long now) {
    if (tokens <= 0) {
      return;
    }
    if (extra == 0) {
      extraAfter = backlogAfter;
      extraAt = grantedAt;
    } else {
      coverExtraAtMost(b, backlogAfter, grantedAt, now);
    }
    extra += tokens;
  }

  /**
   * Under the monitor: extra's coverage becomes {@code backlog} (scaled units) at {@code at} where that
   * is the lower of the two: the lower holds for all of them (both drain at the bucket's rate). Compared
   * in units: in whole tokens a tie kept the higher, by up to a token's time.
   */
  private void coverExtraAtMost(Bucket b, long backlog, long at, long now) {
    long t = Math.max(now, Math.max(at, extraAt));
    if (b.drained(backlog, at, t) < b.drained(extraAfter, extraAt, t)) {
      extraAfter = backlog;
      extraAt = at;
    }
  }

  /**
   * Under the monitor: after a claim that gave back what the store held beyond this node's admissions
   * and its held tokens, the due tokens of the last grant become extra, covered by the store's backlog
   * before that claim's grant ({@code backlog} at {@code at}): the last grant's own backlog, which
   * covered them until now, no longer holds the part given back, and tokens judged by it would look
   * covered after the store's bucket had refilled past them. Where the store took nothing back, that
   * backlog still lies above them (a lower coverage than before, never a higher one).
   */
  void heldBelow(Bucket b, long backlog, long at, long now) {
    keepAsExtra(b, granted - used, now);
    granted = used;
    if (extra > 0) {
      coverExtraAtMost(b, backlog, at, now);
    }
  }

  /**
   * Under the monitor: whole tokens the store's bucket holds at {@code now} by the level of the last
   * answer refilled since as the store refills it (-1 before any answer): what a node alone holds
   * there, and at most that where other nodes take part of the refill unseen.
   */
  long refilledLevel(Bucket b, long now) {
    if (level < 0) {
      return -1;
    }
    long units = b.capacity() * b.interval() - b.drained(levelBacklog, levelAt, now);
    return Math.max(level, Math.min(b.capacity(), Math.max(0, units) / b.interval()));
  }

  /**
   * Under the monitor: the level a claim is sized by: the last answer's, until the bucket could have
   * refilled half its capacity beyond it ({@link #refilledLevel}), and that refilled level from then.
   * The last answer's alone went stale: a node whose last answer found the bucket empty took it for a
   * bucket at its limit a whole refill later, and claimed the full bucket ahead of a request of a few
   * tokens, denying the next requests on the other nodes (BucketProbe seed 259: a leaky meter of 37 per
   * 100 ms on 4 nodes, a request of 11 denied with the bucket full, 400 ms after that node's last
   * answer). The refilled level at once took busy keys for keys below their limit and cost 6-12% more
   * store calls in the accuracy kit's shapes profile at 3 and 8 nodes, 5-10% on one node.
   */
  long levelNow(Bucket b, long now) {
    long refilled = refilledLevel(b, now);
    return refilled - level >= b.capacity() / 2.0 ? refilled : level;
  }

  /** Under the monitor: tokens of the holding usable at {@code now}. */
  long usable(Bucket b, long now) {
    return extra + due(b, now) - used;
  }

  /** Under the monitor: how many tokens of the last grant are due at {@code now} (used or not). */
  long due(Bucket b, long now) {
    if (granted == 0) {
      return 0;
    }
    long elapsed = Math.max(0, now - grantedAt);
    long capacityUnits = b.capacity() * b.interval();
    // token i is due once backlogBefore + i * interval - capacity * interval <= scale * elapsed; every
    // token granted is due once the backlog before the grant has drained (compared by division, so
    // that scale * elapsed cannot overflow)
    if (elapsed > backlogAfter / b.scale()) {
      return granted;
    }
    long room = b.scale() * elapsed + capacityUnits - backlogBefore;
    return room < 0 ? 0 : Math.min(granted, Math.floorDiv(room, b.interval()));
  }

  /** Under the monitor: when the holding has {@code more} tokens usable beyond those usable now (us). */
  long dueOfNth(Bucket b, long more) {
    // the tokens of the last grant due now, plus {@code more}: the index (from 1) of the one to wait for
    long index = due(b, seen) + more;
    if (index < 1) {
      return grantedAt;
    }
    return b.dueMicros(grantedAt, backlogBefore, Math.min(index, granted));
  }

  /** Under the monitor: uses {@code cost} tokens, those due from earlier grants first. */
  void take(Bucket b, long cost, long now) {
    long fromExtra = Math.min(extra, cost);
    // (tokens held from earlier grants were charged before the last one, in the backlog the node's own
    // bucket starts from: charged again, what goes back with the next claim fell short by them, and the
    // store's bucket lagged the exact one; BucketFractionTest#tokensHeldFromAnEarlierGrantAreNotChargedTwice)
    ownBacklog = b.drained(ownBacklog, ownAt, now) + (cost - fromExtra) * b.interval();
    ownAt = Math.max(ownAt, now);
    extra -= fromExtra;
    used += cost - fromExtra;
    lastUse = now;
  }

  /** The remaining permits a decision reports: the usable tokens held and the store's level at its last answer. */
  long remaining(long usable) {
    return Math.max(0, usable) + Math.max(0, level);
  }

  /** Tokens held: due and unused from earlier grants, and of the last grant, due or to come. */
  long held() {
    return extra + granted - used;
  }

  /**
   * Under the holding's monitor: whether the store's bucket still holds more than this node's own
   * admissions left in it after its last grant (tokens that expired unused, the part of one left): the
   * next claim gives that back (see {@code TokenClaims#askStore}), which a holding dropped and made anew
   * cannot, as it no longer knows the grant. Dropped so, a key's tokens came due that much later than the exact
   * bucket's for as long as it stayed at its limit (the accuracy kit on a seed it does not run, a leaky
   * bucket meter of 5 a second, one node, seed 27013: a token expired 70 ms short, then 14 requests of
   * 7,980 denied that the exact algorithm admitted). Kept until the bucket has drained past it.
   */
  boolean owesGiveBack(Bucket b, long now) {
    return chargedBeyondOwn(b, now) > 0;
  }

  /**
   * Under the holding's monitor: what the store's bucket holds, at {@code now}, beyond this node's own
   * admissions since its last grant (scaled units; 0 before any grant).
   */
  long chargedBeyondOwn(Bucket b, long now) {
    return grantedAt > 0 ? Math.max(0, b.drained(backlogAfter, grantedAt, now) - b.drained(ownBacklog, ownAt, now)) : 0;
  }

  /**
   * A regional bucket (and a shared key in reservation mode, see {@code TokenClaimSizing#ahead}): the
   * most tokens claimed ahead that the key's demand uses before they expire, on a
   * bucket holding {@code sizedLevel} tokens (the level the claim is sized by, {@link #levelNow}). A grant
   * of g tokens on a bucket missing m of its tokens is covered for (m + g) tokens' time at the rate tokens
   * expire at (the bucket's refill; a regional bucket's, the whole quota's, see {@code TokenClaims#scale}); at the key's rate d the node uses
   * d (m + g) of them in that time, all g only for g at most d m / (1 - d), rates in tokens per token's
   * time. Claimed beyond that, tokens expired unused, charged in the store's bucket (given back only
   * where no other node wrote it since): the region's bucket came to the next burst that much short
   * (RegionalTokenClaimsIT, bursts after quiet spells at 400 a second: 95.3% of what the exact bucket
   * admitted).
   */
  long usedBeforeExpiry(Bucket b, long sizedLevel) {
    double perToken = (double) b.interval() / b.scale(); // us per token at the expiry rate
    double d = rate * perToken;
    if (d >= 1) {
      return Long.MAX_VALUE;
    }
    long missing = sizedLevel < 0 ? 0 : Math.max(0, b.capacity() - sizedLevel);
    return (long) Math.floor(d * missing / (1 - d));
  }

  /**
   * Under the holding's monitor: {@code cost} at {@code now} in the key's largest cost of late, the
   * largest within the last {@code memoryMicros}.
   */
  void noteLargestCost(long cost, long now, long memoryMicros) {
    if (cost >= largestCost || now - largestCostAt > memoryMicros) {
      largestCost = cost;
      largestCostAt = now;
    }
  }
}
