package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Algorithm;
import io.sluice.sync.AccuracyKit.Mode;
import io.sluice.sync.AccuracyKit.Profile;
import io.sluice.sync.AccuracyKit.Report;
import io.sluice.sync.AccuracyKit.Setup;
import io.sluice.sync.AccuracyKit.Traffic;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The accuracy kit's profiles on settings it does not use: 1, 2 and 5 nodes, a batch of 10 with a sync
 * every 50 ms and a batch of 1,000 with a sync every 500 ms, and the default settings on windows of a
 * minute (the traffic sixty times slower). Only the bounds that hold everywhere are asserted here, on
 * every case: over-admission within the bound in every key-window (none in reservation mode), no
 * request denied on a key below half its limit, and the ledger (every admitted permit counted once in
 * its window); and for one node, false denials within their bound too.
 * The kit reports the rest of the figures; this sweep
 * found reservation mode denying a key at half its limit at 5 nodes, batch 1,000 (grants held ahead).
 */
class AccuracySweepTest {

  /** {@code -Dsluice.kit.seedOffset=N}, as the kit's: every run on other traffic of the same profiles. */
  private static final long SEED_OFFSET = AccuracyKit.seedOffset();

  @Test
  void theHardBoundsHoldOnOtherSettings() {
    long seed = 90_000;
    List<String> failed = new ArrayList<>();
    for (Profile p : Profile.values()) {
      for (Algorithm a : new Algorithm[] {Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER}) {
        for (int nodes : new int[] {2, 5}) {
          for (Mode m : new Mode[] {Mode.APPROXIMATE, Mode.RESERVATION}) {
            for (int settings = 0; settings < 3; settings++) {
              Report r = run(p.traffic(a, ++seed + SEED_OFFSET), nodes, m, settings);
              if (r.keyWindowsOverBound() > 0 || r.falseDenialsBelowHalf() > 0
                  || (m == Mode.RESERVATION && r.worstOverPermits() > 0) || ledgerBroken(r, m)) {
                failed.add(r.toString());
              }
            }
          }
        }
      }
    }
    assertThat(failed).as("runs over a hard bound (each names its seed)").isEmpty();
  }

  /**
   * One node, alone, on the same profiles and the settings above, and the default settings on seeds of
   * their own: a node alone has no other node to hold budget from its requests, so the false-denial
   * bound holds there on every profile and setting (2026-12-05: 0.019% at most over these 112 runs).
   */
  @Test
  void aNodeAloneKeepsTheFalseDenialBoundOnOtherSettings() {
    long seed = 95_000;
    List<String> failed = new ArrayList<>();
    for (Profile p : Profile.values()) {
      for (Algorithm a : new Algorithm[] {Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER}) {
        for (Mode m : new Mode[] {Mode.APPROXIMATE, Mode.RESERVATION}) {
          for (int settings = 0; settings < 4; settings++) {
            Report r = run(p.traffic(a, ++seed + SEED_OFFSET), 1, m, settings);
            if (r.keyWindowsOverBound() > 0 || r.falseDenialsBelowHalf() > 0 || r.falseDenialPercent() > 0.1
                || (m == Mode.RESERVATION && r.worstOverPermits() > 0) || ledgerBroken(r, m)) {
              failed.add(r.toString());
            }
          }
        }
      }
    }
    assertThat(failed).as("one-node runs over a bound (each names its seed)").isEmpty();
  }

  /**
   * Whether the run broke DESIGN's "nothing lost, nothing counted twice" once its nodes closed (see
   * AccuracyKitTest#assertBounds): a permit admitted that the store never counted in its window, or one
   * counted beyond the admissions where the mode must count none (Report#ledgerExtraIn).
   */
  private static boolean ledgerBroken(Report r, Mode m) {
    if (r.ledgerRead() && (r.ledgerLost() > 0 || r.ledgerExtraIn(m) > 0)) {
      System.out.println("accuracy sweep: ledger lost " + r.ledgerLost() + ", counted beyond " + r.ledgerExtra());
      return true;
    }
    return false;
  }

  /**
   * The traffic on one of the sweep's settings: 0, batch 10 with a sync every 50 ms; 1, batch 1,000
   * with a sync every 500 ms; 2, the defaults on windows of a minute (the traffic sixty times slower);
   * 3, the defaults.
   */
  private static Report run(Traffic traffic, int nodes, Mode m, int settings) {
    Setup setup = switch (settings) {
      case 0 -> new Setup(nodes, m, 10, Duration.ofMillis(50));
      case 1 -> new Setup(nodes, m, 1_000, Duration.ofMillis(500));
      default -> Setup.of(nodes, m);
    };
    Report r = AccuracyKit.run(settings == 2 ? traffic.stretched(60) : traffic, setup, MemoryStore::new);
    System.out.println("accuracy sweep: " + r);
    return r;
  }
}
