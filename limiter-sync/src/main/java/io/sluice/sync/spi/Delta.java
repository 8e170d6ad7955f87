package io.sluice.sync.spi;

/**
 * Permits one node admitted for one key of one limit since its last flush. For a window counter,
 * {@code window} is the index of the window they were admitted in (windows aligned to the epoch);
 * for GCRA it is unused.
 */
public final class Delta {
  /** The most nodes a claim is split between (the stores keep a claimant's count with its time). */
  public static final int MAX_NODES = 4095;
  private final Counter counter;
  private final String key;
  private final long window;
  private final long amount;
  private final long denied;
  /** Window counters: the claim asked for (0 gives it up) and the nodes it is split between. */
  private final long want;
  private final int nodes;
  /** Window counters: the least claim the node needs now, granted whenever that much is free. */
  private final long need;
  /**
   * Window counters: a take's token (a claim-only batch: the amount is counted only if the claim
   * covers the need) or, with {@link #settle}, the token of a take whose answer the node never got;
   * 0: none.
   */
  private final long token;
  /** With a token in a numbered batch: +permits to count unless that take was counted, -permits to un-count if it was. */
  private final long settle;
  /**
   * Fixed windows: the windows after this one the claim also asks for (0: none), and the permits per
   * window it asks for in each; see {@link #claimingAhead}.
   */
  private final int aheadWindows;
  private final long aheadWant;
  /** Window counters: of its claim held, the most the node may still admit while this delta travels (-1: all); see {@link #keeping}. */
  private final long keep;
  /** A fixed window's permits sent once the window is over: counted, nothing else; see {@link #afterItsWindow}. */
  private final boolean afterItsWindow;
  /** Sliding windows: whether a claim asked for holds a part of the previous window's fading; see {@link #withoutFadingPart}. */
  private final boolean fadingPart;
  /** Window counters: of the amount, permits admitted under the node's allowance, and the allowance spent; see {@link #allowing}. */
  private final long allowed;
  private final long spent;
  /** Window counters: permits the store keeps from claims and takes for the nodes' allowances; see {@link #allowing}. */
  private final long reserve;

  public Delta(Counter counter, String key, long window, long amount) {
    this(counter, key, window, amount, 0);
  }

