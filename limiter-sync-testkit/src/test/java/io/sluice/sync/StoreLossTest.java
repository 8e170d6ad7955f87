package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.spi.SequenceWitness;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A store that loses its data (Redis restarted without persistence, a flush of every key, a Hazelcast
 * cluster started again): the nodes notice it in the answer of their next numbered flush (the store
 * no longer knows their sequence) and send again what they admitted in the windows that still weigh,
 * so the count is whole again instead of starting over. On the in-memory double here; the same against
 * a real redis-server and a real Hazelcast cluster in {@code StoreLossIT}.
 */
class StoreLossTest {
  private static final Duration HOUR = Duration.ofHours(1);

  /** On one group (standalone Redis) and on 16 (a cluster's slots, each found lost by its own flush). */
  @ParameterizedTest(name = "{0} group(s)")
  @ValueSource(ints = {1, 16})
  void everyAdmittedPermitIsCountedOnceAfterTheStoreLosesItsData(int groups) {
    Limit limit = Limit.fixedWindow("ledger").limit(1_000_000_000L).window(HOUR).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos() + Duration.ofMinutes(1).toNanos());
    MemoryStore store = new MemoryStore(groups);
    List<SyncedLimiter> nodes = nodes(limit, store, ticker, 3);
    Map<String, Long> admitted = new HashMap<>();
    SplittableRandom random = new SplittableRandom(11);
    drive(nodes, ticker, random, admitted, 2_000, 300);
    nodes.forEach(SyncedLimiter::flushAll); // every take is behind a numbered flush that reached the store
    store.forgetEverything();
    drive(nodes, ticker, random, admitted, 2_000, 300);
    settleAll(nodes, ticker);

