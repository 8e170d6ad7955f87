package io.sluice.sync.spi;

import io.sluice.node.Limit;
import java.util.concurrent.CompletionStage;

/**
 * Token claims: a node takes several tokens of a token bucket or leaky bucket meter in one store call,
 * including tokens of the refill to come, each usable only from its due time ({@link
 * TokenGrant#dueMicros}), so that nodes admitting only claimed tokens at or after their due times never
 * pass the bucket together. The claim works on the very key and state of {@link ExactStore#acquire}
 * ({@code gcra.lua}'s hash {@code b}, {@code t}: base time, backlog in scaled units), so exact-mode
 * nodes and claiming nodes of one limit share one bucket. A claim that writes the bucket also records
 * the backlog it leaves (the claims' mark, {@code mb}, {@code mt}), and an exact node's give-back
 * ({@link ExactStore#giveBack}) never takes the backlog below that mark drained to its time: given back
 * from under the claims made since, their holders' tokens would look covered after the bucket had
 * refilled past them. So a release on a bucket that nodes claim may give back less than it took (the
 * tokens stay spent until the bucket refills), never more. The {@code giveBack} of a claim itself is
 * not held to the mark (it lowers a mark above what it leaves): only a caller that knows no other claim
 * came since may use it (TokenClaims gives back its unused tokens only where the bucket is as its own
 * last grant left it).
 *
 * <p>Time is the caller's clock, in microseconds since the epoch, as in {@link ExactStore}: a caller
 * whose clock is behind the newest time the store has seen for the key is counted at that time.
 */
public interface TokenStore extends AutoCloseable {
  /**
   * Longest horizon a claim may reach into the refill to come: tokens due later than this are never
   * granted, which bounds what a node that dies holding them takes from the others.
   */
  long MAX_HORIZON_MICROS = 600_000_000L; // 10 minutes

  /**
   * Atomically on the key's bucket, at the caller's time: drains the backlog to now; takes back
   * {@code giveBack} tokens a node claimed and did not use (never above a full bucket); then grants
   * {@code min(want, most)} tokens, where {@code most} is the largest g with
   * {@code backlog + g * interval - capacity * interval <= horizonMicros * scale} (the last token
   * granted is due at most {@code horizonMicros} from now), or none when that is fewer than
   * {@code need} (all of the request in hand or nothing). A claim that grants nothing and gives
   * nothing back writes nothing, as a denied {@link ExactStore#acquire}; a give-back to a key without
   * state writes nothing either (a key without state is a full bucket already). Whatever it writes
   * lives until the backlog has drained, plus the exact scripts' margin.
   *
   * @param want tokens to take at most (0 only with a give-back)
   * @param need the fewest worth taking: fewer are not granted at all (0: any number)
   * @param giveBack tokens an earlier grant of this limit and key took and the caller did not use
   * @param horizonMicros how far from now the last token granted may be due, 0 to
   *     {@link #MAX_HORIZON_MICROS} (0: only tokens in the bucket now)
   * @throws IllegalArgumentException (at once, not through the stage) for a null limit or one that is
   *     not a token bucket or leaky bucket meter ({@code limit:}), a null or empty key ({@code key:}),
   *     a time outside 0..2^52 us ({@code nowMicros:}), a horizon outside its range or too long for
   *     the store's 53-bit arithmetic ({@code horizonMicros:}), a give-back below 0 or above what any
   *     claim could hold ({@code giveBack:}), a want below 1 without a give-back or above the capacity
   *     plus the tokens refilled in the horizon ({@code want:}), a need outside 0..want
   *     ({@code need:}), or a limit the store cannot represent exactly (as {@link ExactStore#acquire});
   *     the message starts with the field
   * @return a stage that completes with the grant, or fails with the store's error or a timeout
   *     (after which the tokens may or may not have been granted)
   */
  default CompletionStage<TokenGrant> claimTokens(Limit limit, String key, long want, long need, long giveBack,
      long horizonMicros, long nowMicros) {
    return claimTokens(limit, key, want, need, giveBack, horizonMicros, nowMicros, 0, 0, 0);
  }

  /**
   * {@link #claimTokens(Limit, String, long, long, long, long, long)}, first giving back {@code unused}
   * scaled units where the bucket's state is still the one the caller's last grant wrote: its base time
   * {@code ifAt} (the grant's {@link TokenGrant#countedAtMicros}) and its backlog {@code ifBacklog} (the
   * grant's backlog before plus its tokens). They are what the bucket holds beyond the caller's own
   * admissions: tokens that grant charged that expired as the bucket refilled past them, or that the
   * caller dropped unused. Where anything wrote the bucket since (another node's claim, an exact
   * decision), that writer's tokens may rest on them, and nothing is given back. The form every store
   * implements (the other passes {@code unused} 0), so that a store wrapping another passes both on.
   *
   * @throws IllegalArgumentException as the other form, and for {@code unused:}, {@code ifAt:} or
   *     {@code ifBacklog:} outside 0..2^52
   */
  CompletionStage<TokenGrant> claimTokens(Limit limit, String key, long want, long need, long giveBack,
      long horizonMicros, long nowMicros, long unused, long ifAt, long ifBacklog);

  /**
   * A claim of tokens of one region's part of a token-bucket global quota ({@link Counter#regionalBucket()};
   * batched mode, on the key and state of {@link ExactStore#acquireRegional}): atomically, at the caller's
   * time, drains the region's bucket at the share in force, gives back {@code unused} units where the
   * bucket's state is still the one the caller's last grant wrote (its base time {@code ifAt} and backlog
   * {@code ifBacklog}), then grants {@code min(want, tokens in the bucket now)}, or none when that is
   * fewer than {@code need}. Never tokens of the refill to come: the region's rate is the coordinator's
   * share, which may change before they would be due. The answer's backlog is in the bucket's units, a
   * permit being one window's length in microseconds (the quota's refill period), drained at the share
   * (permits per window) in units per microsecond. Counts no demand: the node's flushes count what it
   * admitted and denied (regional deltas, as for window quotas). {@code known}: as for
   * {@link ExactStore#acquireRegional} (a key lost while its lease covers the window starts empty, at
   * {@code known}'s share).
   *
   * @throws IllegalArgumentException (at once) for a counter that is not a regional bucket, a null or
   *     empty key, a want outside 1..the region's burst, a need outside 0..want, a time outside 0..2^52 us,
   *     or {@code unused}, {@code ifAt} or {@code ifBacklog} outside 0..2^52
   * @throws UnsupportedOperationException where the store keeps no regional quotas (the default)
   */
  default CompletionStage<RegionalGrant> claimRegionalTokens(Counter counter, String key, long want, long need,
      long nowMicros, long unused, long ifAt, long ifBacklog, ShareRecord known) {
    throw new UnsupportedOperationException("regionalQuota: " + getClass().getSimpleName()
        + " keeps no regional token buckets");
  }

  @Override
  void close();
}
