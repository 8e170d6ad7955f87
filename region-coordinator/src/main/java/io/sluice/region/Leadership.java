package io.sluice.region;

import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.config.Config;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.replicatedmap.ReplicatedMap;
import io.sluice.sync.hazelcast.HazelcastCounterStore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The replicas' Hazelcast cluster on loopback (members configured as Sluice's embedded store's are,
 * {@link HazelcastCounterStore#memberConfig}): the oldest member leads (Hazelcast lists members
 * oldest first, and every member agrees on that list), and the allocation state lives in a
 * replicated map, so a new leader starts from what the old one last wrote.
 *
 * <p>Concurrency: Hazelcast's event threads call the membership listener, which only counts changes
 * (an atomic counter the rounds read); everything else is called from the coordinator's rounds, under
 * its monitor, on Hazelcast's thread-safe cluster view and replicated map.
 */
final class Leadership implements AutoCloseable {
  private final HazelcastInstance hz;
  private final ReplicatedMap<String, long[]> state;
  private final AtomicLong membershipChanges = new AtomicLong();

  Leadership(CoordinatorConfig config) {
    Config c = HazelcastCounterStore.memberConfig(HazelcastCounterStore.Settings.builder()
        .clusterName(config.clusterName()).port(config.port()).portCount(config.portCount()).build());
    // a replica that stops answering is dropped within seconds, so that another takes over
    c.setProperty("hazelcast.max.no.heartbeat.seconds", "5");
    c.setProperty("hazelcast.heartbeat.interval.seconds", "1");
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

  /** This replica's member id, unique in time and space (a UUID). */
  java.util.UUID memberId() {
    return hz.getCluster().getLocalMember().getUuid();
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
