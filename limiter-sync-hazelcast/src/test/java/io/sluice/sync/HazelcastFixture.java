package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.cluster.Address;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import io.sluice.sync.hazelcast.HazelcastCounterStore;
import io.sluice.sync.spi.StoreKeys;
import io.sluice.sync.spi.state.CounterEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real Hazelcast cluster for a test class, on loopback in this JVM with a cluster name of its own:
 * two embedded members and two clients connected to them, so that the store's entry processors also
 * travel the client protocol as a service's would
 * ({@code @RegisterExtension static final HazelcastFixture hazelcast = new HazelcastFixture("name");}).
 * Node n works through member n for n = 0, 1 and through a client for n = 2, 3 (then again, modulo 4).
 */
final class HazelcastFixture implements BeforeAllCallback, AfterAllCallback {
  private final HazelcastCounterStore.Settings settings;
  private final List<HazelcastCounterStore> members = new ArrayList<>();
  private final List<HazelcastInstance> clients = new ArrayList<>();

  HazelcastFixture(String name) {
    this.settings = HazelcastCounterStore.Settings.builder().clusterName("sluice-" + name + "-" + UUID.randomUUID())
        .build();
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    members.add(HazelcastCounterStore.embedded(settings));
    members.add(HazelcastCounterStore.embedded(settings));
    assertThat(members.get(0).instance().getCluster().getMembers()).hasSize(2);
    ClientConfig config = new ClientConfig();
    config.setClusterName(settings.clusterName());
    config.setProperty("hazelcast.logging.type", "jdk"); // at WARNING: see HazelcastCounterStore.memberConfig
    config.setProperty("hazelcast.phone.home.enabled", "false");
    for (HazelcastCounterStore member : members) {
      Address a = member.instance().getCluster().getLocalMember().getAddress();
      config.getNetworkConfig().addAddress("127.0.0.1:" + a.getPort());
    }
    // fail the class in seconds, not after the client's default of retrying forever
    config.getConnectionStrategyConfig().getConnectionRetryConfig().setClusterConnectTimeoutMillis(30_000);
    for (int i = 0; i < 2; i++) {
      clients.add(HazelcastClient.newHazelcastClient(config));
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    clients.forEach(HazelcastInstance::shutdown);
    clients.clear();
    members.forEach(HazelcastCounterStore::close);
    members.clear();
  }

  HazelcastCounterStore.Settings settings() {
    return settings;
  }

  /** The member or client node {@code n} works through. */
  HazelcastInstance instance(int n) {
    int i = n % 4;
    return i < 2 ? members.get(i).instance() : clients.get(i - 2);
  }

  /** A store for node {@code n}, with a callback thread of its own; closing it leaves the cluster running. */
  HazelcastCounterStore store(int n) {
    return HazelcastCounterStore.of(instance(n), settings);
  }

  /** The counters, read through the second member. */
  IMap<byte[], CounterEntry> counters() {
    return members.get(1).instance().getMap(settings.mapPrefix() + ".counters");
  }

  /** The entry of a limit's key, or null. */
  CounterEntry counter(String limitName, String key) {
    return counters().get(StoreKeys.counterKey(settings.mapPrefix(), limitName, key));
  }

  /** Time left before the entry of a limit's key expires, in ms; negative when there is none or it never expires. */
  long ttlMillis(String limitName, String key) {
    var view = counters().getEntryView(StoreKeys.counterKey(settings.mapPrefix(), limitName, key));
    if (view == null || view.getTtl() <= 0 || view.getTtl() == Long.MAX_VALUE) {
      return -1;
    }
    return view.getExpirationTime() - System.currentTimeMillis();
  }
}