    long window = Math.floorDiv(ticker.read(), HOUR.toNanos());
    long total = 0;
    long stored = 0;
    for (Map.Entry<String, Long> e : admitted.entrySet()) {
      long inStore = store.count(limit.name(), e.getKey(), window);
      if (groups == 1) {
        assertThat(inStore).as("key %s", e.getKey()).isEqualTo(e.getValue());
      } else {
        // takes are known to have reached the old store only behind a numbered flush to their own group:
        // a cold key's group may have seen none since its takes (they are not sent again: no doubles)
        assertThat(inStore).as("key %s: never counted twice", e.getKey()).isLessThanOrEqualTo(e.getValue());
      }
      total += e.getValue();
      stored += inStore;
    }
    System.out.printf("store loss, %d group(s): %d of %d admitted permits counted%n", groups, stored, total);
    // (16 groups: 80% in this run; the rest are cold keys' takes that no numbered flush to their group
    // followed before the loss, their syncs deferred by claims that last the window)
    assertThat(stored).isGreaterThanOrEqualTo(groups == 1 ? total : total * 3 / 4);
    assertThat(nodes.stream().mapToLong(SyncedLimiter::storeDataLosses).sum()).as("groups each node found lost")
        .isBetween((long) nodes.size(), (long) nodes.size() * groups);
    assertThat(nodes.stream().mapToLong(SyncedLimiter::refilledPermits).sum()).isPositive().isLessThan(total);
    nodes.forEach(SyncedLimiter::close);
  }

  /**
   * The loss comes between a node's takes (cold keys' decisions, which count their permits in the
   * call that asks for a claim) and its next numbered flush: those takes may be in the old store or
   * the new one, and are not sent again. Nothing is counted twice; what is lost is at most those takes.
   */
  @Test
  void takesAfterTheLastNumberedFlushAreNeverCountedTwice() {
    Limit limit = Limit.fixedWindow("ledger").limit(1_000_000_000L).window(HOUR).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos() + Duration.ofMinutes(1).toNanos());
    MemoryStore store = new MemoryStore();
    List<SyncedLimiter> nodes = nodes(limit, store, ticker, 2);
    Map<String, Long> admitted = new HashMap<>();
    SplittableRandom random = new SplittableRandom(5);
    drive(nodes, ticker, random, admitted, 1_000, 2_000);
    Map<String, Long> beforeLoss = new HashMap<>(admitted);
    store.forgetEverything(); // no flush first: the last decisions' takes are in the store that is gone
    drive(nodes, ticker, random, admitted, 1_000, 2_000);
    settleAll(nodes, ticker);

    long window = Math.floorDiv(ticker.read(), HOUR.toNanos());
    long lost = 0;
    for (Map.Entry<String, Long> e : admitted.entrySet()) {
      long stored = store.count(limit.name(), e.getKey(), window);
      assertThat(stored).as("key %s: never counted twice", e.getKey()).isLessThanOrEqualTo(e.getValue());
      lost += e.getValue() - stored;
    }
    long before = beforeLoss.values().stream().mapToLong(Long::longValue).sum();
    assertThat(lost).as("permits lost of %s admitted before the loss", before).isLessThan(before / 10);
    nodes.forEach(SyncedLimiter::close);
  }

  /**
   * The limit holds across the loss: a window of 10 s at twice its limit, the store emptied half way
   * through it. Without the refill the nodes would start the window over (up to 1.5 times the limit).
   */
  @Test
  void theWindowInWhichTheStoreLostItsDataKeepsItsLimit() {
    Limit limit = Limit.fixedWindow("api").limit(1_000).window(Duration.ofSeconds(10)).build();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    MemoryStore store = new MemoryStore();
    List<SyncedLimiter> nodes = nodes(limit, store, ticker, 3);
    long admitted = 0;
    // 2,000 requests over the window (twice the limit), the store emptied after 4 s
    for (int i = 0; i < 2_000; i++) {
      ticker.advance(Duration.ofMillis(5));
      if (i == 800) {
        store.forgetEverything();
      }
      if (nodes.get(i % nodes.size()).tryAcquire("hot")) {
        admitted++;
      }
      if (i % 20 == 19) {
        nodes.forEach(SyncedLimiter::syncNow);
      }
    }
    assertThat(admitted).as("admitted in the window, limit 1,000").isBetween(950L, 1_005L);
    assertThat(nodes.stream().mapToLong(SyncedLimiter::storeDataLosses).sum()).isEqualTo(nodes.size());
    nodes.forEach(SyncedLimiter::close);
  }

  @Test
  void aRecordThatExpiredIsNotALoss() {
    SequenceWitness shortLived = new SequenceWitness(Duration.ofSeconds(1));
    shortLived.recorded("n", 0);
    assertThat(shortLived.forgot("n", 0)).as("a TTL of 1 s: any absence may be an expiry").isFalse();
    SequenceWitness daily = new SequenceWitness(Duration.ofDays(1));
    assertThat(daily.forgot("n", 0)).as("never recorded: a first batch").isFalse();
    daily.recorded("n", 0);
    assertThat(daily.forgot("n", 0)).isTrue();
    assertThat(daily.forgot("n", 1)).as("another group").isFalse();
    // Redis: the answer says which batch created the node's sequence key
    assertThat(daily.recreated("m", 0, 7)).as("a first batch").isFalse();
    assertThat(daily.created("m", 0)).isEqualTo(7);
    assertThat(daily.recreated("m", 0, 7)).as("the same key").isFalse();
    assertThat(daily.recreated("m", 0, 12)).as("created again by batch 12").isTrue();
    assertThat(daily.recreated("m", 0, 12)).isFalse();
    // a loss found by an answer nobody read (the caller had stopped waiting) is told to the retry of
    // that batch, and ends with the first answer of a newer one
    assertThat(daily.lossToTell("m", 0, 12, true)).isTrue();
    assertThat(daily.lossToTell("m", 0, 12, false)).as("the retry of batch 12").isTrue();
    assertThat(daily.lossToTell("m", 0, 13, false)).as("the next batch").isFalse();
    assertThat(daily.lossToTell("m", 0, 12, false)).isFalse();
    assertThat(shortLived.recreated("m", 0, 3)).isFalse();
    assertThat(shortLived.recreated("m", 0, 4)).as("within a second of a 1 s TTL: may have expired").isFalse();
  }

  private static List<SyncedLimiter> nodes(Limit limit, MemoryStore store, ManualTicker ticker, int n) {
    List<SyncedLimiter> nodes = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      nodes.add(SyncedLimiter.builder(limit, store).nodeId("n" + i).ticker(ticker).autoSync(false)
          .activeNodes(() -> n).build());
    }
    return nodes;
  }

  /** Decisions on one hot key and {@code coldKeys} cold ones, spread over the nodes, a sync every 10. */
  private static void drive(List<SyncedLimiter> nodes, ManualTicker ticker, SplittableRandom random,
      Map<String, Long> admitted, int decisions, int coldKeys) {
    for (int i = 0; i < decisions; i++) {
      ticker.advance(Duration.ofMillis(1 + random.nextInt(5)));
      String key = random.nextInt(3) == 0 ? "hot" : "k" + random.nextInt(coldKeys);
      long cost = 1 + random.nextInt(3);
      if (nodes.get(random.nextInt(nodes.size())).tryAcquire(key, cost)) {
        admitted.merge(key, cost, Long::sum);
      }
      if (i % 10 == 9) {
        nodes.get(random.nextInt(nodes.size())).syncNow();
      }
    }
  }

  private static void settleAll(List<SyncedLimiter> nodes, ManualTicker ticker) {
    for (int round = 0; round < 3; round++) {
      ticker.advance(Duration.ofMillis(100));
      nodes.forEach(SyncedLimiter::syncNow);
      nodes.forEach(SyncedLimiter::flushAll);
    }
  }
}
