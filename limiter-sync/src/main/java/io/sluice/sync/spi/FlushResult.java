package io.sluice.sync.spi;

/**
 * The store's answer to a {@link Batch}: whether it was applied now (false for a batch applied
 * before: a retry or a replay) and, per delta in batch order, the fresh global values: for a window
 * counter the count of the delta's window and of the window before it; for GCRA the backlog in
 * scaled units at the batch's time; for a regional counter also the region's share of the quota;
 * for the window counter of an ordinary limit also the node's claim on the window.
 */
public final class FlushResult {
  private final boolean applied;
  private final long[] values;
  /** Regional counters: per delta, the region's share for the delta's window and the next; else null. */
  private final long[] shares;
  /** Per delta, the node's claim on the delta's window (-1: the store keeps no claim for it); or null. */
  private final long[] claims;
  /** Per delta, the nodes the node's part of a sliding window's fading is split by (0: none); or null. */
  private final long[] splits;
  /** Per delta, 1 where a take was counted; or null. */
  private final long[] taken;
  /** The store had lost this node's sequence record, and with it the counts it had acknowledged. */
  private final boolean storeForgot;
  /** Nodes alive as the heartbeat the batch carried found them; 0 when it carried none. */
  private final int alive;
  /** Per delta, the claim the node holds on each window it asked for ahead of the delta's; or null. */
  private final long[] ahead;

  public FlushResult(boolean applied, long[] values) {
    this(applied, values, null, null, null);
  }

  public FlushResult(boolean applied, long[] values, long[] shares, long[] claims) {
    this(applied, values, shares, claims, null);
  }

  public FlushResult(boolean applied, long[] values, long[] shares, long[] claims, long[] splits) {
    this(applied, values, shares, claims, splits, null);
  }

  public FlushResult(boolean applied, long[] values, long[] shares, long[] claims, long[] splits, long[] taken) {
    this(applied, values, shares, claims, splits, taken, false);
  }

  private FlushResult(boolean applied, long[] values, long[] shares, long[] claims, long[] splits, long[] taken,
      boolean storeForgot) {
    this(applied, values, shares, claims, splits, taken, storeForgot, 0, null);
  }

  private FlushResult(boolean applied, long[] values, long[] shares, long[] claims, long[] splits, long[] taken,
      boolean storeForgot, int alive, long[] ahead) {
    this.ahead = ahead;
    this.alive = alive;
    this.storeForgot = storeForgot;
    this.applied = applied;
    this.values = values;
    this.shares = shares;
    this.claims = claims;
    this.splits = splits;
    this.taken = taken;
  }

  public boolean applied() {
    return applied;
  }

  /**
   * Whether the store had lost what it knew of this node on the batch's group when the batch came: it
   * had recorded the node's batches there within its sequence TTL and found no record now (a restart
   * without persistence, {@code FLUSHALL}, a Hazelcast cluster started again empty). The counts it had
   * acknowledged from the node, and the claims it had granted, are gone with it; the node sends its
   * admitted permits of the windows that still weigh again (see {@code SyncedLimiter}). Always false
   * for a claim-only batch, which leaves sequences alone.
   */
  public boolean storeForgot() {
    return storeForgot;
  }

  /** This answer, marked as coming from a store that forgot the node ({@link #storeForgot()}). */
  public FlushResult forgetting() {
    return new FlushResult(applied, values, shares, claims, splits, taken, true, alive, ahead);
  }

  /**
   * This answer with the heartbeat's: {@code alive} nodes in the registry, this one included (at
   * least 1).
   */
  public FlushResult withAlive(int alive) {
    if (alive < 1) {
      throw new IllegalArgumentException("alive: a heartbeat counts at least its own node, got " + alive);
    }
    return new FlushResult(applied, values, shares, claims, splits, taken, storeForgot, alive, ahead);
  }

  /**
   * This answer with, per delta, the claim the node holds on each of the windows its delta asked for
   * ahead ({@link Delta#claimingAhead}); 0 where it asked for none or none was granted.
   */
  public FlushResult withAhead(long[] ahead) {
    return new FlushResult(applied, values, shares, claims, splits, taken, storeForgot, alive, ahead);
  }

  /**
   * The claim the node holds on each of the {@link Delta#aheadWindows()} windows after delta i's, as
   * asked for by {@link Delta#claimingAhead} (the same on each: granted where all of them had room, and
   * never below what the node held there before); 0 where it asked for none, or none was granted.
   */
  public long ahead(int i) {
    return ahead == null ? 0 : ahead[i];
  }

  /**
   * Sliding window counters: where the part of the previous window's fading that the node's claim on
   * delta i's window holds starts later than the delta's time (the previous window had not faded by
   * what is left of the nodes' allowances' reserve yet: {@link Delta#partStartMicros}), when, in
   * microseconds from the window's start; else 0, the part starting with the claim. (The slot that a
   * fixed window's {@link #ahead} uses.)
   */
  public long fadingPartFrom(int i) {
    return ahead == null ? 0 : ahead[i];
  }

  /**
   * The nodes alive, the sender included, as the heartbeat its batch carried ({@link Batch#beating})
   * found them; 0 when the batch carried none.
   */
  public int alive() {
    return alive;
  }

  public int size() {
    return values.length / 2;
  }

  /** Window count of delta i's window, or GCRA backlog of delta i. */
  public long current(int i) {
    return values[2 * i];
  }

  /** Window count of the window before delta i's; 0 for GCRA. */
  public long previous(int i) {
    return values[2 * i + 1];
  }

  /**
   * Regional counters: the share of the quota the coordinator gave this region for delta i's window,
   * or -1 when no lease covers it (the node then enforces the static share); -1 for other counters.
   */
  public long share(int i) {
    return shares == null ? -1 : shares[2 * i];
  }

  /**
   * The node's claim on delta i's window after this flush: how many permits it may admit there
   * beyond what the store has counted from it (see {@link Delta#claiming}); -1 when the store keeps
   * no claims for this counter (GCRA, regional quotas).
   */
  public long claim(int i) {
    return claims == null ? -1 : claims[i];
  }

  /**
   * Sliding windows: the nodes this node's part of the previous window's fading is split by after
   * this flush: the node holds previous count / window / split per unit of time from its claim on,
   * beyond the claim itself; 0 when it holds no part (it gave its claim up, or the other claimants'
   * parts leave none). The split asked for ({@link Delta#nodes()}), or more where the other
   * claimants' parts leave less. 0 for other counters.
   */
  public int split(int i) {
    return splits == null ? 0 : (int) splits[i];
  }

  /**
   * Whether delta i's take ({@link Delta#taking}) was counted: the claim granted covered the delta's
   * need, and the take was taken out of it ({@link #claim(int)} is what is left). False for deltas
   * without a take, and for a take whose token the store had seen.
   */
  public boolean taken(int i) {
    return taken != null && taken[i] == 1;
  }

  /** Like {@link #share(int)}, for the window after delta i's. */
  public long nextShare(int i) {
    return shares == null ? -1 : shares[2 * i + 1];
  }
}
