package io.sluice.region;

import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.replicatedmap.ReplicatedMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The replicas' Hazelcast cluster on loopback: the oldest member leads (Hazelcast lists members
 * oldest first, and every member agrees on that list), and the allocation state lives in a
 * replicated map, so a new leader starts from what the old one last wrote.
 */
final class Leadership implements AutoCloseable {
  private static final Logger HAZELCAST_LOG = Logger.getLogger("com.hazelcast");

  private final HazelcastInstance hz;
  private final ReplicatedMap<String, long[]> state;
  private final AtomicLong membershipChanges = new AtomicLong();

  Leadership(CoordinatorConfig config) {
    Config c = new Config();
    c.setClusterName(config.clusterName());
    c.setProperty("hazelcast.phone.home.enabled", "false");
    c.setProperty("hazelcast.socket.bind.any", "false");
    // a replica that stops answering is dropped within seconds, so that another takes over
    c.setProperty("hazelcast.max.no.heartbeat.seconds", "5");
    c.setProperty("hazelcast.heartbeat.interval.seconds", "1");
    if (System.getProperty("hazelcast.logging.type") == null) {
      c.setProperty("hazelcast.logging.type", "jdk");
      synchronized (HAZELCAST_LOG) {
        if (HAZELCAST_LOG.getLevel() == null) {
          HAZELCAST_LOG.setLevel(Level.WARNING);
        }
      }
    }
    NetworkConfig network = c.getNetworkConfig();
    network.setPort(config.port()).setPortAutoIncrement(true).setPortCount(config.portCount());
    network.getInterfaces().setEnabled(true).addInterface("127.0.0.1");
    JoinConfig join = network.getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    join.getTcpIpConfig().setEnabled(true).addMember("127.0.0.1");
    c.setProperty("hazelcast.tcp.join.port.try.count", Integer.toString(config.portCount()));
    this.hz = Hazelcast.newHazelcastInstance(c);
    this.state = hz.getReplicatedMap("sluice.coordinator.state");
    hz.getCluster().addMembershipListener(new MembershipListener() {
      @Override
      public void memberAdded(MembershipEvent event) {
        membershipChanges.incrementAndGet();
      }

      @Override
      public void memberRemoved(MembershipEvent event) {
        membershipChanges.incrementAndGet();
      }
    });
  }

  /** Whether this replica is the oldest member of its cluster as it sees it. */
  boolean oldest() {
    return hz.getLifecycleService().isRunning() && hz.getCluster().getMembers().iterator().next().localMember();
  }

  /** Grows whenever a replica joins or leaves: a fenced replica may lead again only after a change. */
  long membershipChanges() {
    return membershipChanges.get();
  }

  int members() {
    return hz.getLifecycleService().isRunning() ? hz.getCluster().getMembers().size() : 0;
  }

  ReplicatedMap<String, long[]> state() {
    return state;
  }

  /** Stops this replica as a crash would (no graceful hand-over): for tests of fail-over. */
  void crash() {
    hz.getLifecycleService().terminate();
  }

  @Override
  public void close() {
    if (hz.getLifecycleService().isRunning()) {
      hz.shutdown();
    }
  }
}
