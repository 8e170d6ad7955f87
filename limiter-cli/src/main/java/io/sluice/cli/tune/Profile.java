package io.sluice.cli.tune;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The traffic shapes {@code tune} replays. Rates are in units of the limit L per window, with D the
 * demand factor ({@code --demand}, default 2): the hottest key wants D times its limit.
 */
enum Profile {
  STEADY("steady", 1, "one key, Poisson arrivals at D x L per window"),
  BURSTY("bursty", 1, "one key, 0.25 x L per window in the background plus, once per window, a burst of"
      + " D x L requests within a tenth of the window at a random moment"),
  ZIPF("zipf", 1_000, "K keys (default 1,000) with Zipf(1) popularity: the hottest wants D x L per window,"
      + " the next D/2 x L, ..., most keys are cold"),
  HOT_KEY("hot-key", 101, "one hot key at D x L per window and K-1 cold keys (default 100) sharing 1 x L"),
  STEP("step", 1, "one key at 0.5 x L per window for the first half of the run, then D x L");

  final String label;
  final int defaultKeys;
  final String description;

  Profile(String label, int defaultKeys, String description) {
    this.label = label;
    this.defaultKeys = defaultKeys;
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
