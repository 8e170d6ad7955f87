package io.sluice.sync.hazelcast;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.hazelcast.cluster.Address;
import com.hazelcast.config.Config;
import com.hazelcast.core.EntryView;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import io.sluice.node.Limit;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.StoreKeys;
import io.sluice.sync.spi.state.CounterEntry;
import io.sluice.sync.spi.state.FlushProcessor;
import io.sluice.sync.testkit.CounterStoreContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Hazelcast store on a real two-member cluster in this JVM (loopback only, a cluster name of its
 * own): the store contract ({@link CounterStoreContract}) with the "nodes" alternating between the two
 * members, then what only Hazelcast has (per-key exactly once, replays after keys expired, a member
 * crash, the embedded default).
 */
class HazelcastCounterStoreIT extends CounterStoreContract {
  private static final HazelcastCounterStore.Settings SETTINGS = HazelcastCounterStore.Settings.builder()
      .clusterName("sluice-store-it-" + UUID.randomUUID()).build();
  private static final List<HazelcastCounterStore> MEMBERS = new ArrayList<>();

  @BeforeAll
  static void startCluster() {
    MEMBERS.add(startMember());
    MEMBERS.add(startMember());
    assertThat(member(0).getCluster().getMembers()).hasSize(2);
  }

  /**
   * An embedded member of the test cluster that notices a crashed member in seconds (Hazelcast waits
   * 60 s without heartbeats by default; the counters of a one-minute window live 121 s).
   */
  static HazelcastCounterStore startMember() {
    Config config = HazelcastCounterStore.memberConfig(SETTINGS);
    config.setProperty("hazelcast.heartbeat.interval.seconds", "1");
    config.setProperty("hazelcast.max.no.heartbeat.seconds", "4");
    return HazelcastCounterStore.embedded(config, SETTINGS);
  }

  @AfterAll
  static void stopCluster() {
    MEMBERS.forEach(HazelcastCounterStore::close);
    MEMBERS.clear();
  }

  private static HazelcastInstance member(int i) {
    return MEMBERS.get(i).instance();
  }

  private static IMap<byte[], CounterEntry> counters() {
    return member(0).getMap(SETTINGS.mapPrefix() + ".counters");
  }

  @BeforeEach
  void empty() {
    for (String map : new String[] {".counters", ".sequences", ".nodes"}) {
      member(0).getMap(SETTINGS.mapPrefix() + map).clear();
    }
  }

  /** Node n works through member n % 2; closing the store leaves the member running. */
  @Override
  protected CounterStore store(int node) {
    return HazelcastCounterStore.of(member(node % 2), SETTINGS);
  }

  @Override
  protected long counterTtlMillis(String limitName, String key) {
    EntryView<byte[], CounterEntry> view = counters().getEntryView(StoreKeys.counterKey("sluice", limitName, key));
    if (view == null || view.getTtl() <= 0 || view.getTtl() == Long.MAX_VALUE) {
      return -1;
    }
    return view.getExpirationTime() - System.currentTimeMillis();
  }

  /**
   * The first attempt of a batch reached only one of its keys (the call failed or timed out on the
   * others): its retry applies the rest, and the key already applied not again.
   */
  @Test
  void aBatchAppliedOnlyInPartIsCompletedByItsRetry() {
    try (CounterStore store = store(0)) {
      Batch batch = new Batch("n1", 0, 7, NOW_MICROS, List.of(new Delta(window, "a", 100, 3),
          new Delta(window, "b", 100, 4), new Delta(bucket, "c", 0, 2)));
      // what the first attempt got done: key a only
      byte[] a = StoreKeys.counterKey("sluice", "api", "a");
      Batch first = new Batch("n1", 0, 7, NOW_MICROS, List.of(new Delta(window, "a", 100, 3)));
      FlushProcessor onlyKeyA = FlushProcessor.plan(first, FlushProcessor.byKey(first, "sluice"), FlushProcessor.IF_NEWER,
          System.currentTimeMillis(), Duration.ofDays(1).toMillis(), 16).processor;
      long[] onlyA = counters().executeOnKey(a, new HazelcastCounterStore.OnMember(onlyKeyA));
      assertThat(onlyA).containsExactly(1, 3, 0, 0, 0, 0, 0); // applied; count, previous, claim, split, taken, ahead
      FlushResult retry = flush(store, batch);
      assertThat(retry.applied()).isTrue();
      assertThat(retry.current(0)).isEqualTo(3);
      assertThat(retry.current(1)).isEqualTo(4);
      assertThat(retry.current(2)).isEqualTo(200_000);
      FlushResult again = flush(store(1), batch);
      assertThat(again.applied()).isFalse();
      assertThat(again.current(0)).isEqualTo(3);
      assertThat(again.current(1)).isEqualTo(4);
      assertThat(again.current(2)).isEqualTo(200_000);
    }
  }

