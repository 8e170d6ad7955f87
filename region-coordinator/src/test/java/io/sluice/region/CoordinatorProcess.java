package io.sluice.region;

import io.sluice.sync.redis.RedisStoreConfig;
import java.time.Duration;

/**
 * One coordinator replica in a process of its own, for the real-time report ({@link RegionRealTimeReport}):
 * scheduled rounds on the system clock, as {@code sluice coordinator} runs them. It prints
 * {@code leading} / {@code following} whenever that changes (checked every 10 ms), so that the report
 * can time a take-over after it kills the leader with SIGKILL, and every second a status line (rounds,
 * leaderships, epoch, errors) for the report's log.
 *
 * <p>Arguments: cluster name, first Hazelcast port, quota name, G, window (ms), key pattern, lease
 * (ms), round interval (ms), then one {@code name=redis://...} per region; {@code -Dsluice.realtime.sliding=true}
 * for a sliding window quota, {@code -Dsluice.realtime.bucket=BURST} for a token-bucket one.
 */
public final class CoordinatorProcess {
  /** Each round's split printed ({@code -Dsluice.realtime.verbose=true}): shares, silent regions, demand. */
  private static final boolean VERBOSE = Boolean.getBoolean("sluice.realtime.verbose");

  private CoordinatorProcess() {
  }

  public static void main(String[] args) throws Exception {
    GlobalQuota.Builder spec = GlobalQuota.builder(args[2]).quota(Long.parseLong(args[3]))
        .window(Duration.ofMillis(Long.parseLong(args[4]))).keyPattern(args[5]);
    long burst = Long.getLong("sluice.realtime.bucket", 0);
    GlobalQuota quota = (Boolean.getBoolean("sluice.realtime.sliding") ? spec.slidingWindow()
        : burst > 0 ? spec.tokenBucket(burst) : spec).build();
    CoordinatorConfig.Builder b = CoordinatorConfig.builder().quota(quota)
        .cluster(args[0], Integer.parseInt(args[1]), 20).lease(Duration.ofMillis(Long.parseLong(args[6])))
        .roundInterval(Duration.ofMillis(Long.parseLong(args[7])));
    for (int i = 8; i < args.length; i++) {
      String[] region = args[i].split("=", 2);
      b.region(Region.of(region[0], RedisStoreConfig.builder(region[1]).build()));
    }
    try (RegionCoordinator c = RegionCoordinator.start(b.build())) {
      boolean leading = false;
      System.out.println("started");
      System.out.flush();
      long lastStatus = System.nanoTime();
      RegionCoordinator.QuotaSummary lastPrinted = null;
      while (true) {
        boolean now = c.leading();
        if (now != leading) {
          leading = now;
          System.out.println(now ? "leading" : "following");
          System.out.flush();
        }
        if (System.nanoTime() - lastStatus >= 1_000_000_000L) {
          lastStatus = System.nanoTime();
          System.out.println(String.format(java.util.Locale.ROOT, "status %s rounds=%d leaderships=%d epoch=%d"
              + " fenced=%b regionErrors=%d refusedWrites=%d members=%d", java.time.Instant.now(), c.rounds(),
              c.leaderships(), c.epoch(), c.fenced(), c.regionErrors(), c.refusedWrites(), c.members()));
          System.out.flush();
        }
        if (VERBOSE && c.leading()) {
          RegionCoordinator.QuotaSummary q = c.lastRound().get(args[2]);
          if (q != null && q != lastPrinted) {
            lastPrinted = q;
            StringBuilder line = new StringBuilder("round " + java.time.Instant.now() + " w" + q.window());
            for (RegionCoordinator.RegionSummary r : q.regions()) {
              line.append(String.format(java.util.Locale.ROOT, " %s%s %d/%d (%.0f/s)", r.region(),
                  r.reachable() ? "" : "(silent)", r.share(), r.nextShare(), r.demandPerSecond()));
            }
            System.out.println(line);
          }
        }
        Thread.sleep(10);
      }
    }
  }
}
