package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The randomized search of {@link BucketProbe}, off by default (it is a search, not a check), with the
 * same switches as {@code WindowProbeTest}: {@code -Dsluice.probe=true}, {@code -Dsluice.probe.seed=N}
 * (the first seed, default 1), {@code -Dsluice.probe.cases=N} (default 500), {@code
 * -Dsluice.probe.minutes=M} (default 8); {@code -Dsluice.probe.only=N} replays one seed and prints its
 * case, and with {@code -Dsluice.probe.shrink=TYPE} shrinks it to the events that still show that type.
 */
@EnabledIfSystemProperty(named = "sluice.probe", matches = "true")
class BucketProbeTest {

  @Test
  void search() {
    String only = System.getProperty("sluice.probe.only");
    long first = Long.getLong("sluice.probe.seed", 1);
    long cases = only != null ? 1 : Long.getLong("sluice.probe.cases", 500);
    long deadline = System.nanoTime() + Long.getLong("sluice.probe.minutes", 8) * 60_000_000_000L;
    Map<String, List<Long>> bySeed = new TreeMap<>();
    int ran = 0;
    long requests = 0;
    long falseDenials = 0;
    long exactAdmitted = 0;
    long nodesAdmitted = 0;
    long storeCalls = 0;
    TreeMap<Double, String> shortest = new TreeMap<>(); // admitted / exact -> case, the lowest few
    for (long s = only != null ? Long.parseLong(only) : first; ran < cases && System.nanoTime() < deadline; s++) {
      BucketProbe.Case c = BucketProbe.Case.draw(s);
      BucketProbe.Result r;
      try {
        r = BucketProbe.run(c);
      } catch (RuntimeException | AssertionError e) {
        System.out.println("probe: " + c + "\n  THREW " + e);
        e.printStackTrace(System.out);
        bySeed.computeIfAbsent("threw " + e.getClass().getSimpleName(), k -> new ArrayList<>()).add(s);
        ran++;
        continue;
      }
      ran++;
      requests += r.requests();
      falseDenials += r.falseDenials();
      exactAdmitted += r.exactAdmitted();
      nodesAdmitted += r.nodesAdmitted();
      storeCalls += r.storeCalls();
      if (r.exactAdmitted() > 0) {
        shortest.put((double) r.nodesAdmitted() / r.exactAdmitted() + s * 1e-12, c + ": admitted " + r.nodesAdmitted()
            + " exact " + r.exactAdmitted() + " false denials " + r.falseDenials() + " of " + r.requests());
        while (shortest.size() > 5) {
          shortest.pollLastEntry();
        }
      }
      if (Boolean.getBoolean("sluice.probe.all")) {
        System.out.println("probe case " + s + ": false denials " + r.falseDenials() + " of " + r.requests() + " admitted "
            + r.nodesAdmitted() + " exact " + r.exactAdmitted() + " | " + c);
      }
      if (!r.clean() || only != null) {
        System.out.println("probe: " + c + "\n  " + r.counts() + " requests " + r.requests() + " admitted "
            + r.nodesAdmitted() + " exact " + r.exactAdmitted() + " false denials " + r.falseDenials()
            + " worst over " + r.worstOver());
        r.violations().forEach(v -> System.out.println("    " + v));
        for (String type : r.counts().keySet()) {
          bySeed.computeIfAbsent(type, k -> new ArrayList<>()).add(s);
        }
      }
    }
    String shrink = System.getProperty("sluice.probe.shrink");
    if (only != null && shrink != null) {
      BucketProbe.Case small = BucketProbe.shrink(BucketProbe.Case.draw(Long.parseLong(only)), shrink);
      BucketProbe.Result r = BucketProbe.run(small);
      System.out.println("probe: shrunk to " + small.events().size() + " events: " + r.counts());
      r.violations().forEach(v -> System.out.println("    " + v));
      for (WindowProbe.Event e : small.events()) {
        System.out.printf(java.util.Locale.ROOT, "  %.3f ms %s %s cost %d route %d length %.1f ms node %d%n",
            e.at() / 1e6, e.kind(), e.key(), e.cost(), e.route(), e.length() / 1e6, e.node());
      }
    }
    System.out.printf(java.util.Locale.ROOT, "probe: %d cases, %d requests, seeds from %d; false denials %d (%.3f%%),"
            + " admitted %d, exact %d; store calls %.1f per 1,000 requests%n", ran, requests, first, falseDenials,
        100.0 * falseDenials / Math.max(1, requests), nodesAdmitted, exactAdmitted, 1000.0 * storeCalls / Math.max(1, requests));
    shortest.forEach((ratio, what) -> System.out.printf(java.util.Locale.ROOT, "probe: admitted %.2f%% of exact: %s%n",
        100 * ratio, what));
    bySeed.forEach((type, seeds) -> System.out.println("probe: " + type + ": " + seeds.size() + " cases, seeds "
        + seeds.subList(0, Math.min(20, seeds.size()))));
    assertThat(ran).isPositive();
  }
}
