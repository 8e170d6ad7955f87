package io.sluice.sync.sim;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.ExactResult;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.LeaseStore;
import io.sluice.sync.spi.TokenGrant;
import io.sluice.sync.spi.TokenStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * One node's way to the store in a {@link SimulatedNodes} run. With a round trip: a call its sync thread
 * makes reaches the store half a round trip of simulated time after it was sent and is answered half
 * a round trip later (the sync thread waits, simulated time goes on); a call from any other thread (a
 * decision's) is answered at once. The store's answer itself comes from the store underneath, whole,
 * at arrival: a store whose answers complete in the caller's thread ({@code MemoryStore}) is the one
 * that keeps the run deterministic.
 */
final class LatentStore implements CounterStore, ExactStore, LeaseStore, TokenStore {
  private final CounterStore store;
  private final SimulatedNodes.Node node;
  private final SimulatedNodes nodes;
  private final boolean simulatedRegistry;

  LatentStore(CounterStore store, SimulatedNodes.Node node, SimulatedNodes nodes) {
    if (!(store instanceof ExactStore && store instanceof LeaseStore && store instanceof TokenStore)) {
      throw new IllegalArgumentException("store: a simulation with a round trip needs a store with exact checks,"
          + " leases and token claims (MemoryStore, or a real store), got " + store.getClass().getName());
    }
    this.store = store;
    this.node = node;
    this.nodes = nodes;
    this.simulatedRegistry = store instanceof MemoryStore;
  }

  /** The call, sent now: at once off the sync thread, else applied at +R/2 and answered at +R. */
  private <T> CompletionStage<T> travel(Supplier<CompletionStage<T>> call) {
    if (!node.onSyncThread()) {
      return call.get();
    }
    long sent = nodes.now();
    long trip = nodes.roundTripNanos();
    nodes.waitUntil(node, sent + trip / 2, sent + trip);
    CompletableFuture<T> answer = new CompletableFuture<>();
    try {
      answer.complete(call.get().toCompletableFuture().join());
    } catch (CompletionException e) {
      answer.completeExceptionally(e.getCause() == null ? e : e.getCause());
    } catch (RuntimeException e) {
      answer.completeExceptionally(e);
    }
    nodes.waitUntil(node, sent + trip, sent + trip);
    return answer;
  }

  @Override
  public int group(Counter counter, String key) {
    return store.group(counter, key);
  }

  @Override
  public int maxBatchSize() {
    return store.maxBatchSize();
  }

  @Override
  public boolean countsTakes() {
    return store.countsTakes();
  }

  @Override
  public boolean keepsClaims() {
    return store.keepsClaims();
  }

  @Override
  public boolean keepsAllowances() {
    return store.keepsAllowances();
  }

  @Override
  public Duration callTimeout() {
    return store.callTimeout();
  }

  @Override
  public CompletionStage<FlushResult> flush(Batch batch) {
    // a beat the flush carries is stamped on the registry's time, as a heartbeat call is (see registryMillis)
    Batch sent = batch.beats() ? batch.beating(batch.beatNode(), registryMillis(batch.beatNowMillis()),
        Duration.ofMillis(batch.beatTtlMillis())) : batch;
    return travel(() -> store.flush(sent));
  }

  /** As the store underneath: a flush carries the node's beat where it takes one (MemoryStore: always). */
  @Override
  public boolean beatsInFlush(int group) {
    return store.beatsInFlush(group);
  }

  /**
   * The node registry's time: the limiter beats with the wall clock's time, which a simulation runs
   * far from (1,024 nodes take longer than a simulated second to simulate one, and a beat would lapse
   * between two of a node's beats); an in-memory store's registry is kept on the simulated clock. A
   * real store's registry lives on the wall clock, as its keys' TTLs do, and is left on it.
   */
  private long registryMillis(long nowMillis) {
    return simulatedRegistry ? Math.floorDiv(nodes.now(), 1_000_000L) : nowMillis;
  }

  /**
   * The simulation's clock is the store's: a node whose clock is set apart ({@link SimulatedNodes}'
   * offsets) and aligns it to its store's ({@code alignClockToStore}) reads it here.
   */
  @Override
  public boolean tellsTime() {
    return true;
  }

  /** The simulated time at which the call reaches the store. */
  @Override
  public CompletionStage<Long> timeMicros() {
    return travel(() -> CompletableFuture.completedFuture(Math.floorDiv(nodes.now(), 1_000L)));
  }

  @Override
  public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
    long at = registryMillis(nowMillis);
    return travel(() -> store.heartbeat(nodeId, at, ttl));
  }

  @Override
  public CompletionStage<Void> leave(String nodeId, long nowMillis) {
    long at = registryMillis(nowMillis);
    return travel(() -> store.leave(nodeId, at));
  }

  @Override
  public CompletionStage<ExactResult> acquire(Limit limit, String key, long cost, long nowMicros) {
    return travel(() -> ((ExactStore) store).acquire(limit, key, cost, nowMicros));
  }

  @Override
  public CompletionStage<Void> giveBack(Limit limit, String key, long cost, long nowMicros, long window) {
    return travel(() -> ((ExactStore) store).giveBack(limit, key, cost, nowMicros, window));
  }

  @Override
  public CompletionStage<Lease> lease(Counter counter, String key, long window, long elapsedMicros, long want,
      long need) {
    return travel(() -> ((LeaseStore) store).lease(counter, key, window, elapsedMicros, want, need));
  }

  @Override
  public CompletionStage<TokenGrant> claimTokens(Limit limit, String key, long want, long need, long giveBack,
      long horizonMicros, long nowMicros, long unused, long ifAt, long ifBacklog) {
    return travel(() -> ((TokenStore) store).claimTokens(limit, key, want, need, giveBack, horizonMicros, nowMicros,
        unused, ifAt, ifBacklog));
  }

  /** The store underneath is the run's: closed by whoever opened it. */
  @Override
  public void close() {
  }
}
