package io.sluice.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import eu.rekawek.toxiproxy.Proxy;
import eu.rekawek.toxiproxy.ToxiproxyClient;
import eu.rekawek.toxiproxy.model.ToxicDirection;
import io.sluice.region.GlobalQuota;
import io.sluice.region.RegionCoordinator;
import io.sluice.region.RegionRig;
import io.sluice.region.RegionShareStore;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Toxiproxy between the region coordinator and each region's Redis (the nodes reach their own Redis
 * directly): three regions as real processes in simulated time ({@link RegionRig}), the coordinator
 * with the timeouts a deployment has. Region c, the busiest, is cut off from the coordinator (its
 * proxy disabled), then region b's link turns slow (450 ms on every reply), then both heal. The
 * global sum must stay within G in every window; c keeps its share until its lease ends, then G / 3;
 * shares follow demand again once healed. Local processes only (no Docker path for this one).
 */
class RegionChaosIT {
  private static final long G = 6_000;
  private static final double[] DEMAND = {0.1 * 1_200, 0.2 * 1_200, 0.7 * 1_200}; // permits/s: total 2G per 10 s

  @Test
  void theGlobalSumHoldsWhileTheCoordinatorLosesAndSlowsRegions() throws Exception {
    GlobalQuota quota = GlobalQuota.builder("api").quota(G).window(Duration.ofSeconds(10)).keyPattern("tenant-*").build();
    try (ToxiproxyServer toxiproxy = ToxiproxyServer.start();
         RegionRig rig = new RegionRig(3, 2, quota)) {
      ToxiproxyClient client = toxiproxy.client();
      Proxy[] links = new Proxy[rig.regions()];
      String[] uris = new String[rig.regions()];
      for (int r = 0; r < rig.regions(); r++) {
        int port = Ports.free();
        links[r] = client.createProxy("coordinator-" + r, "127.0.0.1:" + port, "127.0.0.1:" + rig.redisPort(r));
        uris[r] = "redis://127.0.0.1:" + port;
      }
      RegionCoordinator coordinator = rig.addCoordinator("chaos-" + UUID.randomUUID(), r -> uris[r]);
      long first = rig.window();
      rig.run(Duration.ofSeconds(30), r -> DEMAND[r], "tenant-1");
      assertThat(coordinator.leading()).isTrue();
      long errorsBefore = coordinator.regionErrors();

      // 1. region c cut off from the coordinator for four windows
      RegionShareStore.KeyState before = rig.record(2, "tenant-1");
      long cutFrom = rig.window();
      links[2].disable();
      rig.run(Duration.ofSeconds(40), r -> DEMAND[r], "tenant-1");
      RegionShareStore.KeyState during = rig.record(2, "tenant-1");
      long cutTo = rig.window();
      assertThat(coordinator.regionErrors()).isGreaterThan(errorsBefore);
      assertThat(during.shareWindow()).as("nothing written to c while cut off").isEqualTo(before.shareWindow());
      assertThat(cutTo).as("windows after c's lease ended while cut off").isGreaterThan(before.leaseEnd() + 1);
      for (long w = before.leaseEnd() + 1; w < cutTo; w++) {
        assertThat(rig.admitted("tenant-1", w, 2)).as("c enforces G / 3 once its lease is over, window " + w)
            .isBetween(G / 3 - G / 100, G / 3 + G / 100);
      }

      // 2. c back, b slow: every reply from b's Redis 400-500 ms late (under the 500 ms command timeout or not)
      links[2].enable();
      links[1].toxics().latency("slow-b", ToxicDirection.DOWNSTREAM, 450).setJitter(50);
      long slowFrom = rig.window();
      rig.run(Duration.ofSeconds(30), r -> DEMAND[r], "tenant-1");
      long slowTo = rig.window();

      // 3. healed
      links[1].toxics().get("slow-b").remove();
      long healed = rig.window();
      rig.run(Duration.ofSeconds(30), r -> DEMAND[r], "tenant-1");
      long end = rig.window();

      double worstOver = 0;
      for (long w = first; w < end; w++) {
        worstOver = Math.max(worstOver, (double) rig.total("tenant-1", w) / G - 1);
      }
      double cutUse = utilisation(rig, cutFrom, cutTo);
      double slowUse = utilisation(rig, slowFrom, slowTo);
      double healedUse = utilisation(rig, healed + 1, end);
      System.out.printf(Locale.ROOT, "RegionChaosIT: worst window %+.2f%% of G; utilisation c cut %.1f%%,"
          + " b slow %.1f%%, healed %.1f%%; coordinator region errors %d%n", 100 * worstOver, 100 * cutUse,
          100 * slowUse, 100 * healedUse, coordinator.regionErrors());
      assertThat(worstOver).as("the most any window went over G").isLessThanOrEqualTo(0.01);
      assertThat(healedUse).as("utilisation once healed").isGreaterThanOrEqualTo(0.95);
      assertThat(rig.record(2, "tenant-1").shareWindow()).as("c gets shares again").isGreaterThanOrEqualTo(healed);
    }
  }

