package io.sluice.cli.tune;

import io.sluice.node.Durations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How to apply a setting tune measured: the {@code SyncedLimiter} builder call and the flags of
 * {@code sluice serve} (the sidecar's {@code --batch-size} and {@code --sync-interval}), with the limit
 * of the run.
 */
final class Apply {
  /** The name given to the limit in the examples (tune's own limit is called "tune"). */
  static final String NAME = "api";

  private Apply() {
  }

  /** {@code Limit.slidingWindowCounter("api").limit(100).window(Duration.ofSeconds(1)).build()}. */
  static String limit(TuneConfig c) {
    return String.format(Locale.ROOT, "Limit.%s(\"%s\").limit(%d).window(%s).build()",
        c.sliding() ? "slidingWindowCounter" : "fixedWindow", NAME, c.limit(), java(c.window()));
  }

  /** {@code SyncedLimiter.builder(limit, store).batchSize(100).syncInterval(Duration.ofMillis(100))}. */
  static String builder(Setting s, TuneConfig c) {
    StringBuilder b = new StringBuilder("SyncedLimiter.builder(limit, store)");
    if (c.regional() && !s.exact()) {
      b.append(".regionalQuota(").append(c.regionRedis().size()).append(')');
    }
    if (s.reservation()) {
      b.append(".reservation()");
    }
    b.append(".batchSize(").append(s.batchSize()).append(')');
    if (!s.exact()) {
      b.append(".syncInterval(Duration.ofMillis(").append(s.syncInterval().toMillis()).append("))");
    }
    return b.append(".build()").toString();
  }

  /**
   * {@code sluice serve --limit api=100/1s --batch-size 100 --sync-interval 100ms} (and {@code
   * --reservation} for that mode), or null for regions (the sidecar has no option for their shares).
   */
  static String serve(Setting s, TuneConfig c) {
    if (c.regional()) {
      return null;
    }
    StringBuilder b = new StringBuilder("sluice serve --limit ").append(NAME).append('=').append(c.limit()).append('/')
        .append(Durations.format(c.window()));
    if (!c.sliding()) {
      b.append(",fixed-window");
    }
    if (c.redis() != null) {
      b.append(" --redis ").append(Backend.redact(c.redis()));
    }
    if (s.reservation()) {
      b.append(" --reservation");
    }
    b.append(" --batch-size ").append(s.batchSize());
    if (!s.exact()) {
      b.append(" --sync-interval ").append(Durations.format(s.syncInterval()));
    }
    return b.toString();
  }

  /** The lines printed under the recommendation (console and report.html). */
  static List<String> lines(Recommender.Recommendation r, TuneConfig c) {
    List<String> out = new ArrayList<>();
    if (r.row() == null) {
      if (c.regional()) {
        out.add("Regions enforce their shares in the approximate mode only: exact and reservation mode take one store"
            + " for the whole limit (no regionalQuota).");
      }
      out.add("Exact mode, in code: " + builder(new Setting(1, c.syncIntervals().get(0)), c) + ", with limit = "
          + limit(c) + (c.regional() ? "" : "; the sidecar: " + serve(new Setting(1, c.syncIntervals().get(0)), c))
          + "; measure it here with --batch-sizes 1.");
      String measured = c.reservation() ? " Measured above (its rows failed a gate too)."
          : c.regional() ? "" : " Measure it here with --reservation.";
      out.add("Reservation mode, in code: SyncedLimiter.builder(limit, store).reservation().build() (the store must"
          + " support leases: both Redis and Hazelcast do)" + (c.regional() ? "" : "; the sidecar: sluice serve"
          + " --reservation") + "; never over-admits, may under-admit by the unused part of outstanding leases."
          + measured);
      return out;
    }
    Setting s = r.row().setting();
    out.add("In code: " + builder(s, c) + ", with limit = " + limit(c) + ".");
    String serve = serve(s, c);
    out.add(serve != null ? "The sidecar: " + serve + "."
        : "The sidecar (sluice serve) has no option for regional shares: use the builder.");
    return out;
  }

  /** {@code Duration.ofSeconds(1)} for whole seconds, else {@code Duration.ofMillis(250)}. */
  static String java(Duration d) {
    long ms = d.toMillis();
    return ms % 1_000 == 0 ? "Duration.ofSeconds(" + ms / 1_000 + ")" : "Duration.ofMillis(" + ms + ")";
  }
}
