package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The randomized search of {@link WindowProbe}, off by default (it is a search, not a check):
 * {@code -Dsluice.probe=true}, with {@code -Dsluice.probe.seed=N} (the first seed, default 1),
 * {@code -Dsluice.probe.cases=N} (default 500) and {@code -Dsluice.probe.minutes=M} (stops after M
 * minutes, default 8). {@code -Dsluice.probe.only=N} replays one seed and prints its case;
 * {@code -Dsluice.probe.shrink=TYPE} with it removes events while a violation of that type remains and
 * prints what is left; {@code -Dsluice.probe.trace=KEY} prints every decision of a key;
 * {@code -Dsluice.probe.unitCosts=true} makes every cost 1, {@code -Dsluice.probe.hot=true} keeps keys at
 * and above their limits with faults more often (a search for over-admission).
 *
 * <p>What it found (run of 2026-12-02, about 31,000 cases; each a failing test in this package):
 * {@code ReservationDeniedLargeCostTest}, {@code DeniedLargeCostSmallCostsTest},
 * {@code StartupAloneLargeCostTest}, {@code ClosedNodeClaimTest}, {@code SlidingBackoffTest},
 * {@code ReleasedPermitsPileUpTest}, {@code RetryAfterAtTheLimitTest}. No over-admission in any case.
 * False denials below half the limit after releases are the documented cost of {@code release} (the
 * store keeps permits it counted; the node that gave them back reuses them): reported with "after
 * releases" in their type.
 */
@EnabledIfSystemProperty(named = "sluice.probe", matches = "true")
class WindowProbeTest {

  @Test
  void search() {
    String only = System.getProperty("sluice.probe.only");
    long first = Long.getLong("sluice.probe.seed", 1);
    long cases = only != null ? 1 : Long.getLong("sluice.probe.cases", 500);
    long deadline = System.nanoTime() + Long.getLong("sluice.probe.minutes", 8) * 60_000_000_000L;
    Map<String, List<Long>> bySeed = new TreeMap<>();
    int ran = 0;
    long requests = 0;
    for (long s = only != null ? Long.parseLong(only) : first; ran < cases && System.nanoTime() < deadline; s++) {
      WindowProbe.Case c = WindowProbe.Case.draw(s);
      WindowProbe.Result r;
      try {
        r = WindowProbe.run(c);
      } catch (RuntimeException | AssertionError e) {
        System.out.println("probe: " + c + "\n  THREW " + e);
        e.printStackTrace(System.out);
        bySeed.computeIfAbsent("threw " + e.getClass().getSimpleName(), k -> new ArrayList<>()).add(s);
        ran++;
        continue;
      }
      ran++;
      requests += r.requests();
      if (!r.clean() || only != null) {
        System.out.println("probe: " + c + "\n  " + r.counts() + " requests " + r.requests() + " admitted "
            + r.nodesAdmitted() + " exact " + r.exactAdmitted() + " worst over " + r.worstOver());
        r.violations().forEach(v -> System.out.println("    " + v));
        for (String type : r.counts().keySet()) {
          bySeed.computeIfAbsent(type, k -> new ArrayList<>()).add(s);
        }
      }
    }
    String shrink = System.getProperty("sluice.probe.shrink");
    if (only != null && shrink != null) {
      WindowProbe.Case small = WindowProbe.shrink(WindowProbe.Case.draw(Long.parseLong(only)), shrink);
      WindowProbe.Result r = WindowProbe.run(small);
      System.out.println("probe: shrunk to " + small.events().size() + " events: " + r.counts());
      r.violations().forEach(v -> System.out.println("    " + v));
      long window = small.limit().periodNanos();
      long w0 = Math.floorDiv(WindowProbe.START, window) * window;
      for (WindowProbe.Event e : small.events()) {
        System.out.printf(java.util.Locale.ROOT, "  %+.3f ms (window %d +%.3f ms) %s %s cost %d route %d release %s length %.1f ms node %d%n",
            (e.at() - WindowProbe.START) / 1e6, Math.floorDiv(e.at(), window) - Math.floorDiv(WindowProbe.START, window),
            (e.at() - Math.floorDiv(e.at(), window) * window) / 1e6, e.kind(), e.key(), e.cost(), e.route(), e.release(),
            e.length() / 1e6, e.node());
      }
    }
    System.out.println("probe: " + ran + " cases, " + requests + " requests, seeds from " + first);
    bySeed.forEach((type, seeds) -> System.out.println("probe: " + type + ": " + seeds.size() + " cases, seeds "
        + seeds.subList(0, Math.min(40, seeds.size()))));
    assertThat(ran).isPositive();
  }
}
