package io.sluice.sync.spi.state;

import io.sluice.node.Algorithm;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.StoreKeys;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code flush.lua} for the counter keys of the Hazelcast store, run on each key on its own (one
 * {@code submitToKeys} call per batch; Hazelcast groups the keys by partition and member): applies a
 * batch's deltas for the key it runs on (usually one; two when a key's previous and current windows
 * are flushed together), at most once per node and sequence, and answers the values the script
 * answers for them.
 *
 * <p>Whether a batch is new for this key is decided by the node's last sequence recorded in the entry,
 * in one of three modes: {@link #READ} never applies; {@link #IF_KNOWN} applies
 * when the entry knows the node and the sequence is above its last one, and answers {@link #UNKNOWN}
 * without applying when the entry does not know the node (a new key, or one that expired); {@link
 * #IF_NEWER} applies when the sequence is above the node's last one, or the node is unknown here;
 * {@link #CLAIM} (a claim-only batch, no permits) always applies and records no sequence.
 *
 * <p>Returns {@code [status, v1, v2, ...]}: status {@link #APPLIED}, {@link #SEEN} (not applied: a
 * retry or a replay) or {@link #UNKNOWN}; then six values per delta, as in {@link FlushResult}: the
 * count (or backlog), the previous window's count, the node's claim (-1 for GCRA), the split of a
 * sliding window's claimant, 1 if a take was counted, and the claim granted on the windows ahead. It
 * carries everything it needs (including the flushing process's clock, for forgetting silent nodes),
 * so it is deterministic and Hazelcast can run the very same processor on the backup replicas.
 */
public final class FlushProcessor implements EntryUpdate {
  private static final long serialVersionUID = 1L;
  static final byte WINDOW = 'w';
  static final byte FIXED = 'f';
  static final byte GCRA = 'g';
  public static final byte READ = 0;
  public static final byte IF_KNOWN = 1;
  public static final byte IF_NEWER = 2;
  /** A claim-only batch ({@link Batch#CLAIM_ONLY}): applied every time, the node's sequence left alone. */
  public static final byte CLAIM = 3;
  static final long SEEN = 0;
  /** Values per delta in the answer. */
  static final int OUT = 6;
  public static final long APPLIED = 1;
  public static final long UNKNOWN = 2;

  private final String nodeId;
  private final long sequence;
  private final long nowMicros;
  private final long wallMillis;
  private final long retainMillis;
  private final int maxNodes;
  private final byte mode;
  /** The keys, and where each key's deltas start in the arrays below (one more entry: the end). */
  private final byte[][] keys;
  private final int[] from;
  /** Per delta, like flush.lua's arguments: kind, then window and TTL (ms), or scale and interval. */
  private final byte[] kinds;
  private final long[] first;
  private final long[] second;
  private final long[] amounts;
  /** Per window delta, as flush.lua's: the claim asked for, the capacity, the nodes, the window in us. */
  private final long[] wants;
  private final long[] capacities;
  private final int[] nodeCounts;
  private final long[] windowMicros;
  /** Per window delta, as flush.lua's: the least claim the node needs now, a take's or settle's token, the settle. */
  private final long[] needs;
  private final long[] tokens;
  private final long[] settles;
  /** Per fixed window delta: the windows after it the claim asks for too, and the claim wanted on each. */
  private final int[] aheadWindows;
  private final long[] aheadWants;
  /** Per window delta: of the claim held, the most the node keeps beyond the amount (-1: all; see Delta#keeping). */
  private final long[] keeps;
  /**
   * Per fixed window delta: sent after its window (Delta#afterItsWindow), counted and nothing else
   * (flush.lua's 'o'). A flag on a fixed window's delta, not a kind of its own, so that a member from
   * before it (a rolling upgrade; the field is then absent, null here) takes such a delta as a fixed
   * window's plain delta: counted, the claim on a window that is over given up.
   */
  private final boolean[] afterWindow;
  /**
   * Per sliding window delta: its claim holds no part of the fading (Delta#withoutFadingPart). Null from
   * a member from before it (a rolling upgrade): every claim holds one, as then.
   */
  private final boolean[] withoutFadingPart;
  /**
   * Per fixed window delta: of its amount, the permits admitted under the node's allowance, the
   * allowance spent, and the reserve the nodes' allowances hold on its window (Delta#allowing). Null
   * from a member from before them (a rolling upgrade): none.
   */
  private final long[] alloweds;
  private final long[] spents;
  private final long[] reserves;
  /**
   * Key to index, built once on each member that runs this processor (for several partitions at once).
   * Partition threads run one processor at once: a thread that finds it null builds it and publishes
   * it through the volatile; two that race build the same map, and either one serves.
   */
  private transient volatile Map<ByteBuffer, Integer> index;

  /** A processor for {@code n} deltas under {@code keys}, each filled in by {@link #put}. */
  private FlushProcessor(String nodeId, long sequence, long nowMicros, long wallMillis, long retainMillis, int maxNodes,
      byte mode, byte[][] keys, int[] from, int n) {
    this.nodeId = nodeId;
    this.sequence = sequence;
    this.nowMicros = nowMicros;
    this.wallMillis = wallMillis;
    this.retainMillis = retainMillis;
    this.maxNodes = maxNodes;
    this.mode = mode;
    this.keys = keys;
    this.from = from;
    this.kinds = new byte[n];
    this.first = new long[n];
    this.second = new long[n];
    this.amounts = new long[n];
    this.wants = new long[n];
    this.capacities = new long[n];
    this.nodeCounts = new int[n];
    this.windowMicros = new long[n];
    this.needs = new long[n];
    this.tokens = new long[n];
    this.settles = new long[n];
    this.aheadWindows = new int[n];
    this.aheadWants = new long[n];
    this.keeps = new long[n];
    this.afterWindow = new boolean[n];
    this.withoutFadingPart = new boolean[n];
    this.alloweds = new long[n];
    this.spents = new long[n];
    this.reserves = new long[n];
  }

  /** Delta i of this processor, as flush.lua takes its arguments. */
  private void put(int i, Delta delta) {
    Counter c = delta.counter();
    if (c.kind() == Counter.Kind.WINDOW) {
      afterWindow[i] = delta.isAfterItsWindow();
      kinds[i] = c.limit().algorithm() == Algorithm.FIXED_WINDOW ? FIXED : WINDOW;
      first[i] = delta.window();
      second[i] = c.windowTtlMillis();
      wants[i] = delta.want();
      capacities[i] = c.limit().capacity();
      nodeCounts[i] = delta.nodes();
      windowMicros[i] = c.windowNanos() / 1_000;
      needs[i] = delta.need();
      tokens[i] = delta.token();
      settles[i] = delta.settle();
      aheadWindows[i] = delta.aheadWindows();
      aheadWants[i] = delta.aheadWant();
      keeps[i] = delta.keep();
      withoutFadingPart[i] = !delta.holdsFadingPart();
      alloweds[i] = delta.allowed();
      spents[i] = delta.spent();
      reserves[i] = delta.reserve();
    } else {
      kinds[i] = GCRA;
      first[i] = c.scale();
      second[i] = c.interval();
    }
    amounts[i] = delta.amount();
  }

  /** The deltas of each counter key of a batch (keys under {@code prefix}), in batch order. */
  public static Map<ByteBuffer, List<Integer>> byKey(Batch batch, String prefix) {
    Map<ByteBuffer, List<Integer>> byKey = new LinkedHashMap<>();
    List<Delta> deltas = batch.deltas();
    for (int i = 0; i < deltas.size(); i++) {
      Delta d = deltas.get(i);
      byte[] key = StoreKeys.counterKey(prefix, d.counter().limit(), d.key());
      byKey.computeIfAbsent(ByteBuffer.wrap(key), k -> new ArrayList<>(1)).add(i);
    }
    return byKey;
  }

  /** A processor for some keys of a batch, and where its answers go in the batch's order. */
  public static final class Plan {
    public final FlushProcessor processor;
    /** The keys, and where each key's deltas start (one more entry: the end). */
    public final byte[][] keys;
    private final int[] from;
    /** Delta i of the processor is delta place[i] of the batch. */
    private final int[] place;

    private Plan(FlushProcessor processor, byte[][] keys, int[] from, int[] place) {
      this.processor = processor;
      this.keys = keys;
      this.from = from;
      this.place = place;
    }

    /** Copies the processor's answer for key k into the batch's values, claims, splits, takes and claims ahead. */
    public void answer(int k, long[] out, long[] values, long[] claims, long[] splits, long[] taken, long[] ahead) {
      for (int x = from[k], o = 1; x < from[k + 1]; x++, o += OUT) {
        values[2 * place[x]] = out[o];
        values[2 * place[x] + 1] = out[o + 1];
        claims[place[x]] = out[o + 2];
        splits[place[x]] = out[o + 3];
        taken[place[x]] = out[o + 4];
        ahead[place[x]] = out[o + 5];
      }
    }
  }

  /** The processor for the keys of {@code byKey} (see {@link #byKey}), in {@code mode}. */
  public static Plan plan(Batch batch, Map<ByteBuffer, List<Integer>> byKey, byte mode, long wallMillis, long retainMillis,
      int maxNodes) {
    int n = 0;
    for (List<Integer> idx : byKey.values()) {
      n += idx.size();
    }
    byte[][] keys = new byte[byKey.size()][];
    int[] from = new int[byKey.size() + 1];
    int[] place = new int[n];
    int k = 0;
    int i = 0;
    for (Map.Entry<ByteBuffer, List<Integer>> e : byKey.entrySet()) {
      keys[k++] = e.getKey().array();
      from[k - 1] = i;
      for (int d : e.getValue()) {
        place[i++] = d;
      }
    }
    from[k] = i;
    FlushProcessor processor = new FlushProcessor(batch.nodeId(), batch.sequence(), batch.nowMicros(), wallMillis,
        retainMillis, maxNodes, mode, keys, from, n);
    for (int x = 0; x < n; x++) {
      processor.put(x, batch.deltas().get(place[x]));
    }
    return new Plan(processor, keys, from, place);
  }

  @Override
  public long[] process(Map.Entry<byte[], CounterEntry> entry) {
    CounterEntry state = entry.getValue() == null ? CounterEntry.EMPTY : entry.getValue();
    long last = state.sequenceOf(nodeId);
    boolean unknown = mode == IF_KNOWN && last < 0;
    boolean apply = mode == CLAIM || (mode != READ && !unknown && sequence > last);
    int k = indexOf(entry.getKey());
    long[] out = new long[1 + OUT * (from[k + 1] - from[k])];
    out[0] = apply ? APPLIED : unknown ? UNKNOWN : SEEN;
    long[] ttlMillis = {0}; // 0: keep the entry's expiry
    for (int i = from[k], o = 1; i < from[k + 1]; i++, o += OUT) {
      if (afterWindow != null && afterWindow[i]) {
        // a fixed window that is over: its permits counted, nothing else (flush.lua's 'o'); an entry
        // gone meanwhile gets its TTL back with the count
        if (apply && amounts[i] > 0) {
          if (entry.getValue() == null) {
            ttlMillis[0] = Math.max(ttlMillis[0], second[i]);
          }
          state = state.addToWindow(first[i], amounts[i]);
        }
        out[o] = state.count(first[i]);
      } else if (kinds[i] == WINDOW || kinds[i] == FIXED) {
        state = window(state, i, apply, out, o, ttlMillis);
      } else if (kinds[i] == GCRA) {
        state = bucket(state, i, apply, out, o);
        if (apply) {
          // the state is at rest (equal to a fresh one) once the backlog has drained
          ttlMillis[0] = out[o] / first[i] / 1_000 + 1_000;
        }
      } else {
        throw new IllegalArgumentException("flush: unknown counter kind " + kinds[i]);
      }
    }
    if (apply) {
      if (mode != CLAIM) {
        state = state.withSequence(nodeId, sequence, wallMillis, retainMillis, maxNodes);
      }
      ExpiringEntry.write(entry, state, ttlMillis[0]);
    }
    return out;
  }

  /**
   * Window delta i (a fixed or sliding window's counts and claims) on the key's entry, its answer
   * written at {@code o}; {@code ttlMillis[0]} raised to what the entry must live for after it.
   */
  private CounterEntry window(CounterEntry state, int i, boolean apply, long[] out, int o, long[] ttlMillis) {
    long w = first[i];
    // the node's claim and split as the entry holds them: the answer when nothing is applied
    out[o + 2] = state.claimOf(nodeId, w);
    out[o + 3] = kinds[i] == WINDOW && state.claimSinceOf(nodeId, w) >= 0 ? state.claimSplitOf(nodeId, w) : 0;
    if (kinds[i] == WINDOW) {
      out[o + 5] = laterThanNow(state.claimSinceOf(nodeId, w), i, w);
    }
    if (apply) {
      boolean firstWrite = !state.hasWindow(w);
      state = countAndClaim(state, i, w, out, o);
      if (firstWrite) {
        // the window's first write: drop windows before the previous one, and live through the
        // next window (the TTL covers this window and the one after it, where this count still weighs)
        // (a sliding window keeps the one before the previous: its claimants' parts weigh, see claim)
        state = kinds[i] == WINDOW ? state.dropOlderThan(w - 2) : state.dropBefore(w);
        // (never below the claims ahead: the entry lives through them already)
        if (state.lastClaimWindow() <= w + 1) {
          ttlMillis[0] = Math.max(ttlMillis[0], second[i]);
        }
      }
      state = claimsAhead(state, i, w, out, o);
      if (kinds[i] == FIXED && out[o + 5] > 0) {
        long through = Math.max(state.lastClaimWindow(), w + aheadWindows[i]);
        ttlMillis[0] = Math.max(ttlMillis[0], second[i] + (through - w) * (windowMicros[i] / 1_000));
      }
    }
    out[o] = state.count(w);
    out[o + 1] = kinds[i] == FIXED ? 0 : state.count(w - 1);
    return state;
  }

  /**
   * Window delta i applied to the key's entry: its amount counted (or a take counted when the claim
   * covers its need, or a lost take settled), and the node's claim granted anew. Writes the node's
   * claim, its split and whether a take was counted to the delta's answer at {@code o}.
   */
  private CounterEntry countAndClaim(CounterEntry state, int i, long w, long[] out, int o) {
    long held = state.claimOf(nodeId, w);
    // a claim-only batch's amount is a take: counted only if the claim covers the need (flush.lua)
    long amount = mode == CLAIM ? 0 : amounts[i];
    long take = mode == CLAIM ? amounts[i] : 0;
    long seenToken = state.takeTokenOf(nodeId, w);
    // (null: a processor sent by a member from before takes, during a rolling upgrade)
    long token = tokens == null ? 0 : tokens[i];
    long settle = settles == null ? 0 : settles[i];
    boolean recordToken = settle != 0 && seenToken < token;
    state = settled(state, w, settle, seenToken >= token);
    // what of its claim the node has admitted and not counted, as it last said (a take says it
    // anew: its need less the take; a flush counts some of it). A take's need may also hold
    // permits a flush on its way has counted, and on a sliding window the previous window's
    // uncounted permits at their weight: never more than the claim, so a grant stays within
    // what is free, only a little larger
    // (permits admitted under the node's allowance were admitted under no claim: not charged to it)
    long allowed = mode == CLAIM || alloweds == null ? 0 : alloweds[i];
    // (a delta carries what its node has spent of its allowance in all, which the entry records per node:
    // what this call spends is the rise over that, so that a replay or a take applied twice spends once)
    long spentBy = spents == null ? 0 : spents[i];
    long spent = Math.max(0, spentBy - state.spentBy(nodeId, w));
    long met = take > 0 ? Math.max(0, needs[i] - take) : Math.max(0, state.metOf(nodeId, w) - (amount - allowed));
    double[] free = {0}; // (what was free before the grant, less than 0 where the counts passed the capacity)
    long claim = wants[i] > 0 ? claim(state, i, w, held, amount, amount - allowed, spent, met, free) : 0;
    boolean taken = false;
    if (take > 0 && wants[i] > 0 && seenToken < token && claim >= needs[i]) {
      amount += take;
      claim -= take;
      taken = true;
      recordToken = true;
    }
    // (a take counted that asked for nothing beyond it holds no part of the fading: flush.lua)
    // (nor does a claim asked for without one)
    int split = kinds[i] == WINDOW && wants[i] > 0 && !(taken && wants[i] == needs[i])
        && !(withoutFadingPart != null && withoutFadingPart[i]) ? grantSplit(state, i, w) : 0;
    long since = partSince(state, i, w, split, spent, free[0]);
    state = state.addToWindow(w, amount).withClaim(nodeId, w, claim, since, split, met);
    if (spent > 0) {
      state = state.withSpent(w, state.spentOn(w) + spent).withSpentBy(nodeId, w, spentBy);
    }
    if (recordToken) {
      state = state.withTakeToken(nodeId, w, token);
    }
    out[o + 2] = claim;
    out[o + 3] = split;
    out[o + 4] = taken ? 1 : 0;
    if (kinds[i] == WINDOW) {
      out[o + 5] = laterThanNow(since, i, w); // (when its part of the fading starts: flush.lua)
    }
    return state;
  }

  /**
   * A lost take's settling ({@code settle}: permits the failure policy admitted, or minus those it
   * denied) applied to window {@code w}, where the take was {@code counted} or not.
   */
  private static CounterEntry settled(CounterEntry state, long w, long settle, boolean counted) {
    if ((settle > 0 && !counted) || (settle < 0 && counted)) {
      return state.addToWindow(w, settle);
    }
    return state;
  }

  /**
   * When delta i's part of the fading, split by {@code split}, starts (us from the window's start; -1: it
   * holds none): at once where the claim found room ({@code free} not below 0), else once the previous
   * window, which still weighs past what the allowances' reserve leaves, has faded by what is left of
   * the reserve (flush.lua).
   */
  private long partSince(CounterEntry state, int i, long w, int split, long spent, double free) {
    long reserveLeft = (reserves == null ? 0 : reserves[i]) - state.spentOn(w) - spent;
    return split <= 0 ? -1 : free >= 0 ? sinceWindowStart(i, w)
        : Math.max(sinceWindowStart(i, w), Delta.partStartMicros(windowMicros[i], reserveLeft, capacities[i]));
  }

  /**
   * Window delta i's claims ahead (fixed windows), once its own window is applied: the claim granted
   * on each window ahead, written to the delta's answer at {@code o} (0: none), and held there.
   */
  private CounterEntry claimsAhead(CounterEntry state, int i, long w, long[] out, int o) {
    // (null: a processor sent by a member from before claims ahead, during a rolling upgrade)
    if (kinds[i] != FIXED || aheadWindows == null || aheadWindows[i] <= 0 || aheadWants[i] <= 0 || wants[i] <= 0) {
      return state;
    }
    long ahead = claimAhead(state, i, w);
    if (ahead > 0) {
      for (int x = 1; x <= aheadWindows[i]; x++) {
        if (ahead > state.claimOf(nodeId, w + x)) {
          state = state.withClaim(nodeId, w + x, ahead, -1, 0);
        }
      }
    }
    out[o + 5] = ahead;
    return state;
  }

  /** GCRA delta i: its amount added to the backlog (when applied); the backlog is the delta's answer at {@code o}. */
  private CounterEntry bucket(CounterEntry state, int i, boolean apply, long[] out, int o) {
    long scale = first[i];
    long interval = second[i];
    long at = state.bucketTime(nowMicros);
    long backlog = state.backlogAt(at, scale);
    if (apply) {
      backlog = CounterEntry.saturatedAdd(backlog, CounterEntry.saturatedMultiply(amounts[i], interval));
      state = state.withBucket(at, backlog);
    }
    out[o] = backlog;
    out[o + 2] = -1;
    return state;
  }

  /**
   * flush.lua's grant ({@code charged}: of the amount, what the node admitted under its claim; {@code
   * spent}: of its allowance, what it spends with this delta): what the node may still admit under its
   * old claim while this flush came
   * (committed, kept; at most what the delta keeps, see Delta#keeping), and an even part between the
   * nodes of half of what no count holds, less the claims (or what the node needs now, when that is
   * more and all of it is free, or to a node alone on a sliding window what is free), at most what it
   * asked for. A sliding window's previous count and claims weigh as they fade at the node's time, and
   * each claimant holds an even part of what fades from the time of its claim (rate prev / window /
   * nodes).
   */
  private long claim(CounterEntry state, int i, long w, long held, long amount, long charged, long spent, long met,
      double[] freeOut) {
    long at = sinceWindowStart(i, w);
    long prev = kinds[i] == WINDOW ? state.count(w - 1) : 0;
    double fade = (double) prev / windowMicros[i];
    long committed = held - charged;
    // (null: a processor sent by a member from before keeps, during a rolling upgrade: it keeps all)
    if (keeps != null && keeps[i] >= 0 && committed > keeps[i]) {
      // the node admits no more than that under its old claim while this flush travels: the rest is
      // granted anew below, as what is free is, so that a claim granted far from the limit does not
      // stay whole with a node near it while the others' requests are denied
      committed = keeps[i];
    }
    long since = state.claimSinceOf(nodeId, w);
    if (kinds[i] == WINDOW && since >= 0) {
      committed += (long) Math.floor(fade / state.claimSplitOf(nodeId, w) * Math.max(0, at - since));
    }
    if (keeps != null && keeps[i] >= 0 && at >= windowMicros[i] && committed > keeps[i]) {
      // a window that is over at the node's time: what it keeps bounds its claim and its part of the
      // fading together (flush.lua)
      committed = keeps[i];
    }
    committed = Math.max(0, committed);
    double used = (double) state.count(w) + amount + (state.claimsOn(w) - held) + committed;
    if (kinds[i] == WINDOW) {
      // the previous window's count, the claims on it, and its claimants' parts of what faded there
      // (to its end: taken without a flush, so possibly not counted yet), all fading now
      double prevFlow = (double) state.count(w - 2) / windowMicros[i]
          * Math.max(0, state.claimantsOn(w - 1, null) * windowMicros[i] - state.claimantTimesOn(w - 1, null));
      if (prevFlow < 0.5 - 1e-9) {
        prevFlow = 0; // (see flush.lua: parts under half a permit in all, none of which a claimant took)
      }
      used += (prev + state.claimsOn(w - 1) + prevFlow) * (windowMicros[i] - at) / windowMicros[i];
      // the other claimants' parts of what faded since their claims, each at its own 1 / n
      double others = state.claimantsOn(w, nodeId);
      used += fade * Math.max(0, others * at - state.claimantTimesOn(w, nodeId));
    }
    // (what claims and takes are granted out of: the capacity less what is left of the allowances'
    // reserve, the allowances spent on the window, this delta's included, taken off it)
    long reserve = reserves == null ? 0 : reserves[i];
    long grantable = capacities[i] - Math.max(0, reserve - state.spentOn(w) - spent);
    double free = Math.floor(grantable - used);
    freeOut[0] = free;
    // claims held ahead of demand take at most half of what no count holds (each node an even part
    // of it), so that unused claims of other nodes never deny a key below half its limit; what the
    // nodes said they met of their claims is demand, not held ahead of it, and weighs as counted
    long metAll = state.metOn(w) - state.metOf(nodeId, w) + Math.min(met, committed);
    double spare = Math.floor((free - (state.claimsOn(w) - held) - committed + metAll) / 2);
    // (rounded down: near the limit nodes hold nothing ahead, and each permit goes to the node that
    // has a request for it)
    long extra = free > 0 && spare > 0 ? (long) Math.floor(spare / nodeCounts[i]) : 0;
    if (free > 0 && needs[i] - committed > extra
        && (needs[i] - committed <= free || (nodeCounts[i] == 1 && kinds[i] == WINDOW))) {
      // what the node needs now, when that much is free; when less is, all of it only to a node alone
      // on a sliding window (a fixed window frees nothing before it ends; see flush.lua)
      extra = (long) Math.min(needs[i] - committed, free);
    }
    return committed + Math.max(0, Math.min(extra, wants[i] - committed));
  }

  /**
   * flush.lua's claimAhead: the claim wanted on each window after w, where every one of them has room
   * for it (all nodes' claims ahead within an eighth of the capacity, an even part per node of what the
   * others left of it, less any count); 0 when one has less than a permit.
   */
  private long claimAhead(CounterEntry state, int i, long w) {
    long grant = aheadWants[i];
    for (int x = 1; x <= aheadWindows[i]; x++) {
      long others = state.claimsOn(w + x) - state.claimOf(nodeId, w + x);
      long room = Math.floorDiv(capacities[i] / 8 - state.count(w + x) - others, nodeCounts[i]);
      grant = Math.min(grant, room);
    }
    return Math.max(0, grant);
  }

  /**
   * flush.lua's split of a sliding window's claimant: the nodes it asked to split the fading by, or,
   * where the other claimants' parts leave less than that, the part that is left (0: none is).
   */
  private int grantSplit(CounterEntry state, int i, long w) {
    double others = state.claimantsOn(w, nodeId);
    if (others + 1.0 / nodeCounts[i] <= 1 + 1e-9) {
      return nodeCounts[i];
    }
    if (others >= 1 - 1e-9) {
      return 0;
    }
    long split = (long) Math.ceil(1 / (1 - others) - 1e-9);
    return split > Delta.MAX_NODES ? 0 : (int) split;
  }

  /** A claimant's part of the fading starting at {@code since} (us in window w) where that is after the node's time, else 0. */
  private long laterThanNow(long since, int i, long w) {
    return since > sinceWindowStart(i, w) ? since : 0;
  }

  /** The node's time from the start of window w, in us, within the window. */
  private long sinceWindowStart(int i, long w) {
    return Math.max(0, Math.min(windowMicros[i], nowMicros - w * windowMicros[i]));
  }

  private int indexOf(byte[] key) {
    Map<ByteBuffer, Integer> map = index;
    if (map == null) {
      map = new HashMap<>(keys.length * 2);
      for (int i = 0; i < keys.length; i++) {
        map.put(ByteBuffer.wrap(keys[i]), i);
      }
      index = map; // a race builds the same map twice, harmlessly
    }
    Integer i = map.get(ByteBuffer.wrap(key));
    if (i == null) {
      throw new IllegalArgumentException("flush: no deltas for this key");
    }
    return i;
  }
}
