package io.sluice.sync.sim;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.ExactArgs;
import io.sluice.sync.spi.ExactResult;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.LeaseStore;
import io.sluice.sync.spi.SequenceWitness;
import io.sluice.sync.spi.StoreKeys;
import io.sluice.sync.spi.TokenGrant;
import io.sluice.sync.spi.TokenStore;
import io.sluice.sync.spi.state.CounterEntry;
import io.sluice.sync.spi.state.ExactProcessor;
import io.sluice.sync.spi.state.ExpiringEntry;
import io.sluice.sync.spi.state.FlushProcessor;
import io.sluice.sync.spi.state.LeaseProcessor;
import io.sluice.sync.spi.state.TokenClaimProcessor;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.AbstractMap;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A unit-test double of the store that keeps claims, exact state, leases and token claims as the
 * scripts do: it runs the same updates as the Hazelcast store's entry processors ({@link
 * FlushProcessor}, {@link ExactProcessor}, {@link LeaseProcessor}, {@link TokenClaimProcessor}: the
 * arithmetic of {@code flush.lua}, the exact scripts, {@code lease.lua} and {@code token_claim.lua},
 * which {@code CounterStoreContract} (limiter-sync-testkit) and the test kit's exact, lease and token contracts check against
 * both real stores, and against this one in the test kit's own tests) on a plain map, in the caller's thread, on the callers'
 * clocks. Nothing expires: a test drives windows, not TTLs; the time to live the scripts would set is
 * kept ({@link #ttlMillis}). Sequences are recorded per node and group as the Redis script does (one
 * record per batch). Thread-safe (every call holds the store's monitor).
 *
 * <p>For tests of code that uses {@code SyncedLimiter}: {@code SyncedLimiter.builder(limit, new
 * MemoryStore()).ticker(ticker).autoSync(false)} decides as over a real store, with syncs driven by
 * the test ({@code syncNow()}).
 */
public final class MemoryStore implements CounterStore, ExactStore, LeaseStore, TokenStore {
  private static final String PREFIX = "mem";
  /** Most nodes whose sequence one key remembers, as the Hazelcast store's {@code MAX_NODES_PER_KEY}. */
  static final int MAX_NODES_PER_KEY = 1_024;
  private final Map<ByteBuffer, CounterEntry> counters = new HashMap<>();
  /**
   * Per counter key and window, the permits its count of that window gained over the store's life (a
   * window dropped as old is not subtracted).
   */
  private final Map<ByteBuffer, Map<Long, Long>> counted = new HashMap<>();
  /** The time to live each counter key was last given, ms. */
  private final Map<ByteBuffer, Long> ttls = new HashMap<>();
  private final Map<String, Long> sequences = new HashMap<>();
  private final Map<String, Long> registry = new HashMap<>();
  private final int groups;
  private final SequenceWitness witness = new SequenceWitness(Duration.ofDays(365 * 1000));
  private long calls;
  private long deltas;

  /** A store whose keys spread over {@code groups} groups (hash slots). */
  public MemoryStore(int groups) {
    this.groups = groups;
  }

  public MemoryStore() {
    this(1);
  }

  /** Store calls so far: flushes (claim-only ones included), exact checks, leases, token claims; not heartbeats. */
  public synchronized long calls() {
    return calls;
  }

  /** Key updates so far (one per delta, exact check, lease or token claim): what a Redis server runs commands for. */
  public synchronized long keyUpdates() {
    return deltas;
  }

  /** Loses everything, as a Redis restarted without persistence does (the registry too). */
  public synchronized void forgetEverything() {
    counters.clear();
    counted.clear();
    ttls.clear();
    sequences.clear();
    registry.clear();
  }

  /**
   * Permits counted on the window counts of this limit's key over the store's life, every update's rise
   * less its give-backs (a window dropped as old is not subtracted): with no loss of state, what the
   * nodes admitted (DESIGN's "every admitted hit reaches the store exactly once").
   */
  public synchronized long counted(String limitName, String key) {
    Map<Long, Long> byWindow = counted.get(ByteBuffer.wrap(StoreKeys.counterKey(PREFIX, limitName, key)));
    return byWindow == null ? 0 : byWindow.values().stream().mapToLong(Long::longValue).sum();
  }

  /** {@link #counted(String, String)} on one window of the key. */
  public synchronized long counted(String limitName, String key, long window) {
    Map<Long, Long> byWindow = counted.get(ByteBuffer.wrap(StoreKeys.counterKey(PREFIX, limitName, key)));
    return byWindow == null ? 0 : byWindow.getOrDefault(window, 0L);
  }

  /** {@link #counted(String, String)} over every key of the store. */
  public synchronized long countedInAll() {
    long sum = 0;
    for (Map<Long, Long> byWindow : counted.values()) {
      for (long c : byWindow.values()) {
        sum += c;
      }
    }
    return sum;
  }

  /** The count of a window of a key, as stored. */
  public synchronized long count(String limitName, String key, long window) {
    CounterEntry e = counters.get(ByteBuffer.wrap(StoreKeys.counterKey(PREFIX, limitName, key)));
    return e == null ? 0 : e.count(window);
  }

  /**
   * The time to live, ms, the scripts last gave the counter of this limit and key (as Redis's PTTL
   * right after that write; nothing counts it down here), or -1 when it has no counter.
   */
  public synchronized long ttlMillis(String limitName, String key) {
    Long ttl = ttls.get(ByteBuffer.wrap(StoreKeys.counterKey(PREFIX, limitName, key)));
    return ttl == null ? -1 : ttl;
  }

  /** Whether the store holds state for this limit and key. */
  public synchronized boolean exists(String limitName, String key) {
    return counters.containsKey(ByteBuffer.wrap(StoreKeys.counterKey(PREFIX, limitName, key)));
  }

  /** Permits the sliding window log of this limit's key holds, 0 when there is none. */
  public synchronized long logSize(String limitName, String key) {
    CounterEntry e = counters.get(ByteBuffer.wrap(StoreKeys.counterKey(PREFIX, limitName, key)));
    return e == null ? 0 : e.log().size();
  }

  /** The sum of every node's claims on a window of a key. */
  public synchronized long claims(String limitName, String key, long window) {
    CounterEntry e = counters.get(ByteBuffer.wrap(StoreKeys.counterKey(PREFIX, limitName, key)));
    return e == null ? 0 : e.claimsOn(window);
  }

  @Override
  public int group(Counter counter, String key) {
    return Math.floorMod(key.hashCode(), groups);
  }

  /** flush.lua (and its processor) count takes and settle them. */
  @Override
  public boolean countsTakes() {
    return true;
  }

  /** Claims on window counters, as flush.lua keeps them. */
  @Override
  public boolean keepsClaims() {
    return true;
  }

  /** flush.lua (and its processor) keep the nodes' allowances' reserve. */
  @Override
  public boolean keepsAllowances() {
    return true;
  }

  @Override
  public int maxBatchSize() {
    return 64;
  }

  @Override
  public synchronized CompletionStage<FlushResult> flush(Batch batch) {
    batch.requireAtMost(maxBatchSize());
    calls++;
    deltas += batch.deltas().size();
    byte mode;
    String seqKey = batch.nodeId() + "/" + batch.group();
    boolean forgot = false;
    if (batch.claimOnly()) {
      mode = FlushProcessor.CLAIM;
    } else {
      Long last = sequences.get(seqKey);
      forgot = last == null && witness.forgot(batch.nodeId(), batch.group());
      witness.recorded(batch.nodeId(), batch.group());
      mode = last != null && last >= batch.sequence() ? FlushProcessor.READ : FlushProcessor.IF_NEWER;
      if (mode == FlushProcessor.IF_NEWER) {
        sequences.put(seqKey, batch.sequence());
      }
    }
    int n = batch.deltas().size();
    long[] values = new long[2 * n];
    long[] claims = new long[n];
    long[] splits = new long[n];
    long[] taken = new long[n];
    long[] ahead = new long[n];
    boolean applied = false;
    // the processor the real store builds, run key by key with that key's deltas in batch order (a
    // key's previous and current windows may come in one batch: one sequence check for both)
    // (as many nodes' sequences per key as the Hazelcast store remembers: a simulation runs up to 1,024 nodes)
    FlushProcessor.Plan plan = FlushProcessor.plan(batch, FlushProcessor.byKey(batch, PREFIX), mode, 0,
        Long.MAX_VALUE / 4, MAX_NODES_PER_KEY);
    for (int k = 0; k < plan.keys.length; k++) {
      long[] out = run(plan.keys[k], plan.processor::process);
      applied |= out[0] == FlushProcessor.APPLIED;
      plan.answer(k, out, values, claims, splits, taken, ahead);
    }
    FlushResult result = new FlushResult(applied, values, null, claims, splits, taken).withAhead(ahead);
    if (batch.beats()) {
      result = result.withAlive(beat(batch.beatNode(), batch.beatNowMillis(), batch.beatTtlMillis()));
    }
    return CompletableFuture.completedFuture(forgot ? result.forgetting() : result);
  }

  /** Every batch may carry its node's heartbeat, as flush.lua takes it on a standalone Redis. */
  @Override
  public boolean beatsInFlush(int group) {
    return true;
  }

  @Override
  public synchronized CompletionStage<ExactResult> acquire(Limit limit, String key, long cost, long nowMicros) {
    ExactArgs.checkAcquire(limit, key, cost, nowMicros);
    calls++;
    deltas++;
    ExactProcessor p = ExactProcessor.of(limit, cost, nowMicros);
    long[] out = run(StoreKeys.counterKey(PREFIX, limit, key), p::process);
    return CompletableFuture.completedFuture(ExactProcessor.result(out));
  }

  @Override
  public synchronized CompletionStage<Void> giveBack(Limit limit, String key, long cost, long nowMicros, long window) {
    ExactArgs.checkAcquire(limit, key, cost, nowMicros);
    calls++;
    deltas++;
    run(StoreKeys.counterKey(PREFIX, limit, key), ExactProcessor.givingBack(limit, cost, nowMicros, window)::process);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public synchronized CompletionStage<Lease> lease(Counter counter, String key, long window, long elapsedMicros,
      long want, long need) {
    long windowMicros = ExactArgs.checkLease(counter, key, want, need);
    calls++;
    deltas++;
    Limit limit = counter.limit();
    LeaseProcessor p = new LeaseProcessor(window, ExactArgs.leaseElapsedMicros(elapsedMicros, windowMicros),
        windowMicros, ExactArgs.leaseUnitMicros(limit, windowMicros), limit.capacity(), want, need,
        counter.windowTtlMillis());
    long[] out = run(StoreKeys.counterKey(PREFIX, limit, key), p::process);
    return CompletableFuture.completedFuture(LeaseProcessor.lease(out));
  }

  @Override
  public synchronized CompletionStage<TokenGrant> claimTokens(Limit limit, String key, long want, long need,
      long giveBack, long horizonMicros, long nowMicros, long unused, long ifAt, long ifBacklog) {
    Counter c = ExactArgs.checkClaim(limit, key, want, need, giveBack, horizonMicros, nowMicros);
    ExactArgs.checkUnused(unused, ifAt, ifBacklog);
    calls++;
    deltas++;
    TokenClaimProcessor p = TokenClaimProcessor.of(c, want, need, giveBack, horizonMicros, nowMicros, unused, ifAt,
        ifBacklog);
    long[] out = run(StoreKeys.counterKey(PREFIX, limit, key), p::process);
    return CompletableFuture.completedFuture(TokenClaimProcessor.grant(out));
  }

  @Override
  public synchronized CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
    CounterStore.checkHeartbeat(nodeId, ttl);
    return CompletableFuture.completedFuture(beat(nodeId, nowMillis, ttl.toMillis()));
  }

  private int beat(String nodeId, long nowMillis, long ttlMillis) {
    registry.put(nodeId, nowMillis + ttlMillis);
    registry.values().removeIf(deadline -> deadline <= nowMillis);
    return registry.size();
  }

  @Override
  public synchronized CompletionStage<Void> leave(String nodeId, long nowMillis) {
    CounterStore.checkHeartbeat(nodeId, LEFT_MEMORY);
    registry.remove(nodeId);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public void close() {
  }

  private long[] run(byte[] key, java.util.function.Function<Map.Entry<byte[], CounterEntry>, long[]> processor) {
    ByteBuffer k = ByteBuffer.wrap(key);
    Entry entry = new Entry(key, counters.get(k));
    CounterEntry before = entry.getValue();
    long[] out = processor.apply(entry);
    if (entry.getValue() != null) {
      tally(k, before, entry.getValue());
      counters.put(k, entry.getValue());
      if (entry.ttlMillis > 0) {
        ttls.put(k, entry.ttlMillis);
      }
    }
    return out;
  }

  /** What one update counted, per window it holds after it ({@link #counted}). */
  private void tally(ByteBuffer k, CounterEntry before, CounterEntry after) {
    for (long w : after.windows()) {
      long rise = after.count(w) - (before == null ? 0 : before.count(w));
      if (rise != 0) {
        counted.computeIfAbsent(k, x -> new HashMap<>()).merge(w, rise, Long::sum);
      }
    }
  }

  /** A key's entry for one update: its value, and the time to live the update gave it (0: kept). */
  private static final class Entry extends AbstractMap.SimpleEntry<byte[], CounterEntry>
      implements ExpiringEntry<CounterEntry> {
    private static final long serialVersionUID = 1L;
    long ttlMillis;

    Entry(byte[] key, CounterEntry value) {
      super(key, value);
    }

    @Override
    public void setValue(CounterEntry value, long ttlMillis) {
      setValue(value);
      this.ttlMillis = ttlMillis;
    }

    @Override
    public void setValueKeepingExpiry(CounterEntry value) {
      setValue(value);
    }
  }
}