  /** A GCRA key lives about a second; the node's batch record (a day) still stops a late replay. */
  @Test
  void aReplayAfterItsKeysExpiredIsNotAppliedAgain() throws Exception {
    try (CounterStore store = store(0)) {
      Batch batch = new Batch("n1", 0, 3, NOW_MICROS, List.of(new Delta(bucket, "k", 0, 5)));
      assertThat(flush(store, batch).current(0)).isEqualTo(500_000);
      // the record is written just after the answer
      IMap<byte[], Long> sequences = member(1).getMap(SETTINGS.mapPrefix() + ".sequences");
      byte[] recordKey = StoreKeys.sequenceKey("sluice", "n1", 0, null);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (sequences.get(recordKey) == null && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      EntryView<byte[], Long> record = sequences.getEntryView(recordKey);
      assertThat(record.getValue()).isEqualTo(3);
      assertThat(record.getTtl()).isEqualTo(TimeUnit.DAYS.toMillis(1));

      counters().delete(StoreKeys.counterKey("sluice", "tb#gcra", "k")); // as its TTL would
      FlushResult replay = flush(store, batch);
      assertThat(replay.applied()).isFalse();
      assertThat(replay.current(0)).isZero();
      assertThat(counters().containsKey(StoreKeys.counterKey("sluice", "tb#gcra", "k"))).isFalse();
      // the next batch is new, for that key too
      FlushResult next = flush(store, new Batch("n1", 0, 4, NOW_MICROS, List.of(new Delta(bucket, "k", 0, 1))));
      assertThat(next.applied()).isTrue();
      assertThat(next.current(0)).isEqualTo(100_000);
    }
  }

  /**
   * A third member joins, owns some counters, and crashes (no graceful hand-over): the backups the
   * entry processors wrote on the other members hold every count, and the TTLs with them.
   */
  @Test
  void countsSurviveTheCrashOfAMember() throws Exception {
    HazelcastCounterStore third = startMember();
    try {
      awaitSafe(member(0));
      List<Delta> deltas = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        deltas.add(new Delta(window, "key-" + i, 100, i + 1));
      }
      FlushResult r = flush(third, new Batch("n1", 0, 1, NOW_MICROS, deltas));
      assertThat(r.applied()).isTrue();
      third.instance().getLifecycleService().terminate();
      long crashed = System.nanoTime();
      while (member(0).getCluster().getMembers().size() > 2 || member(1).getCluster().getMembers().size() > 2) {
        assertThat(System.nanoTime() - crashed).as("crashed member removed").isLessThan(TimeUnit.SECONDS.toNanos(30));
        Thread.sleep(20);
      }
      System.out.printf("HazelcastCounterStoreIT: crashed member removed after %d ms%n",
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - crashed));
      try (CounterStore store = store(1)) {
        FlushResult read = flush(store, new Batch("reader", 0, 1, NOW_MICROS, zeroes(deltas)));
        for (int i = 0; i < deltas.size(); i++) {
          assertThat(read.current(i)).as("key-" + i).isEqualTo(i + 1);
        }
        // and the crashed member's node sequence survived too: the batch is a replay
        assertThat(flush(store, new Batch("n1", 0, 1, NOW_MICROS, deltas)).applied()).isFalse();
        assertThat(counterTtlMillis("api", "key-7")).isBetween(1L, 121_000L);
      }
    } finally {
      third.close();
    }
  }

  /**
   * The embedded default: cluster {@code sluice} on 127.0.0.1 only; a cluster of another name is a
   * store of its own; close shuts down only what the store started.
   */
  @Test
  void theEmbeddedDefaultIsALoopbackMemberOfItsOwnCluster() throws Exception {
    HazelcastCounterStore defaults = HazelcastCounterStore.embedded();
    HazelcastCounterStore other = HazelcastCounterStore.embedded("sluice-other-" + UUID.randomUUID());
    HazelcastInstance member = defaults.instance();
    try {
      assertThat(member.getConfig().getClusterName()).isEqualTo("sluice");
      Address address = member.getCluster().getLocalMember().getAddress();
      assertThat(address.getInetAddress().isLoopbackAddress()).as(address.toString()).isTrue();
      assertThat(address.getPort()).isBetween(5701, 5720);
      assertThat(member.getCluster().getMembers()).hasSize(1);
      assertThat(other.instance().getCluster().getMembers()).hasSize(1);

      Batch batch = new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(window, "shared", 100, 5)));
      assertThat(flush(defaults, batch).current(0)).isEqualTo(5);
      assertThat(flush(other, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(window, "shared", 100, 2)))).current(0))
          .isEqualTo(2);
      try (CounterStore ours = store(0)) {
        assertThat(readWindow(ours, window, "shared", 100)).as("the test cluster's count").isZero();
      }
      assertThat(defaults.heartbeat("a", 1_000, Duration.ofSeconds(1)).toCompletableFuture().get()).isEqualTo(1);

      HazelcastCounterStore.of(member).close();
      assertThat(member.getLifecycleService().isRunning()).as("of(member).close() leaves it running").isTrue();
    } finally {
      defaults.close();
      other.close();
    }
    assertThat(member.getLifecycleService().isRunning()).as("embedded().close() shuts it down").isFalse();
    assertThat(other.instance().getLifecycleService().isRunning()).isFalse();
    defaults.close(); // twice is fine
    assertThatThrownBy(() -> defaults.flush(new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(window, "x", 100, 1))))
        .toCompletableFuture().get(5, TimeUnit.SECONDS))
        .as("a closed store fails its calls").isNotNull();
    Limit exact = Limit.fixedWindow("closed").limit(5).window(Duration.ofMinutes(1)).build();
    assertThatThrownBy(() -> defaults.acquire(exact, "x", 1, NOW_MICROS).toCompletableFuture().get(5, TimeUnit.SECONDS))
        .as("exact calls too").isNotNull();
    assertThat(member(0).getLifecycleService().isRunning()).isTrue();
  }

  @Test
  void settingsNameTheFieldTheyReject() {
    assertThatThrownBy(() -> HazelcastCounterStore.Settings.builder().clusterName(" ")).hasMessageStartingWith("clusterName:");
    assertThatThrownBy(() -> HazelcastCounterStore.Settings.builder().port(0)).hasMessageStartingWith("port:");
    assertThatThrownBy(() -> HazelcastCounterStore.Settings.builder().port(65_530).portCount(20).build())
        .hasMessageStartingWith("portCount:");
    assertThatThrownBy(() -> HazelcastCounterStore.Settings.builder().maxBatchSize(0)).hasMessageStartingWith("maxBatchSize:");
    assertThatThrownBy(() -> HazelcastCounterStore.Settings.builder().sequenceTtl(Duration.ZERO))
        .hasMessageStartingWith("sequenceTtl:");
    assertThatThrownBy(() -> HazelcastCounterStore.of(null)).hasMessageStartingWith("instance:");
  }

  private static List<Delta> zeroes(List<Delta> deltas) {
    List<Delta> out = new ArrayList<>();
    for (Delta d : deltas) {
      out.add(new Delta(d.counter(), d.key(), d.window(), 0));
    }
    return out;
  }

  private static void awaitSafe(HazelcastInstance member) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!member.getPartitionService().isClusterSafe() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(member.getPartitionService().isClusterSafe()).as("cluster safe").isTrue();
  }
}