  /**
   * Region b's nodes lose their own Redis (the coordinator still reaches it) for four windows, then
   * b's Redis is killed and restarted empty. b's nodes decide by their failure policy (LOCAL_SHARE)
   * within the share they hold, and admit nothing once their lease has run out; the coordinator, which
   * hears b's nodes fall silent in b's registry, counts b at the most it may hold meanwhile instead of
   * handing its budget to the others (before, it took b for idle, and windows went 33-39% over G): the
   * global sum stays within G in every window.
   */
  @Test
  void theGlobalSumHoldsWhenARegionsNodesLoseTheirRedisAndItRestartsEmpty() throws Exception {
    nodesLoseTheirRedisThenItRestartsEmpty(
        GlobalQuota.builder("api").quota(G).window(Duration.ofSeconds(10)).keyPattern("tenant-*").build());
  }

  /**
   * The same faults under a token-bucket quota (a refill of G per 10 s, a burst of G / 10): b's nodes
   * (exact mode, FAIL_CLOSED) admit nothing while cut off, and its coordinator counts b at its most;
   * after b's Redis restarts empty, b's nodes give the lost keys back the record they last read and
   * start their buckets empty. Over every interval of the run the regions together admit at most the
   * burst plus the refill.
   */
  @Test
  void aTokenBucketQuotaHoldsWhenARegionsNodesLoseTheirRedisAndItRestartsEmpty() throws Exception {
    nodesLoseTheirRedisThenItRestartsEmpty(bucketQuota());
  }

  /**
   * The same under the token-bucket quota with batched nodes (token claims, batch 100): tokens a node of b
   * holds when it is cut off were taken from b's bucket before, and count as admitted only when used; the
   * bound holds over every interval.
   */
  @Test
  void aBatchedTokenBucketQuotaHoldsWhenARegionsNodesLoseTheirRedisAndItRestartsEmpty() throws Exception {
    nodesLoseTheirRedisThenItRestartsEmpty(bucketQuota(), 100);
  }

  /** A token-bucket quota: a refill of G per 10 s, a burst of G / 10. */
  private static GlobalQuota bucketQuota() {
    return GlobalQuota.builder("api").quota(G).window(Duration.ofSeconds(10)).keyPattern("tenant-*")
        .tokenBucket(G / 10).build();
  }

  private static void nodesLoseTheirRedisThenItRestartsEmpty(GlobalQuota quota) throws Exception {
    nodesLoseTheirRedisThenItRestartsEmpty(quota, 1);
  }

