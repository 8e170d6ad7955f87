package io.sluice.sync.internal;

import io.sluice.sync.internal.BatchSender.Pending;
import io.sluice.sync.spi.Delta;
import java.util.function.BooleanSupplier;

/**
 * What a sync's delta on a view's current window carries besides its counts, by the limiter's mode,
 * chosen once when it is built ({@link #of}):
 * <ul>
 *   <li>claims mode ({@link Claims}): the claim the node asks for until its next answer, what it keeps
 *       of the one it holds near the limit, or the claim given up once the key went idle; and claims
 *       ahead renewed before a fixed window ends;
 *   <li>shares (regional quotas, a store that keeps no claims): counts only;
 *   <li>reservation mode: counts only, and no delta at all without permits to count (the lease's
 *       answer refreshes the view).
 * </ul>
 *
 * <p>Concurrency: immutable; every method runs under the view's monitor, in a sync (under the flusher's
 * sync lock).
 */
abstract class FlushClaims {
  /** Shares: the delta goes as it is, with or without permits (its answer refreshes the view). */
  private static final FlushClaims SHARES = new CountsOnly(true);
  /** Reservation mode's leases: only deltas with permits go. */
  private static final FlushClaims LEASES = new CountsOnly(false);

  /** The limiter's: {@code closing} tells whether it is closing (its last flush gives its claims up). */
  static FlushClaims of(LimiterSetup l, WindowClaims claims, BooleanSupplier closing) {
    if (l.claimsKept) {
      return new Claims(claims, l.counter.limit().capacity(), closing);
    }
    return l.leases != null ? LEASES : SHARES;
  }

  /**
   * Whether the view's claims ahead are due for renewal at this sync: the window ends before the next
   * regular one ({@link ClaimsAhead#claimsAheadDue}).
   */
  abstract boolean renewsAhead(KeyView v, long drainedAt);

  /** Whether the view's current window goes at a sync even with no permits to count. */
  abstract boolean sendsWithoutPermits();

  /** The current window's delta {@code d} with the claim the node asks for until its next answer. */
  abstract Delta asking(KeyView v, Delta d, long drainedAt);

  /**
   * The current window's delta as it goes: what the node keeps of its claim near the limit, or the
   * claim given up; {@code out} is how many of the view's deltas were on their way before this sync's,
   * {@code settles} the window of a take it settles ({@code Long.MIN_VALUE}: none).
   */
  abstract Pending sent(KeyView v, Delta d, int out, long settles, long drainedAt);

  /** Counts only (shares, reservation). */
  private static final class CountsOnly extends FlushClaims {
    private final boolean withoutPermits;

    CountsOnly(boolean withoutPermits) {
      this.withoutPermits = withoutPermits;
    }

    @Override
    boolean renewsAhead(KeyView v, long drainedAt) {
      return false;
    }

    @Override
    boolean sendsWithoutPermits() {
      return withoutPermits;
    }

    @Override
    Delta asking(KeyView v, Delta d, long drainedAt) {
      return d;
    }

    @Override
    Pending sent(KeyView v, Delta d, int out, long settles, long drainedAt) {
      return new Pending(v, d, false);
    }
  }

  /** Claims mode: window limits on a store that keeps claims ({@code CounterStore#keepsClaims}). */
  private static final class Claims extends FlushClaims {
    private final WindowClaims claims;
    private final ClaimSizing sizing;
    private final long capacity;
    private final BooleanSupplier closing;

    Claims(WindowClaims claims, long capacity, BooleanSupplier closing) {
      this.claims = claims;
      this.sizing = claims.sizing;
      this.capacity = capacity;
      this.closing = closing;
    }

    @Override
    boolean renewsAhead(KeyView v, long drainedAt) {
      return sizing.ahead.claimsAheadDue(v, drainedAt);
    }

    @Override
    boolean sendsWithoutPermits() {
      return true;
    }

    @Override
    Delta asking(KeyView v, Delta d, long drainedAt) {
      // (as a decision's claim call: no part of a sliding window's fading where it would be a few permits)
      return sizing.claimDelta(d, claimWanted(v, drainedAt), 0, sizing.fadingPartTooSmall(v, drainedAt), v, drainedAt);
    }

    @Override
    Pending sent(KeyView v, Delta d, int out, long settles, long drainedAt) {
      // near the limit (its unused claim more than an even part of what it leaves the others), this
      // node keeps what it will admit before the answer and the store grants the rest anew, an even
      // part per node, so that a claim granted far from the limit does not hold the last permits
      // while the other nodes' requests are denied. Only with nothing else of the view on its way,
      // whose answer could raise the claim this flush trims.
      long keep = d.want() > 0 && out == 0 && settles == Long.MIN_VALUE ? claimToKeep(v, d.want(), drainedAt) : -1;
      if (keep >= 0) {
        d = d.keeping(keep);
        v.claimKept(keep);
      } else if (d.want() == 0 && v.claim() >= 0) {
        // a flush that gives the claim up: the store keeps none for this node from when it applies it,
        // so from now on nothing more is admitted under it (what is admitted is pending and goes), nor
        // under its part of a sliding window's fading; a decision the claim cannot pay waits for the
        // answer and then asks. (Left as it was, decisions that came while the flush travelled admitted
        // under a claim the store had already given to others: tune, mixed profile, 4 nodes, a key-window
        // at 101-104 of a limit of 100, the idle node's last permits counted after the others' takes.)
        v.claimGivenUp();
      }
      boolean release = d.want() == 0 || keep >= 0;
      if (release) {
        v.releaseSent(); // decisions do not ask for claims until it is answered
      }
      return new Pending(v, d, release);
    }

    /**
     * What of its claim the node keeps with a flush that asks for one (-1: all of it), near the limit
     * (WindowClaims#claimToKeep), and no more than a local share held since a fault still lets it admit
     * (KeyView#localShareRoom).
     */
    private long claimToKeep(KeyView v, long want, long drainedAt) {
      long keep = claims.claimToKeep(v, want, drainedAt);
      long room = v.localShareRoom(drainedAt);
      return room != Long.MAX_VALUE && v.claim() - v.pendingCur() > room && (keep < 0 || keep > room) ? room : keep;
    }

    /**
     * The claim a flush asks for, what the node will admit until its next answer; none once the key has
     * been idle for a sync interval (a claim held blocks the other nodes).
     */
    private long claimWanted(KeyView v, long drainedAt) {
      // (a key asked less than about once a sync interval holds none either: its next request
      // asks the store, which costs less than a claim held and refreshed at every sync)
      boolean idle = v.demandAt() == Long.MIN_VALUE || drainedAt - v.demandAt() > sizing.idleAfterNanos(v, drainedAt);
      // (nor once the limiter is closing: its last flush gives its claims up, which would otherwise
      // stay counted against the other nodes to the window's end)
      // (a key far below its limit keeps a claim, of one permit at least, while not idle: an expected
      // demand that rounds to nothing at a quiet moment gave it up, and its next request asked)
      long want = idle || closing.getAsBoolean() ? 0 : Math.max(sizing.keepsClaimToWindowEnd(v, drainedAt) ? 1 : 0,
          Math.min(sizing.untilNextAnswer(v), sizing.expectedDemand(v, drainedAt)));
      // (while a local share held since a fault caps the node, no more than the share lets it admit, its
      // permits on their way included: see KeyView#localShareRoom)
      long room = v.localShareRoom(drainedAt);
      if (room != Long.MAX_VALUE) {
        want = Math.min(want, room + v.pendingCur() - v.unsentCur());
      }
      return Math.min(want, capacity);
    }
  }
}
