package io.sluice.sync.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Limit;
import io.sluice.sync.sim.MemoryStore;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link CounterStore} keeps, run by each store's integration test against a real
 * server or cluster, and by the test kit on {@link MemoryStore}; a store of your own extends it:
 * deltas add up, a batch is applied exactly once per node and
 * sequence, windows roll, GCRA backlogs grow and drain, any key is its own key, and the registry counts
 * live nodes; and what {@link WindowClaimContract} holds of claims. Subclasses hand out stores and start
 * each test from an empty store.
 */
public abstract class CounterStoreContract extends WindowClaimContract {
  /**
   * A store that tells time ({@link CounterStore#tellsTime}) reads one clock for every node, in
   * microseconds since the epoch: a store on this machine reads the machine's clock, within a few
   * milliseconds, through every node's connection (nodes set their clocks to it: a store that says it
   * tells time and reads milliseconds, or another epoch, would move them). A store that tells none is
   * left alone.
   */
  @Test
  void aStoreThatTellsTimeReadsTheMachinesClockInMicroseconds() throws Exception {
    try (CounterStore first = store(0); CounterStore second = store(1)) {
      Assumptions.assumeTrue(first.tellsTime(), "the store tells no time");
      assertThat(second.tellsTime()).isTrue();
      boolean finerThanMillis = false;
      for (int i = 0; i < 8; i++) {
        CounterStore s = i % 2 == 0 ? first : second;
        long before = System.currentTimeMillis() * 1_000;
        long micros = s.timeMicros().toCompletableFuture().get(30, TimeUnit.SECONDS);
        long after = System.currentTimeMillis() * 1_000 + 1_000;
        assertThat(micros).as("reading %d", i).isBetween(before - 5_000, after + 5_000);
        finerThanMillis |= micros % 1_000 != 0;
      }
      assertThat(finerThanMillis).as("microseconds, not whole milliseconds").isTrue();
    }
  }