  private static void nodesLoseTheirRedisThenItRestartsEmpty(GlobalQuota quota, long bucketBatch) throws Exception {
    try (ToxiproxyServer toxiproxy = ToxiproxyServer.start()) {
      ToxiproxyClient client = toxiproxy.client();
      Proxy[] nodeLinks = new Proxy[3];
      try (RegionRig rig = new RegionRig(3, 2, quota, (r, redisPort) -> {
        if (nodeLinks[r] == null) { // one proxy per region, its nodes' connections through it
          try {
            nodeLinks[r] = client.createProxy("nodes-" + r, "127.0.0.1:" + Ports.free(), "127.0.0.1:" + redisPort);
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        }
        return "redis://" + nodeLinks[r].getListen();
      }, bucketBatch)) {
        RegionCoordinator coordinator = rig.addCoordinator("chaos-" + UUID.randomUUID(),
            r -> "redis://127.0.0.1:" + rig.redisPort(r));
        long first = rig.window();
        rig.run(Duration.ofSeconds(30), r -> DEMAND[r], "tenant-1");
        assertThat(coordinator.leading()).isTrue();

        // 1. b's nodes cut off from b's Redis for four windows
        long cutFrom = rig.window();
        nodeLinks[1].disable();
        long fallbackBefore = rig.fallbackDecisions(1);
        rig.run(Duration.ofSeconds(40), r -> DEMAND[r], "tenant-1");
        long cutTo = rig.window();
        long fallbackCut = rig.fallbackDecisions(1);
        nodeLinks[1].enable();
        rig.run(Duration.ofSeconds(20), r -> DEMAND[r], "tenant-1");

        // 2. b's Redis killed and restarted empty
        long restartAt = rig.window();
        long fallbackAfterCut = rig.fallbackDecisions(1);
        rig.restartEmpty(1);
        rig.run(Duration.ofSeconds(40), r -> DEMAND[r], "tenant-1");
        long end = rig.window();
        System.out.printf(Locale.ROOT, "RegionChaosIT: b's decisions left to the failure policy: %d while cut off,"
            + " %d in the 20 s after, %d after the restart%n", fallbackCut - fallbackBefore,
            fallbackAfterCut - fallbackCut, rig.fallbackDecisions(1) - fallbackAfterCut);

        double worstOver = 0;
        long worstWindow = first;
        StringBuilder windows = new StringBuilder();
        for (long w = first; w < end; w++) {
          double over = (double) rig.total("tenant-1", w) / G - 1;
          windows.append(String.format(Locale.ROOT, " %d:%d/%d/%d", w - first, rig.admitted("tenant-1", w, 0),
              rig.admitted("tenant-1", w, 1), rig.admitted("tenant-1", w, 2)));
          if (over > worstOver) {
            worstOver = over;
            worstWindow = w;
          }
        }
        // (a token bucket's window may also hold its burst: its bound is over every interval)
        double bucketOver = quota.bucket() ? rig.worstOverBucket("tenant-1") / G : 0;
        System.out.printf(Locale.ROOT, "RegionChaosIT%s (b's nodes cut from their Redis in windows %d-%d, b's Redis"
            + " restarted empty in window %d): worst window %+.2f%% of G (window %d)%s; utilisation cut %.1f%%,"
            + " after the restart %.1f%%; admitted a/b/c per window:%s%n",
            quota.bucket() ? ", token bucket" + (bucketBatch > 1 ? " batched" : "") : "",
            cutFrom - first, cutTo - first - 1, restartAt - first, 100 * worstOver, worstWindow - first,
            quota.bucket() ? String.format(Locale.ROOT, ", most over burst + refill in any interval %+.2f%% of G",
                100 * bucketOver) : "", 100 * utilisation(rig, cutFrom, cutTo), 100 * utilisation(rig, restartAt, end),
            windows);
        if (quota.bucket()) {
          assertThat(bucketOver).as("the most admitted in any interval over burst + refill").isLessThanOrEqualTo(0.01);
        } else {
          assertThat(worstOver).as("the most any window went over G").isLessThanOrEqualTo(0.01);
        }
        assertThat(utilisation(rig, first, cutFrom)).as("utilisation before the fault").isGreaterThanOrEqualTo(0.95);
      }
    }
  }

  private static double utilisation(RegionRig rig, long from, long to) {
    double sum = 0;
    for (long w = from; w < to; w++) {
      sum += (double) rig.total("tenant-1", w) / G;
    }
    return to > from ? sum / (to - from) : 0;
  }
}
