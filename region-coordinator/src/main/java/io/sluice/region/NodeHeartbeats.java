package io.sluice.region;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.logging.Logger;

/**
 * What a replica hears of the regions' nodes: each region's node registry as the last round read it,
 * and from it which regions are silent this round (see {@link #listen}).
 *
 * <p>Concurrency: used by the round thread only (rounds are serialized by {@link RegionCoordinator#round()}).
 */
final class NodeHeartbeats {
  /** (The coordinator's logger: its messages read as the coordinator's.) */
  private static final Logger LOG = Logger.getLogger(RegionCoordinator.class.getName());
  /** How long a node's heartbeat deadline may stand still before it counts as stopped (three default beats). */
  static final Duration STALL = Duration.ofSeconds(3);

  private final CoordinatorConfig config;
  private final RegionLinks links;
  /**
   * Per region: its node registry as the last round read it (node to heartbeat deadline), the nodes
   * seen to stop beating (their deadline did not move from one round to the next), and the ticker time
   * until which the region counts as silent: a node of it stopped, and may be deciding by its failure
   * policy on a share it can no longer read (its link to the region's Redis cut) until its lease ends.
   */
  private final List<Map<String, long[]>> registries = new ArrayList<>();
  private final long[] silentUntil;
  /** This round: per region, whether it is silent (counted at the most it may hold, nothing written). */
  private final boolean[] silent;

  NodeHeartbeats(CoordinatorConfig config, RegionLinks links) {
    this.config = config;
    this.links = links;
    this.silentUntil = new long[links.size()];
    this.silent = new boolean[links.size()];
    for (int i = 0; i < links.size(); i++) {
      registries.add(new HashMap<>());
      silentUntil[i] = Long.MIN_VALUE;
    }
  }

  /** This round's silent regions by index: the live array, which the quota rounds only read. */
  boolean[] silent() {
    return silent;
  }

  /**
   * Reads each region's node registry and marks the regions that are silent this round. A node whose
   * heartbeat deadline has not moved since the last round may have stopped beating (cut off from its
   * region's Redis, or crashed: the two look alike from here, unlike a node that left on purpose, see
   * leave.lua): its region is silent for the round, counted at the most it may hold and given no
   * writes, so that budget its nodes may still be spending is not handed to the others (a beat can also
   * just fall between two rounds: that costs the region one round's reallocation). A node whose
   * deadline has not moved for {@link #STALL} (or three rounds) stopped: its region stays silent for a
   * lease and the longest window, time enough for the shares such a node read to have run out (a node
   * of a regional quota that cannot reach its store admits within the share it holds for a window and
   * nothing once none is left, see SyncedLimiter's failure policy). A region whose registry cannot be
   * read is unreachable this round anyway.
   */
  void listen(long now) {
    long hold = config.lease().toNanos();
    long longest = 0;
    for (GlobalQuota q : config.quotas()) {
      longest = Math.max(longest, q.window().toNanos());
    }
    hold += longest;
    long stall = Math.max(STALL.toNanos(), 3 * config.roundInterval().toNanos());
    for (int r = 0; r < links.size(); r++) {
      RegionShareStore.Registry registry;
      try {
        registry = links.client(r).nodes();
      } catch (RuntimeException e) {
        links.failed();
        silent[r] = now < silentUntil[r];
        continue;
      }
      Map<String, long[]> known = registries.get(r);
      noteDeadlines(known, registry, now);
      boolean unheard = forgetLeftAndStopped(r, known, registry, now, stall, hold);
      silent[r] = unheard || now < silentUntil[r];
    }
  }

  /** Per node: {the deadline last read, when (this replica's clock) it was last seen to move}. */
  private static void noteDeadlines(Map<String, long[]> known, RegionShareStore.Registry registry, long now) {
    for (Map.Entry<String, Long> e : registry.deadlines().entrySet()) {
      long[] k = known.get(e.getKey());
      if (k == null) {
        known.put(e.getKey(), new long[] {e.getValue(), now});
      } else if (e.getValue() > k[0]) {
        k[0] = e.getValue();
        k[1] = now;
      }
    }
  }

  /**
   * Drops the nodes that left and those that stopped (region r then silent until {@code now + hold});
   * whether any node of region r was not heard this round.
   */
  private boolean forgetLeftAndStopped(int r, Map<String, long[]> known, RegionShareStore.Registry registry,
      long now, long stall, long hold) {
    boolean unheard = false;
    for (Iterator<Map.Entry<String, long[]>> it = known.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, long[]> e = it.next();
      if (!registry.deadlines().containsKey(e.getKey()) && registry.left().contains(e.getKey())) {
        it.remove(); // it left on purpose (its limiter closed): it admits nothing more
        continue;
      }
      if (e.getValue()[1] < now) {
        unheard = true;
        if (now - e.getValue()[1] > stall) {
          silentUntil[r] = Math.max(silentUntil[r], now + hold);
          it.remove();
          LOG.warning("region " + links.name(r) + ": node " + e.getKey() + " stopped beating; the"
              + " region counts at the most it may hold until its leases have run out");
        }
      }
    }
    return unheard;
  }
}
