package io.sluice.cli.tune;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The traffic shapes {@code tune} replays. Rates are in units of the limit L per window, with D the
 * demand factor ({@code --demand}, default 3 for mixed and 2 for the others): the hottest key wants
 * D times its limit.
 */
enum Profile {
  MIXED("mixed", 200, 100, 3, "K keys (default 200) with Poisson arrivals at rates spread log-uniformly over"
      + " D/300 x L to D x L per window (0.01x to 3x by default), from sparse keys seconds apart to keys above their"
      + " limit; a few hot keys at D x L; a quarter of the keys first seen at a random moment of the run (mid-window)"),
  STEADY("steady", 1, 1_000, 2, "one key, Poisson arrivals at D x L per window"),
  BURSTY("bursty", 1, 1_000, 2, "one key, 0.25 x L per window in the background plus, once per window, a burst of"
      + " D x L requests within a tenth of the window at a random moment"),
  ZIPF("zipf", 1_000, 1_000, 2, "K keys (default 1,000) with Zipf(1) popularity: the hottest wants D x L per window,"
      + " the next D/2 x L, ..., most keys are cold"),
  HOT_KEY("hot-key", 101, 1_000, 2, "one hot key at D x L per window and K-1 cold keys (default 100) sharing 1 x L"),
  STEP("step", 1, 1_000, 2, "one key at 0.5 x L per window for the first half of the run, then D x L");

  /** The mixed profile's rates span this ratio, from D / SPREAD x L to D x L per window. */
  static final double MIXED_SPREAD = 300;

  final String label;
  final int defaultKeys;
  /** --limit when not given: the mixed profile's many keys at a limit of 1,000 would be far too many requests. */
  final long defaultLimit;
  final double defaultDemand;
  final String description;

  Profile(String label, int defaultKeys, long defaultLimit, double defaultDemand, String description) {
    this.label = label;
    this.defaultKeys = defaultKeys;
    this.defaultLimit = defaultLimit;
    this.defaultDemand = defaultDemand;
    this.description = description;
  }

  /** Whether {@code --keys} means anything for this profile. */
  boolean manyKeys() {
    return defaultKeys > 1;
  }

  static Profile parse(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT).replace('_', '-');
    for (Profile p : values()) {
      if (p.label.equals(t)) {
        return p;
      }
    }
    throw new IllegalArgumentException("unknown profile '" + text + "' (one of: " + labels() + ")");
  }

  static String labels() {
    return Arrays.stream(values()).map(p -> p.label).collect(Collectors.joining(", "));
  }
}
