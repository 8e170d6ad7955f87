package io.sluice.region;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Counter;
import io.sluice.region.RegionShareStore.ShareWrite;
import io.sluice.region.RegionShareStore.WriteResult;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A replica's connections to the regions' Redis, in the order of {@link CoordinatorConfig#regions()},
 * and the counts of what went wrong on them: calls that failed and writes refused for a newer epoch.
 *
 * <p>Concurrency: the counters are read from any thread (metrics); everything else is used by the
 * round thread only.
 */
final class RegionLinks implements AutoCloseable {
  /** How often a replica standing by uses each link (see {@link #keepWarm}). */
  static final long WARM_EVERY_NANOS = 1_000_000_000L;

  private final List<Region> regions;
  private final RegionClient[] clients;
  private final AtomicLong refusedWrites = new AtomicLong();
  private final AtomicLong regionErrors = new AtomicLong();
  private long warmedAt = Long.MIN_VALUE;

  RegionLinks(List<Region> regions, Function<Region, RegionClient> connect) {
    this.regions = regions;
    this.clients = new RegionClient[regions.size()];
    for (int i = 0; i < clients.length; i++) {
      clients[i] = connect.apply(regions.get(i));
    }
  }

  int size() {
    return clients.length;
  }

  String name(int r) {
    return regions.get(r).name();
  }

  RegionClient client(int r) {
    return clients[r];
  }

  /** Counts a call to a region's Redis that failed or timed out. */
  void failed() {
    regionErrors.incrementAndGet();
  }

  /** A write of shares to region r; null when it failed (counted), the result (refusals counted) otherwise. */
  WriteResult write(int r, long epoch, Counter counter, long w, long nowMicros, Duration ttl,
      List<ShareWrite> writes) {
    try {
      WriteResult res = clients[r].write(epoch, counter, w, nowMicros, ttl, writes);
      if (!res.accepted()) {
        refusedWrites.incrementAndGet();
      }
      return res;
    } catch (RuntimeException e) {
      regionErrors.incrementAndGet();
      return null;
    }
  }

  /**
   * A replica standing by keeps its links open and in use, a read of each region's epoch at most once
   * per {@link #WARM_EVERY_NANOS}: a take-over then starts with connections made and code run, not with
   * connecting (a cold replica's first connect took 1–2 s on this project's two-core machine, and the
   * whole take-over waited on it). Failures are not counted as region errors, which are the leader's;
   * the leader's first round connects again where this could not.
   */
  void keepWarm(long now) {
    if (warmedAt != Long.MIN_VALUE && now - warmedAt < WARM_EVERY_NANOS) {
      return;
    }
    warmedAt = now;
    for (RegionClient c : clients) {
      try {
        c.epoch();
      } catch (RuntimeException e) {
        // standing by: nothing depends on it
      }
    }
  }

  long refusedWrites() {
    return refusedWrites.get();
  }

  long regionErrors() {
    return regionErrors.get();
  }

  @Override
  public void close() {
    for (RegionClient c : clients) {
      c.close();
    }
  }
}
