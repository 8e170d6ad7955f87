package io.sluice.sync.spi.state;

import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.ExactArgs;
import io.sluice.sync.spi.TokenGrant;
import java.util.Map;

/**
 * {@code token_claim.lua} for stores that run no Lua ({@link io.sluice.sync.spi.TokenStore}): a node's
 * claim of several tokens of a token bucket or leaky bucket meter, on the GCRA pair of the key's
 * {@link CounterEntry} that {@link ExactProcessor}'s {@code gcra.lua} keeps, so exact and claiming
 * nodes of one limit share one bucket. Step for step the script, in longs instead of Lua's doubles;
 * the arguments were checked by {@link ExactArgs#checkClaim}, so every value stays below 2^53 where both
 * compute exactly and the answers are the script's. See the script for why each step is as it is.
 *
 * <p>Answers {@code {granted, backlogBefore, level, retryAfterMicros}}; {@link #grant} reads it.
 * Deterministic (it carries the caller's clock), so Hazelcast runs the very same processor on the
 * backups.
 */
public final class TokenClaimProcessor implements EntryUpdate {
  private static final long serialVersionUID = 1L;

  private final long now;
  private final long want;
  private final long need;
  private final long giveBack;
  private final long horizon;
  private final long capacity;
  private final long scale;
  private final long interval;
  /**
   * Scaled units of the caller's last grant it will not use, given back where the bucket's state is
   * still {@code ifAt}, {@code ifBacklog}, as that grant left it (token_claim.lua).
   */
  private final long unused;
  private final long ifAt;
  private final long ifBacklog;

  private TokenClaimProcessor(long now, long want, long need, long giveBack, long horizon, long capacity, long scale,
      long interval, long unused, long ifAt, long ifBacklog) {
    this.now = now;
    this.want = want;
    this.need = need;
    this.giveBack = giveBack;
    this.horizon = horizon;
    this.capacity = capacity;
    this.scale = scale;
    this.interval = interval;
    this.unused = unused;
    this.ifAt = ifAt;
    this.ifBacklog = ifBacklog;
  }

  /**
   * The processor of one claim, whose arguments {@link ExactArgs#checkClaim} and {@link
   * ExactArgs#checkUnused} accepted (its counter), with its conditional give-back (0: none).
   */
  public static TokenClaimProcessor of(Counter counter, long want, long need, long giveBack, long horizonMicros,
      long nowMicros, long unused, long ifAt, long ifBacklog) {
    return new TokenClaimProcessor(nowMicros, want, need, giveBack, horizonMicros, counter.limit().capacity(),
        counter.scale(), counter.interval(), unused, ifAt, ifBacklog);
  }

  /** The answer as a {@link TokenGrant}. */
  public static TokenGrant grant(long[] out) {
    return new TokenGrant(out[0], out[1], out[2], out[3], out[4]);
  }

  @Override
  public long[] process(Map.Entry<byte[], CounterEntry> entry) {
    CounterEntry state = entry.getValue() == null ? CounterEntry.EMPTY : entry.getValue();
    long at = state.bucketTime(now);
    // tokens a node claimed and did not use: back to the bucket, never above full
    long backlog = state.backlogAt(at, scale) - giveBack * interval;
    boolean unusedBack = unused > 0 && state.bucketIs(ifAt, ifBacklog);
    if (unusedBack) {
      backlog -= unused;
    }
    backlog = Math.max(0, backlog);
    long burst = capacity * interval;
    long room = burst + horizon * scale - backlog; // negative when in debt beyond the horizon
    long granted = room > 0 ? Math.min(want, room / interval) : 0;
    if (granted < need) {
      granted = 0;
    }
    long after = backlog + granted * interval;
    if (granted > 0 || unusedBack) {
      // the state is at rest (equal to a fresh key, a full bucket) once the backlog has drained; what the
      // grant leaves is the highest point claims took the backlog to (an unused give-back applies only to
      // the state the caller's own grant wrote, the mark then), where exact give-backs stop
      ExactProcessor.write(entry, state.withClaimedBucket(at, after), ExactProcessor.ceilDiv(after, scale));
    } else if (giveBack > 0 && state.hasBucket()) {
      // (a give-back of the caller's own claim, which it makes only where no other claim came since: a
      // mark above what is left would keep exact give-backs from tokens that are no longer claimed)
      CounterEntry given = state.claimsFloorAt(at, scale) > after ? state.withClaimedBucket(at, after)
          : state.withBucket(at, after);
      ExactProcessor.write(entry, given, ExactProcessor.ceilDiv(after, scale));
    }
    long level = after < burst ? (burst - after) / interval : 0;
    long retry = granted == 0 && want > 0
        ? Math.max(1, ExactProcessor.ceilDiv(Math.max(need, 1) * interval - room, scale)) : 0;
    return new long[] {granted, backlog, level, retry, at};
  }
}
