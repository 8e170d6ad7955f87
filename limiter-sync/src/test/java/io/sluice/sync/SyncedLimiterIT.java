package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Several nodes, each with its own connection and flusher thread, hammer shared keys of one window
 * against a real redis-server: the store's count of every key equals the permits the nodes admitted
 * (exactly once), every key's budget is used, and over-admission stays bounded.
 */
class SyncedLimiterIT {
  private static final int NODES = 4;
  private static final int THREADS_PER_NODE = 2;
  private static final int ATTEMPTS_PER_THREAD = 40_000;
  private static RedisServer redis;

  @BeforeAll
  static void startRedis() {
    redis = RedisServer.start();
  }

  @AfterAll
  static void stopRedis() {
    redis.close();
  }

  @Test
  void storeCountEqualsAdmittedAndOverAdmissionStaysSmall() throws Exception {
    Limit limit = Limit.fixedWindow("it").limit(2_000).window(Duration.ofMinutes(1)).build();
    ManualTicker ticker = new ManualTicker(); // frozen: every decision falls in one window
    long window = Math.floorDiv(ticker.read(), limit.periodNanos());
    Map<String, LongAdder> admitted = new ConcurrentHashMap<>();
    List<SyncedLimiter> nodes = new ArrayList<>();
    List<RedisCounterStore> stores = new ArrayList<>();
    for (int n = 0; n < NODES; n++) {
      RedisCounterStore store = RedisCounterStore.connect(RedisStoreConfig.builder(redis.uri()).build());
      stores.add(store);
      nodes.add(SyncedLimiter.builder(limit, store).nodeId("it-" + n).ticker(ticker).activeNodes(() -> NODES)
          .syncInterval(Duration.ofMillis(20)).build());
    }
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < NODES * THREADS_PER_NODE; t++) {
      SyncedLimiter node = nodes.get(t % NODES);
      SplittableRandom random = new SplittableRandom(t);
      Thread thread = new Thread(() -> {
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int i = 0; i < ATTEMPTS_PER_THREAD; i++) {
          // a hot key, and fifty colder ones drawn with a skew
          String key = random.nextInt(3) == 0 ? "hot" : "k" + (int) Math.sqrt(random.nextInt(2_500));
          if (node.tryAcquire(key)) {
            admitted.computeIfAbsent(key, k -> new LongAdder()).increment();
          }
        }
      });
      thread.start();
      threads.add(thread);
    }
    start.countDown();
    for (Thread thread : threads) {
      thread.join();
    }
    // The burst is over in milliseconds, faster than syncs come back, so part of the hot key's
    // budget may be unspent: after a sync, later requests must be able to use all of it.
    for (int round = 0; round < 3; round++) {
      for (SyncedLimiter node : nodes) {
        node.syncNow();
        while (node.tryAcquire("hot")) {
          admitted.get("hot").increment();
        }
      }
    }
    nodes.forEach(SyncedLimiter::close);
    stores.forEach(RedisCounterStore::close);

    long decisions = (long) NODES * THREADS_PER_NODE * ATTEMPTS_PER_THREAD;
    long storeCalls = nodes.stream().mapToLong(SyncedLimiter::storeCalls).sum();
    RedisClient client = RedisClient.create(redis.uri());
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      long worst = 0;
      StringBuilder mismatches = new StringBuilder();
      for (Map.Entry<String, LongAdder> e : admitted.entrySet()) {
        String stored = c.sync().hget("sluice:{it:" + e.getKey() + "}", Long.toString(window));
        if (stored == null || Long.parseLong(stored) != e.getValue().sum()) {
          mismatches.append(e.getKey()).append(": stored ").append(stored).append(", admitted ")
              .append(e.getValue().sum()).append("; ");
        }
        worst = Math.max(worst, e.getValue().sum() - limit.capacity());
      }
      System.out.printf("SyncedLimiterIT: %d decisions, %d store calls (%.1f per 1,000), hot key admitted %d,"
          + " worst over-admission %d of %d (%.2f%%)%n", decisions, storeCalls, storeCalls * 1000.0 / decisions,
          admitted.get("hot").sum(), worst, limit.capacity(), worst * 100.0 / limit.capacity());
      assertThat(mismatches.toString()).as("keys whose store count differs from what the nodes admitted").isEmpty();
      // no budget is lost: pending permits all came back as global counts
      assertThat(admitted.get("hot").sum()).isGreaterThanOrEqualTo(limit.capacity() - NODES);
      // All threads hit every key far above its limit at one frozen instant: the synchronized burst,
      // the approximate mode's worst case (a node may spend an allowance granted before the others
      // spent theirs). Measured here 0-3%; 10% catches a broken allowance (that would be ~300%).
      assertThat(worst).as("worst over-admission of a key").isLessThanOrEqualTo(limit.capacity() / 10);
    } finally {
      client.shutdown();
    }
  }

  /** Batch size 1: every decision is one script call, so the nodes together never pass the limit. */
  @Test
  void exactModeNeverOverAdmits() throws Exception {
    Limit limit = Limit.slidingWindowCounter("exact").limit(500).window(Duration.ofMinutes(1)).build();
    ManualTicker ticker = new ManualTicker();
    LongAdder admitted = new LongAdder();
    List<SyncedLimiter> nodes = new ArrayList<>();
    List<RedisCounterStore> stores = new ArrayList<>();
    for (int n = 0; n < NODES; n++) {
      RedisCounterStore store = RedisCounterStore.connect(RedisStoreConfig.builder(redis.uri()).build());
      stores.add(store);
      nodes.add(SyncedLimiter.builder(limit, store).nodeId("exact-" + n).ticker(ticker).batchSize(1).build());
    }
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < NODES * THREADS_PER_NODE; t++) {
      SyncedLimiter node = nodes.get(t % NODES);
      Thread thread = new Thread(() -> {
        for (int i = 0; i < 300; i++) {
          if (node.tryAcquire("hot")) {
            admitted.increment();
          }
        }
      });
      thread.start();
      threads.add(thread);
    }
    for (Thread thread : threads) {
      thread.join();
    }
    long storeCalls = nodes.stream().mapToLong(SyncedLimiter::storeCalls).sum();
    nodes.forEach(SyncedLimiter::close);
    stores.forEach(RedisCounterStore::close);
    assertThat(admitted.sum()).isEqualTo(limit.capacity());
    assertThat(storeCalls).isGreaterThanOrEqualTo((long) NODES * THREADS_PER_NODE * 300);
    RedisClient client = RedisClient.create(redis.uri());
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      long window = Math.floorDiv(ticker.read(), limit.periodNanos());
      assertThat(c.sync().hget("sluice:{exact:hot}", Long.toString(window))).isEqualTo(Long.toString(limit.capacity()));
    } finally {
      client.shutdown();
    }
  }
}
