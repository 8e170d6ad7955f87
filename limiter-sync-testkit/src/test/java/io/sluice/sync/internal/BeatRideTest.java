package io.sluice.sync.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.ForwardingStore;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A node whose decisions ask the store a few times a second (one of many nodes sharing a limit) lets
 * its heartbeat ride on those calls: a beat asked for waits half a heartbeat interval for a call to
 * carry it, not one sync interval, before it is a call of its own. Simulated time, the syncs and
 * heartbeat steps run as the flusher thread runs them.
 */
class BeatRideTest {
  private static final Duration SYNC = Duration.ofMillis(100);

  /**
   * Heartbeat calls of their own that a node makes over its last 17.5 s of 20, deciding a new key every
   * {@code everySyncs} syncs; {@code registry} gets the nodes the registry counts at the end, as another
   * node's beat learns it.
   */
  private static int ownBeats(int everySyncs, AtomicInteger registry) {
    AtomicInteger beats = new AtomicInteger();
    MemoryStore memory = new MemoryStore();
    ForwardingStore store = new ForwardingStore(memory) {
      @Override
      public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
        beats.incrementAndGet();
        return super.heartbeat(nodeId, nowMillis, ttl);
      }
    };
    memory.heartbeat("other", System.currentTimeMillis(), Duration.ofMinutes(5)).toCompletableFuture().join();
    ManualTicker ticker = new ManualTicker(1_764_547_200_000_000_000L);
    Limit limit = Limit.fixedWindow("api").limit(1_000_000).window(Duration.ofMinutes(1)).build();
    try (SyncedLimiter node = SyncedLimiter.builder(limit, store).nodeId("n").ticker(ticker).autoSync(false)
        .syncInterval(SYNC).heartbeatInterval(Duration.ofSeconds(1)).build()) {
      int key = 0;
      int beatsAtConfirmation = -1;
      for (int step = 1; step <= 200; step++) {
        ticker.advance(SYNC);
        node.heartbeatIfDue();
        node.takeSyncRequest();
        node.syncNow();
        if (step % everySyncs == 0) {
          // a key this node has not seen: its decision asks the store (a claim call, which carries a
          // beat asked for)
          assertThat(node.tryAcquire("k" + key++)).isTrue();
        }
        if (beatsAtConfirmation < 0 && step > 25) {
          beatsAtConfirmation = beats.get();
        }
      }
      assertThat(node.registeredNodes()).as("the node counts both").isEqualTo(2);
      registry.set(memory.heartbeat("other", System.currentTimeMillis(), Duration.ofMinutes(5)).toCompletableFuture().join());
      return beats.get() - beatsAtConfirmation;
    }
  }

  @Test
  void aBeatWaitsHalfAnIntervalForACallToCarryIt() {
    AtomicInteger registered = new AtomicInteger();
    // a decision every 300 ms: a beat asked at a sync finds a call within 300 ms, inside half an
    // interval (500 ms); waiting one sync interval (100 ms) it found one about a third of the time
    int own = ownBeats(3, registered);
    assertThat(own).as("heartbeat calls of their own over 17.5 s").isLessThanOrEqualTo(1);
    assertThat(registered.get()).as("the carried beats keep the node in the registry").isEqualTo(2);
  }

  @Test
  void aBeatNoCallCarriesIsACallOfItsOwnWithinTheTimeToLive() {
    AtomicInteger registered = new AtomicInteger();
    // a decision every 2 s: a beat asked in the second after a decision finds no call within half an
    // interval and goes on its own (a beat is not asked of a node quiet since its last one), and the
    // registry keeps the node (a beat's time to live is three intervals)
    int own = ownBeats(20, registered);
    assertThat(own).as("heartbeat calls of their own over 17.5 s").isBetween(6, 10);
    assertThat(registered.get()).as("the registry still counts the node").isEqualTo(2);
  }

  /**
   * An exact-mode limiter makes no call a beat could ride on (its scripts carry none): it beats when
   * its interval is up, not half an interval later. Waiting for a ride, a regional quota's exact-mode
   * nodes beat 200 ms apart and their coordinator (rounds every 250 ms) took their region for silent in
   * about half of its rounds.
   */
  @Test
  void anExactModeLimiterBeatsWhenItsIntervalIsUp() {
    java.util.List<Long> beatTimes = new java.util.ArrayList<>();
    ManualTicker ticker = new ManualTicker(1_764_547_200_000_000_000L);
    MemoryStore memory = new MemoryStore();
    class Recording extends ForwardingStore implements io.sluice.sync.spi.ExactStore {
      Recording() {
        super(memory);
      }

      @Override
      public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
        beatTimes.add(ticker.read());
        return super.heartbeat(nodeId, nowMillis, ttl);
      }

      @Override
      public CompletionStage<io.sluice.sync.spi.ExactResult> acquire(Limit limit, String key, long cost,
          long nowMicros) {
        return memory.acquire(limit, key, cost, nowMicros);
      }

      @Override
      public CompletionStage<Void> giveBack(Limit limit, String key, long cost, long nowMicros, long window) {
        return memory.giveBack(limit, key, cost, nowMicros, window);
      }
    }
    Recording store = new Recording();
    Limit bucket = Limit.tokenBucket("api").capacity(1_000).refill(1_000, Duration.ofSeconds(1)).build();
    try (SyncedLimiter node = SyncedLimiter.builder(bucket, store).nodeId("n").ticker(ticker).autoSync(false)
        .syncInterval(SYNC).heartbeatInterval(Duration.ofSeconds(1)).build()) {
      for (int step = 1; step <= 50; step++) {
        ticker.advance(SYNC);
        node.heartbeatIfDue();
        node.syncNow();
        assertThat(node.tryAcquire("k")).isTrue(); // (one exact script per decision: the node is working)
      }
    }
    assertThat(beatTimes).hasSizeGreaterThanOrEqualTo(4);
    // (the second beat comes a few sync intervals after the first, where nodes started together have all
    // beaten: NodeBeat#beatDueNanos)
    assertThat(beatTimes.get(1) - beatTimes.get(0)).as("beat 1").isEqualTo(NodeBeat.SECOND_BEAT_SYNCS * SYNC.toNanos());
    for (int i = 2; i < beatTimes.size(); i++) {
      assertThat(beatTimes.get(i) - beatTimes.get(i - 1)).as("beat " + i).isEqualTo(Duration.ofSeconds(1).toNanos());
    }
  }
}