  /**
   * With {@code denied}: permits asked for and refused since the last flush, the demand a region
   * coordinator weighs (regional counters only; other stores and counters ignore it).
   */
  public Delta(Counter counter, String key, long window, long amount, long denied) {
    if (counter == null) {
      throw new IllegalArgumentException("counter: must not be null");
    }
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("key: must not be null or empty");
    }
    if (amount < 0 || amount >= Counter.LUA_MAX_EXACT) {
      throw new IllegalArgumentException("amount: must be between 0 and 2^53, got " + amount);
    }
    if (denied < 0 || denied >= Counter.LUA_MAX_EXACT) {
      throw new IllegalArgumentException("denied: must be between 0 and 2^53, got " + denied);
    }
    this.counter = counter;
    this.key = key;
    this.window = window;
    this.amount = amount;
    this.denied = denied;
    this.want = 0;
    this.nodes = 1;
    this.need = 0;
    this.token = 0;
    this.settle = 0;
    this.aheadWindows = 0;
    this.aheadWant = 0;
    this.keep = -1;
    this.afterItsWindow = false;
    this.fadingPart = true;
    this.allowed = 0;
    this.spent = 0;
    this.reserve = 0;
  }

  private Delta(Delta d, long want, long need, int nodes, long token, long settle) {
    this(d, want, need, nodes, token, settle, d.aheadWindows, d.aheadWant, d.keep, false, d.fadingPart, d.allowed,
        d.spent, d.reserve);
  }

  private Delta(Delta d, long want, long need, int nodes, long token, long settle, int aheadWindows, long aheadWant,
      long keep, boolean afterItsWindow, boolean fadingPart, long allowed, long spent, long reserve) {
    this.counter = d.counter;
    this.key = d.key;
    this.window = d.window;
    this.amount = d.amount;
    this.denied = d.denied;
    this.want = want;
    this.nodes = nodes;
    this.need = need;
    this.token = token;
    this.settle = settle;
    this.aheadWindows = aheadWindows;
    this.aheadWant = aheadWant;
    this.keep = keep;
    this.afterItsWindow = afterItsWindow;
    this.fadingPart = fadingPart;
    this.allowed = allowed;
    this.spent = spent;
    this.reserve = reserve;
  }

  /**
   * A fixed window's permits sent once their window is over (at the node's time): the store counts
   * them and does nothing else, since a claim on a fixed window that is over weighs nowhere (on Redis
   * one command, not a read and a write of the key's claims: most of the windows a many-key flush
   * sends). The answer's claim and split are 0. Only for a plain delta of an ordinary fixed window
   * (no claim, take or settle); the caller knows the window is over.
   *
   * @throws IllegalArgumentException for another counter, or a delta with a claim, take or settle
   */
  public Delta afterItsWindow() {
    if (!goesAfterItsWindow(counter)) {
      throw new IllegalArgumentException("afterItsWindow: a fixed window's counter only, got " + counter);
    }
    if (want != 0 || token != 0 || settle != 0 || aheadWindows != 0 || keep >= 0) {
      throw new IllegalArgumentException("afterItsWindow: a plain delta only (no claim, take or settle)");
    }
    return new Delta(this, 0, 0, 1, 0, 0, 0, 0, -1, true, true, 0, 0, 0);
  }

  /** Whether a delta of {@code c} may be sent {@link #afterItsWindow()}: an ordinary fixed window's. */
  public static boolean goesAfterItsWindow(Counter c) {
    return c.kind() == Counter.Kind.WINDOW && !c.regional()
        && c.limit().algorithm() == io.sluice.node.Algorithm.FIXED_WINDOW;
  }

  /**
   * Whether a delta of {@code c} may carry the nodes' allowances ({@link #allowing}): an ordinary (not
   * regional) fixed window's or sliding window counter's.
   */
  public static boolean carriesAllowances(Counter c) {
    return c.kind() == Counter.Kind.WINDOW && !c.regional()
        && (c.limit().algorithm() == io.sluice.node.Algorithm.FIXED_WINDOW
        || c.limit().algorithm() == io.sluice.node.Algorithm.SLIDING_WINDOW_COUNTER);
  }

  /**
   * Sliding window counters, with the allowances' reserve ({@link #allowing}): how far into the window
   * (microseconds) the previous window's count, which weighs whole at the window's start and may fill
   * the capacity, has faded by {@code reserve} at the latest. A claim that finds the counts past what the
   * capacity less what is left of the reserve leaves holds its part of the fading from then (the store
   * records the later time and says it, {@link FlushResult#fadingPartFrom}; flush.lua's {@code
   * partStart}); nodes use their allowances only from then. 0 without a reserve.
   */
  public static long partStartMicros(long windowMicros, long reserve, long capacity) {
    // (the same double arithmetic as the script's, so that node and store agree to the microsecond)
    return reserve <= 0 ? 0 : (long) Math.floor((double) windowMicros * reserve / capacity);
  }

  /** Sent after its window (see {@link #afterItsWindow()}): counted, nothing else. */
  public boolean isAfterItsWindow() {
    return afterItsWindow;
  }

  private void notAfterItsWindow(String method) {
    if (afterItsWindow) {
      throw new IllegalArgumentException(method + ": a delta sent after its window asks for nothing but its count");
    }
  }

  /**
   * This delta asking the store for a claim on its window (window counters of ordinary limits): up
   * to {@code want} permits the node may admit beyond what the store has counted from it, out of
   * what is free, split between {@code nodes} nodes. Without it a delta asks for none and gives up
   * any claim the node held on the window. See {@link FlushResult#claim(int)}.
   *
   * @throws IllegalArgumentException for want outside 0..2^53 or nodes below 1
   */
  public Delta claiming(long want, int nodes) {
    return claiming(want, 0, nodes);
  }

  /**
   * Like {@link #claiming(long, int)}, with the least claim the node needs now: the store grants at
   * least {@code need} (counting what the node still holds) whenever that much is free, even where
   * the node's even part of what is free is smaller. A node asks for it to decide a request it
   * holds no claim for: a small limit, many nodes or a large cost must not deny a key below its limit.
   *
   * @throws IllegalArgumentException for want outside 0..2^53, need outside 0..want, or nodes below 1
   */
  public Delta claiming(long want, long need, int nodes) {
    notAfterItsWindow("claiming");
    if (want < 0 || want >= Counter.LUA_MAX_EXACT) {
      throw new IllegalArgumentException("want: must be between 0 and 2^53, got " + want);
    }
    if (need < 0 || need > want) {
      throw new IllegalArgumentException("need: must be between 0 and want " + want + ", got " + need);
    }
    if (nodes < 1 || nodes > MAX_NODES) {
      throw new IllegalArgumentException("nodes: must be between 1 and " + MAX_NODES + ", got " + nodes);
    }
    return new Delta(this, want, need, nodes, token, settle);
  }

  /**
   * In a claim-only batch ({@link Batch#CLAIM_ONLY}): this delta's amount is a <em>take</em>, counted
   * only if the claim granted covers {@link #need()} (which includes it), and then taken out of the
   * claim; see {@link FlushResult#taken(int)}. {@code token} is the node's, above every token it used
   * before: the store records it with a take it counted and ignores a take whose token it has seen
   * (a late or repeated call), so that a take whose answer never came can be settled by {@link #settling}.
   *
   * @throws IllegalArgumentException for a token below 1 or at least 2^53
   */
  public Delta taking(long token) {
    notAfterItsWindow("taking");
    if (token < 1 || token >= Counter.LUA_MAX_EXACT) {
      throw new IllegalArgumentException("token: must be between 1 and 2^53, got " + token);
    }
    return new Delta(this, want, need, nodes, token, 0);
  }

  /**
   * In a numbered batch: settles the take {@code token} of {@code permits} whose answer the node never
   * got, once (the batch's sequence makes it so). If the failure policy {@code admitted} the request,
   * the store counts the permits unless the take counted them; if it denied it, the store takes them
   * back if the take counted them. Either way the token is recorded, so the take, should it still
   * arrive, is ignored.
   *
   * @throws IllegalArgumentException for a token below 1 or at least 2^53, or permits outside 1..2^53
   */
  public Delta settling(long token, long permits, boolean admitted) {
    notAfterItsWindow("settling");
    if (token < 1 || token >= Counter.LUA_MAX_EXACT) {
      throw new IllegalArgumentException("token: must be between 1 and 2^53, got " + token);
    }
    if (permits < 1 || permits >= Counter.LUA_MAX_EXACT) {
      throw new IllegalArgumentException("permits: must be between 1 and 2^53, got " + permits);
    }
    return new Delta(this, want, need, nodes, token, admitted ? permits : -permits);
  }

  /**
   * Fixed windows, with a claim asked for ({@link #claiming}): this delta also asks for a claim of
   * {@code perWindow} permits on each of the {@code windows} windows after its own, granted where every
   * one of them has room (all nodes' claims ahead within an eighth of the capacity, an even part per
   * node), the same for each, never less than the node already holds there; see {@link FlushResult#ahead(int)}. A node
   * admits within it in those windows without asking the store, and flushes what it admitted there
   * once each window is over (the store counts the claim against the limit whatever the node uses of
   * it; the flush makes the window's count what the nodes admitted). For keys far
   * below their limits, which would otherwise ask the store in every window they are seen in.
   *
   * @throws IllegalArgumentException for windows outside 0..{@link #MAX_AHEAD}, perWindow outside
   *     0..2^53, or a delta that asks for no claim
   */
  public Delta claimingAhead(int windows, long perWindow) {
    notAfterItsWindow("claimingAhead");
    if (windows < 0 || windows > MAX_AHEAD) {
      throw new IllegalArgumentException("windows: must be between 0 and " + MAX_AHEAD + ", got " + windows);
    }
    if (perWindow < 0 || perWindow >= Counter.LUA_MAX_EXACT) {
      throw new IllegalArgumentException("perWindow: must be between 0 and 2^53, got " + perWindow);
    }
    if (windows > 0 && want == 0) {
      throw new IllegalArgumentException("claimingAhead: a delta that asks for no claim (want 0) asks for none ahead");
    }
    return new Delta(this, want, need, nodes, token, settle, windows, perWindow, keep, false, fadingPart, allowed,
        spent, reserve);
  }

  /**
   * With a claim asked for ({@link #claiming}): of the claim the node holds on the window, the store
   * keeps at most {@code permits} beyond this delta's amount as the node's own (what the node may still
   * admit while this delta travels) and grants the rest anew, as it grants what is free: an even part
   * per node near the limit, all that was asked far from it. Without it the store keeps all of the
   * claim the delta's amount did not use, and a claim granted far from the limit stays with its node
   * until that node has used it, however many requests the other nodes are denied meanwhile. The node
   * must not admit more than {@code permits} under its claim beyond this delta's amount until the
   * answer comes (and asks for no claim meanwhile: one granted before this delta arrives would be
   * trimmed with it). On a sliding window the node's part of the fading is kept besides, but for a
   * window that is over at the batch's time, where the node admits nothing more: there {@code permits}
   * bounds the claim and the part together (a claim call trims the node's claim on the window gone by
   * to the permits it admitted there and has not counted).
   *
   * @throws IllegalArgumentException for permits outside 0..2^53, or a delta that asks for no claim
   */
  public Delta keeping(long permits) {
    notAfterItsWindow("keeping");
    if (permits < 0 || permits >= Counter.LUA_MAX_EXACT) {
      throw new IllegalArgumentException("permits: must be between 0 and 2^53, got " + permits);
    }
    if (want == 0) {
      throw new IllegalArgumentException("keeping: a delta that asks for no claim (want 0) gives all of it up");
    }
    return new Delta(this, want, need, nodes, token, settle, aheadWindows, aheadWant, permits, false, fadingPart,
        allowed, spent, reserve);
  }

  /**
   * Sliding windows, with a claim asked for ({@link #claiming}): the claim holds no part of the previous
   * window's fading (the budget that window's count frees as it fades, which a claimant otherwise takes
   * without a flush, an even part of it from the time of its claim; {@link FlushResult#split(int)} is
   * then 0). What fades stays with the store for whichever node asks first. For a key at its limit over
   * several nodes, where a node's part over its next sync intervals is a few permits: held by one node,
   * they are denied to the others' requests until it has requests for them, and what is left of the
   * parts when the window ends is lost to it.
   *
   * @throws IllegalArgumentException for a delta that asks for no claim
   */
  public Delta withoutFadingPart() {
    notAfterItsWindow("withoutFadingPart");
    if (want == 0) {
      throw new IllegalArgumentException("withoutFadingPart: a delta that asks for no claim (want 0) holds no part anyway");
    }
    return new Delta(this, want, need, nodes, token, settle, aheadWindows, aheadWant, keep, false, false, allowed,
        spent, reserve);
  }

  /**
   * Window counters (fixed and sliding) of ordinary limits, the nodes' allowances: the permits a node may admit on a key in a
   * window without a claim and without asking the store. {@code reserve} is what the store keeps free of
   * claims and takes on the delta's window for all nodes' allowances (the node sends its count of nodes
   * times the allowance while nodes may still use theirs, and 0 from a margin before the window's end,
   * when what is left of it goes back to the claims); {@code spent}, how much of its allowance on the
   * window the node has spent in all (used, or given up because its claim pays for the key: a node's
   * allowance on a window is spent at once, or, on a key far below its limit, first what it used and
   * later the rest), which the store records per node and takes off the reserve by
   * its rise only, so that a delta applied twice (a replay, a claim-only batch) spends once; and {@code
   * allowed}, how many of this delta's permits the node admitted under it: counted like the others, but
   * admitted under no claim, so the node's claim is not charged for them. Counts, claims and the reserve
   * left never pass the capacity together, so the nodes' allowances never pass the limit either. In a
   * claim-only batch (a take, which may be applied twice) allowed is 0; it may spend an allowance the
   * node gives up unused.
   *
   * <p>On a sliding window the previous window's count weighs whole at the window's start and may fill
   * the capacity; where a claim finds the counts past what the capacity less the reserve left, its part
   * of the fading starts only once that has faded by what is left of the reserve ({@link
   * #partStartMicros}), and nodes use their allowances only once the window is reserve / capacity in.
   *
   * @throws IllegalArgumentException for a counter other than an ordinary window counter's, allowed
   *     outside 0..amount, spent or reserve outside 0..2^53, or a delta sent after its window
   */
  public Delta allowing(long allowed, long spent, long reserve) {
    notAfterItsWindow("allowing");
    if (!carriesAllowances(counter)) {
      throw new IllegalArgumentException("allowing: a fixed or sliding window's counter of an ordinary limit only, got "
          + counter);
    }
    if (allowed < 0 || allowed > amount) {
      throw new IllegalArgumentException("allowed: must be between 0 and the amount " + amount + ", got " + allowed);
    }
    if (spent < 0 || spent >= Counter.LUA_MAX_EXACT) {
      throw new IllegalArgumentException("spent: must be between 0 and 2^53, got " + spent);
    }
    if (reserve < 0 || reserve >= Counter.LUA_MAX_EXACT) {
      throw new IllegalArgumentException("reserve: must be between 0 and 2^53, got " + reserve);
    }
    return new Delta(this, want, need, nodes, token, settle, aheadWindows, aheadWant, keep, false, fadingPart, allowed,
        spent, reserve);
  }

  /** Of the amount, the permits admitted under the node's allowance (see {@link #allowing}); 0: none. */
  public long allowed() {
    return allowed;
  }

  /** The node's allowance on the window spent in all, as of this delta (see {@link #allowing}); 0: none. */
  public long spent() {
    return spent;
  }

  /** What the store keeps free for the nodes' allowances on the window (see {@link #allowing}); 0: nothing. */
  public long reserve() {
    return reserve;
  }

  /** Whether a claim asked for holds a part of a sliding window's fading (see {@link #withoutFadingPart}). */
  public boolean holdsFadingPart() {
    return fadingPart;
  }

  /** Of the claim held, the most the node may still admit while this delta travels; -1: all of it. */
  public long keep() {
    return keep;
  }

  /** The most windows a claim asks for ahead of its own. */
  public static final int MAX_AHEAD = 16;

  /** The windows after this delta's that its claim also asks for (0: none). */
  public int aheadWindows() {
    return aheadWindows;
  }

  /** The permits per window asked for in each of {@link #aheadWindows()}. */
  public long aheadWant() {
    return aheadWant;
  }

  public Counter counter() {
    return counter;
  }

  public String key() {
    return key;
  }

  public long window() {
    return window;
  }

  public long amount() {
    return amount;
  }

  /** The claim asked for; 0: none (a held claim is given up). */
  public long want() {
    return want;
  }

  /** The least claim the node needs now (0: none). */
  public long need() {
    return need;
  }

  /** The nodes a claim is split between. */
  public int nodes() {
    return nodes;
  }

  public long denied() {
    return denied;
  }

  /** The take's or settled take's token; 0: none. */
  public long token() {
    return token;
  }

  /** A settled take: +permits to count unless the take counted them, -permits to take back if it did; 0: none. */
  public long settle() {
    return settle;
  }

  @Override
  public String toString() {
    return counter.limit().name() + "/" + key + (counter.kind() == Counter.Kind.WINDOW ? "@" + window : "")
        + " +" + amount;
  }
}