  @Test
  void windowDeltasAddUpAndReturnBothWindows() {
    try (CounterStore store = store(0)) {
      FlushResult first = flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(
          new Delta(window, "alice", 100, 7), new Delta(window, "bob", 100, 2))));
      assertThat(first.applied()).isTrue();
      assertThat(first.size()).isEqualTo(2);
      assertThat(first.current(0)).isEqualTo(7);
      assertThat(first.current(1)).isEqualTo(2);
      FlushResult second = flush(store, new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(window, "alice", 101, 3))));
      assertThat(second.current(0)).isEqualTo(3);
      assertThat(second.previous(0)).isEqualTo(7);
    }
  }

  @Test
  void aKeysPreviousAndCurrentWindowsInOneBatchBothCount() {
    try (CounterStore store = store(0)) {
      flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(window, "alice", 100, 5))));
      Batch batch = new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(window, "alice", 100, 2),
          new Delta(window, "alice", 101, 4)));
      FlushResult r = flush(store, batch);
      assertThat(r.applied()).isTrue();
      assertThat(r.current(0)).isEqualTo(7);
      assertThat(r.current(1)).isEqualTo(4);
      assertThat(r.previous(1)).isEqualTo(7);
      FlushResult replay = flush(store, batch);
      assertThat(replay.applied()).isFalse();
      assertThat(replay.current(1)).isEqualTo(4);
      assertThat(replay.previous(1)).isEqualTo(7);
    }
  }

  @Test
  void aRetriedBatchIsNotAppliedTwice() {
    try (CounterStore store = store(0)) {
      Batch batch = new Batch("n1", 0, 5, NOW_MICROS, List.of(new Delta(window, "alice", 100, 7),
          new Delta(bucket, "alice", 0, 4)));
      assertThat(flush(store, batch).applied()).isTrue();
      FlushResult replay = flush(store, batch);
      assertThat(replay.applied()).isFalse();
      assertThat(replay.current(0)).isEqualTo(7);
      assertThat(replay.current(1)).isEqualTo(400_000);
      // an older sequence is a replay too
      FlushResult older = flush(store, new Batch("n1", 0, 4, NOW_MICROS, List.of(new Delta(window, "alice", 100, 50))));
      assertThat(older.applied()).isFalse();
      assertThat(older.current(0)).isEqualTo(7);
      // another node's sequence is its own
      assertThat(flush(store, new Batch("n2", 0, 1, NOW_MICROS, List.of(new Delta(window, "alice", 100, 1)))).current(0))
          .isEqualTo(8);
    }
  }

  @Test
  void aBatchRetriedThroughAnotherConnectionIsNotAppliedTwice() {
    try (CounterStore first = store(0); CounterStore second = store(1)) {
      Batch batch = new Batch("n1", 0, 9, NOW_MICROS, List.of(new Delta(window, "carol", 100, 3)));
      assertThat(flush(first, batch).applied()).isTrue();
      FlushResult replay = flush(second, batch);
      assertThat(replay.applied()).isFalse();
      assertThat(replay.current(0)).isEqualTo(3);
    }
  }

  @Test
  void oldWindowsAreDroppedAndCountersExpire() {
    Counter fixed = Counter.of(Limit.fixedWindow("api").limit(1_000).window(Duration.ofMinutes(1)).build());
    try (CounterStore store = store(0)) {
      for (long w = 100; w <= 104; w++) {
        FlushResult r = flush(store, new Batch("n1", 0, w - 99, NOW_MICROS, List.of(new Delta(fixed, "alice", w, 1))));
        assertThat(r.current(0)).isEqualTo(1);
      }
      // windows before the one that is now previous are dropped when a newer one is counted (the
      // Redis store does it at every fourth window a key is written in: an older window is never read
      // by a newer one)
      FlushResult read = flush(store, new Batch("n1", 0, 10, NOW_MICROS, List.of(new Delta(fixed, "alice", 100, 0))));
      assertThat(read.current(0)).as("window 100, dropped").isZero();
      // a late delta for an old window does not drop the newer ones
      flush(store, new Batch("n1", 0, 11, NOW_MICROS, List.of(new Delta(fixed, "alice", 99, 1))));
      read = flush(store, new Batch("n1", 0, 12, NOW_MICROS, List.of(new Delta(fixed, "alice", 104, 0))));
      assertThat(read.current(0)).isEqualTo(1);
      read = flush(store, new Batch("n1", 0, 13, NOW_MICROS, List.of(new Delta(fixed, "alice", 103, 0))));
      assertThat(read.current(0)).isEqualTo(1);
      // two windows of a minute and a second: 121 s
      assertThat(counterTtlMillis("api", "alice")).isBetween(1L, 121_000L);
    }
  }

  /**
   * A fixed window's permits sent once the window is over ({@link Delta#afterItsWindow()}) are
   * counted and nothing else: the node's claim there is left as it was, the answer's claim is 0, a
   * replay counts nothing, and a key gone meanwhile is written again with a TTL.
   */
  @Test
  void aFixedWindowsPermitsSentAfterItAreCountedAndNothingElse() {
    Counter fixed = Counter.of(Limit.fixedWindow("api").limit(1_000).window(Duration.ofMinutes(1)).build());
    try (CounterStore store = store(0)) {
      FlushResult claimed = flush(store, new Batch("n1", 0, 1, NOW_MICROS,
          List.of(new Delta(fixed, "alice", 100, 2).claiming(50, 1))));
      assertThat(claimed.claim(0)).isPositive();
      Batch late = new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(fixed, "alice", 100, 5).afterItsWindow(),
          new Delta(fixed, "bob", 90, 3).afterItsWindow()));
      FlushResult r = flush(store, late);
      assertThat(r.applied()).isTrue();
      assertThat(r.current(0)).isEqualTo(7);
      assertThat(r.previous(0)).isZero();
      assertThat(r.claim(0)).as("a claim answer of 0, not 'no claims'").isZero();
      assertThat(r.current(1)).as("a key not there before").isEqualTo(3);
      assertThat(counterTtlMillis("api", "bob")).as("written with a TTL").isBetween(1L, fixed.windowTtlMillis());
      assertThat(flush(store, late).current(0)).as("a replay counts nothing").isEqualTo(7);
      // the node's claim on window 100 is as it was: a flush that asks for nothing more reads it
      FlushResult again = flush(store, new Batch("n1", 0, 3, NOW_MICROS,
          List.of(new Delta(fixed, "alice", 100, 0).claiming(claimed.claim(0), 1))));
      assertThat(again.current(0)).isEqualTo(7);
      assertThat(again.claim(0)).isEqualTo(claimed.claim(0));
    }
  }

  /**
   * A sliding window keeps one window more: the claimants of the previous window hold parts of what
   * faded there, measured on the count before it (see flush.lua).
   */
  @Test
  void aSlidingWindowKeepsTheWindowBeforeThePrevious() {
    try (CounterStore store = store(0)) {
      for (long w = 100; w <= 104; w++) {
        flush(store, new Batch("n1", 0, w, NOW_MICROS, List.of(new Delta(window, "bob", w, 1))));
      }
      FlushResult read = flush(store, new Batch("n1", 0, 200, NOW_MICROS, List.of(new Delta(window, "bob", 103, 0))));
      assertThat(read.current(0)).isEqualTo(1);
      assertThat(read.previous(0)).as("window 102, kept").isEqualTo(1);
      read = flush(store, new Batch("n1", 0, 201, NOW_MICROS, List.of(new Delta(window, "bob", 102, 0))));
      assertThat(read.previous(0)).as("window 101, dropped").isZero();
    }
  }

  @Test
  void gcraBacklogGrowsWithPermitsAndDrainsWithTime() {
    // 10 per second: scale 1, interval 100,000 us per permit
    assertThat(bucket.scale()).isEqualTo(1);
    assertThat(bucket.interval()).isEqualTo(100_000);
    try (CounterStore store = store(0)) {
      FlushResult r = flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(bucket, "k", 0, 30))));
      assertThat(r.current(0)).isEqualTo(3_000_000);
      assertThat(r.previous(0)).isZero();
      // 1.5 s later: 1.5 s of backlog drained, 5 more permits added
      r = flush(store, new Batch("n2", 0, 1, NOW_MICROS + 1_500_000, List.of(new Delta(bucket, "k", 0, 5))));
      assertThat(r.current(0)).isEqualTo(3_000_000 - 1_500_000 + 500_000);
      // a node whose clock is behind counts at the newest time seen, not earlier
      r = flush(store, new Batch("n3", 0, 1, NOW_MICROS, List.of(new Delta(bucket, "k", 0, 1))));
      assertThat(r.current(0)).isEqualTo(2_100_000);
      // until the backlog has drained (2.1 s), plus a second
      assertThat(counterTtlMillis("tb#gcra", "k")).isBetween(2_000L, 4_200L); // (a bucket's store name)
      // long after, the backlog is gone
      r = flush(store, new Batch("n3", 0, 2, NOW_MICROS + 60_000_000, List.of(new Delta(bucket, "k", 0, 0))));
      assertThat(r.current(0)).isZero();
    }
  }

  /**
   * Several nodes, each on its own store, flush shared keys from many threads and retry some batches
   * as a reconnect replay would: the store's count is exactly the sum of distinct batches.
   */
  @Test
  void concurrentNodesWithRetriesCountEveryHitExactlyOnce() throws Exception {
    int nodes = 4;
    int batchesPerNode = 300;
    ExecutorService pool = Executors.newFixedThreadPool(nodes);
    List<Future<Long>> sent = new ArrayList<>();
    List<CounterStore> stores = new ArrayList<>();
    try {
      for (int n = 0; n < nodes; n++) {
        CounterStore store = store(n);
        stores.add(store);
        String node = "node-" + n;
        long seed = n;
        sent.add(pool.submit(() -> {
          SplittableRandom random = new SplittableRandom(seed);
          long total = 0;
          for (long seq = 1; seq <= batchesPerNode; seq++) {
            List<Delta> deltas = new ArrayList<>();
            for (String key : new String[] {"hot", "k" + random.nextInt(5)}) {
              long amount = random.nextLong(1, 20);
              deltas.add(new Delta(window, key, 100, amount));
              total += amount;
            }
            Batch batch = new Batch(node, 0, seq, NOW_MICROS, deltas);
            flush(store, batch);
            if (random.nextInt(4) == 0) {
              assertThat(flush(store, batch).applied()).isFalse(); // a replay
            }
          }
          return total;
        }));
      }
      long expected = 0;
      for (Future<Long> f : sent) {
        expected += f.get(60, TimeUnit.SECONDS);
      }
      long stored = readWindow(stores.get(0), window, "hot", 100);
      for (int k = 0; k < 5; k++) {
        stored += readWindow(stores.get(k % nodes), window, "k" + k, 100);
      }
      assertThat(stored).isEqualTo(expected);
    } finally {
      pool.shutdownNow();
      stores.forEach(CounterStore::close);
    }
  }

  @Test
  void hugeBinaryAndUnicodeKeysAreDistinct() {
    String huge = "x".repeat(100_000);
    String loneSurrogate = "a\uD800b";
    String replaced = "a?b"; // what a lossy UTF-8 encoding would turn the lone surrogate into
    String unicode = "用户-🚦-ключ";
    String braces = "a}b{c";
    String nul = "a\u0000b";
    String otherLone = "a\uDC00b"; // what the UTF-16 charset wrote as the same U+FFFD as the first one
    try (CounterStore store = store(0)) {
      List<Delta> deltas = List.of(new Delta(window, huge, 100, 1), new Delta(window, loneSurrogate, 100, 2),
          new Delta(window, replaced, 100, 3), new Delta(window, unicode, 100, 4), new Delta(window, braces, 100, 5),
          new Delta(window, nul, 100, 6), new Delta(window, otherLone, 100, 7));
      FlushResult r = flush(store, new Batch("n1", 0, 1, NOW_MICROS, deltas));
      for (int i = 0; i < deltas.size(); i++) {
        assertThat(r.current(i)).isEqualTo(i + 1);
      }
      // and the same key again, from elsewhere, is the same key
      assertThat(readWindow(store, window, loneSurrogate, 100)).isEqualTo(2);
    }
  }

  /**
   * Limit {@code a} with key {@code b:c} and limit {@code a:b} with key {@code c} (once both the
   * counter {@code sluice:{a:b:c}}) count apart, in one batch and in two, for window and GCRA counters.
   */
  @Test
  void limitsAndKeysThatJoinAlikeKeepTheirOwnCounts() {
    Counter a = Counter.of(Limit.slidingWindowCounter("a").limit(1_000).window(Duration.ofMinutes(1)).build());
    Counter ab = Counter.of(Limit.slidingWindowCounter("a:b").limit(1_000).window(Duration.ofMinutes(1)).build());
    Counter bucketA = Counter.of(Limit.tokenBucket("a").capacity(100).refill(10, Duration.ofSeconds(1)).build());
    Counter bucketAb = Counter.of(Limit.tokenBucket("a:b").capacity(100).refill(10, Duration.ofSeconds(1)).build());
    try (CounterStore store = store(0); CounterStore other = store(1)) {
      FlushResult both = flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(a, "b:c", 100, 3),
          new Delta(ab, "c", 100, 5), new Delta(bucketA, "b:c", 0, 2), new Delta(bucketAb, "c", 0, 4))));
      assertThat(both.current(0)).isEqualTo(3);
      assertThat(both.current(1)).isEqualTo(5);
      assertThat(both.current(2)).isEqualTo(200_000);
      assertThat(both.current(3)).isEqualTo(400_000);
      // two flushes from two nodes, one limit each
      assertThat(flush(store, new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(a, "b:c", 100, 10)))).current(0))
          .isEqualTo(13);
      assertThat(flush(other, new Batch("n2", 0, 1, NOW_MICROS, List.of(new Delta(ab, "c", 100, 20)))).current(0))
          .isEqualTo(25);
      assertThat(readWindow(other, a, "b:c", 100)).isEqualTo(13);
      assertThat(readWindow(store, ab, "c", 100)).isEqualTo(25);
      // and the limit a:b has no key "b:c" of its own yet, nor a the key "c"
      assertThat(readWindow(store, ab, "b:c", 100)).isZero();
      assertThat(readWindow(store, a, "c", 100)).isZero();
    }
  }

  @Test
  void aBatchAboveMaxBatchSizeIsRejected() {
    try (CounterStore store = store(0)) {
      List<Delta> deltas = new ArrayList<>();
      for (int i = 0; i <= store.maxBatchSize(); i++) {
        deltas.add(new Delta(window, "k" + i, 100, 1));
      }
      assertThatThrownBy(() -> store.flush(new Batch("n1", 0, 1, NOW_MICROS, deltas))).hasMessageStartingWith("batch:");
      // a full batch is fine
      FlushResult r = flush(store, new Batch("n1", 0, 2, NOW_MICROS, deltas.subList(0, store.maxBatchSize())));
      assertThat(r.size()).isEqualTo(store.maxBatchSize());
      assertThat(r.current(store.maxBatchSize() - 1)).isEqualTo(1);
    }
  }

  @Test
  void theRegistryCountsNodesAliveAndForgetsSilentOnes() throws Exception {
    try (CounterStore store = store(0); CounterStore other = store(1)) {
      long now = NOW_MICROS / 1000;
      assertThat(store.heartbeat("a", now, Duration.ofSeconds(3)).toCompletableFuture().get()).isEqualTo(1);
      assertThat(other.heartbeat("b", now + 1_000, Duration.ofSeconds(3)).toCompletableFuture().get()).isEqualTo(2);
      assertThat(store.heartbeat("a", now + 2_000, Duration.ofSeconds(3)).toCompletableFuture().get()).isEqualTo(2);
      // b said nothing for more than its 3 s
      assertThat(store.heartbeat("a", now + 4_500, Duration.ofSeconds(3)).toCompletableFuture().get()).isEqualTo(1);
      assertThatThrownBy(() -> store.heartbeat("a", now, Duration.ZERO)).hasMessageStartingWith("ttl:");
    }
  }

  /**
   * A flush may carry its node's heartbeat where the store takes one ({@link CounterStore#beatsInFlush}):
   * recorded as a heartbeat call would record it, whether the batch is applied or is a replay, and
   * answered with the nodes alive; a store that does not take them ignores the beat.
   */
  @Test
  void aFlushMayCarryItsNodesHeartbeat() throws Exception {
    try (CounterStore store = store(0); CounterStore other = store(1)) {
      long now = NOW_MICROS / 1000;
      assertThat(other.heartbeat("b", now, Duration.ofSeconds(3)).toCompletableFuture().get()).isEqualTo(1);
      Batch batch = new Batch("a/api", store.group(window, "k"), 1, NOW_MICROS, List.of(new Delta(window, "k", 100, 2)))
          .beating("a", now + 100, Duration.ofSeconds(3));
      FlushResult first = flush(store, batch);
      FlushResult replay = flush(store, batch);
      assertThat(first.current(0)).isEqualTo(2);
      assertThat(replay.applied()).isFalse();
      assertThat(replay.current(0)).as("a replay counts nothing").isEqualTo(2);
      if (store.beatsInFlush(batch.group())) {
        assertThat(first.alive()).as("b and a").isEqualTo(2);
        assertThat(replay.alive()).isEqualTo(2);
        // b's deadline passed, a's (carried by the flush) has not
        assertThat(other.heartbeat("c", now + 3_050, Duration.ofSeconds(3)).toCompletableFuture().get()).isEqualTo(2);
      } else {
        assertThat(first.alive()).as("the beat ignored").isZero();
        assertThat(other.heartbeat("c", now + 100, Duration.ofSeconds(3)).toCompletableFuture().get()).isEqualTo(2);
      }
      assertThatThrownBy(() -> batch.beating("a", now, Duration.ZERO)).hasMessageStartingWith("ttl:");
    }
  }

  /** A node that leaves (its limiter closed) stops counting at once, before its deadline. */
  @Test
  void aNodeThatLeavesNoLongerCounts() throws Exception {
    try (CounterStore store = store(0); CounterStore other = store(1)) {
      long now = NOW_MICROS / 1000;
      assertThat(store.heartbeat("a", now, Duration.ofSeconds(3)).toCompletableFuture().get()).isEqualTo(1);
      assertThat(other.heartbeat("b", now, Duration.ofSeconds(3)).toCompletableFuture().get()).isEqualTo(2);
      other.leave("b", now + 100).toCompletableFuture().get();
      assertThat(store.heartbeat("a", now + 200, Duration.ofSeconds(3)).toCompletableFuture().get()).isEqualTo(1);
      assertThatThrownBy(() -> store.leave("", now)).hasMessageStartingWith("nodeId:");
    }
  }
}
