package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Algorithm;
import io.sluice.node.Limit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Several nodes (threads, each with its own store and connection) hammer one key with exact acquires
 * at a frozen time: the store never admits more than the capacity, and every admission sees the
 * state left by the one before it (the permits left count down through every value once).
 */
class ExactConcurrencyIT {
  private static final int NODES = 4;
  private static final int CAPACITY = 200;
  private static final int REQUESTS_PER_NODE = 150; // 3x the capacity in all
  private static final int IN_FLIGHT = 8; // requests each node keeps outstanding, to interleave more
  private static final long NOW_MICROS = 1_767_225_600_123_456L;

  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();
  private static final List<RedisCounterStore> stores = new ArrayList<>();
  private static ExecutorService pool;

  @BeforeAll
  static void start() {
    for (int n = 0; n < NODES; n++) {
      stores.add(redis.newStore());
    }
    pool = Executors.newFixedThreadPool(NODES);
  }

  @AfterAll
  static void stop() {
    if (pool != null) {
      pool.shutdownNow();
    }
    stores.forEach(RedisCounterStore::close);
  }

  private static Limit limit(Algorithm a) {
    String name = "hammer-" + a.name().toLowerCase();
    boolean bucket = a == Algorithm.TOKEN_BUCKET || a == Algorithm.LEAKY_BUCKET || a == Algorithm.LEAKY_BUCKET_SHAPER;
    return bucket
        ? Limit.builder(name, a).capacity(CAPACITY).refill(1, Duration.ofMinutes(1)).build()
        : Limit.builder(name, a).limit(CAPACITY).window(Duration.ofMinutes(1)).build();
  }

  /** Runs every node's requests at once; returns each node's answers with their costs. */
  private static List<long[]> hammer(Limit limit, String key, long seed, int maxCost) throws Exception {
    CountDownLatch go = new CountDownLatch(1);
    List<Future<List<long[]>>> nodes = new ArrayList<>();
    for (int n = 0; n < NODES; n++) {
      RedisCounterStore store = stores.get(n);
      SplittableRandom random = new SplittableRandom(seed + n);
      nodes.add(pool.submit(() -> {
        go.await();
        List<long[]> answers = new ArrayList<>();
        List<CompletableFuture<long[]>> window = new ArrayList<>();
        for (int i = 0; i < REQUESTS_PER_NODE; i++) {
          long cost = random.nextLong(1, maxCost + 1);
          window.add(store.acquire(limit, key, cost, NOW_MICROS).toCompletableFuture()
              .thenApply(r -> new long[] {r.allowed() ? 1 : 0, cost, r.remaining(), r.delayMicros()}));
          if (window.size() == IN_FLIGHT) {
            for (CompletableFuture<long[]> f : window) {
              answers.add(f.get(10, TimeUnit.SECONDS));
            }
            window.clear();
          }
        }
        for (CompletableFuture<long[]> f : window) {
          answers.add(f.get(10, TimeUnit.SECONDS));
        }
        return answers;
      }));
    }
    go.countDown();
    List<long[]> all = new ArrayList<>();
    for (Future<List<long[]>> f : nodes) {
      all.addAll(f.get(60, TimeUnit.SECONDS));
    }
    return all;
  }

  @Test
  void singlePermitsAreAdmittedExactlyUpToTheCapacity() throws Exception {
    for (Algorithm a : Algorithm.values()) {
      Limit limit = limit(a);
      List<long[]> answers = hammer(limit, "one-by-one", 7, 1);
      List<long[]> admitted = answers.stream().filter(r -> r[0] == 1).collect(Collectors.toList());
      assertThat(admitted).as(a.toString()).hasSize(CAPACITY);
      // linearizable: each admission saw the one before it, so "remaining" took every value once
      TreeSet<Long> remaining = admitted.stream().map(r -> r[2]).collect(Collectors.toCollection(TreeSet::new));
      assertThat(remaining).as(a.toString()).containsExactlyElementsOf(
          LongStream.range(0, CAPACITY).boxed().collect(Collectors.toList()));
      assertThat(answers).as(a.toString()).filteredOn(r -> r[0] == 0).allSatisfy(r -> assertThat(r[2]).isZero());
      if (a == Algorithm.LEAKY_BUCKET_SHAPER) {
        // one minute per permit: the k-th admitted waits k minutes
        TreeSet<Long> delays = admitted.stream().map(r -> r[3]).collect(Collectors.toCollection(TreeSet::new));
        assertThat(delays).as(a.toString()).containsExactlyElementsOf(
            LongStream.range(0, CAPACITY).map(k -> k * 60_000_000L).boxed().collect(Collectors.toList()));
      }
    }
  }

  @Test
  void mixedCostsNeverOverAdmit() throws Exception {
    int maxCost = 5;
    for (Algorithm a : Algorithm.values()) {
      Limit limit = limit(a);
      List<long[]> answers = hammer(limit, "mixed", 11, maxCost);
      long admitted = answers.stream().filter(r -> r[0] == 1).mapToLong(r -> r[1]).sum();
      assertThat(admitted).as(a.toString()).isLessThanOrEqualTo(CAPACITY);
      // demand is 3x the capacity: the budget is used up but for less than the largest cost
      assertThat(admitted).as(a.toString()).isGreaterThan(CAPACITY - maxCost);
    }
  }
}
