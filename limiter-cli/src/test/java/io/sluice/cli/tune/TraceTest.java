package io.sluice.cli.tune;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TraceTest {
  static final long SECOND = 1_000_000_000L;

  @Test
  void theSameSeedGivesTheSameTrace() {
    for (Profile p : Profile.values()) {
      Trace a = Trace.generate(p, 1_000, 2, p.defaultKeys, 4, 4, SECOND, 7);
      Trace b = Trace.generate(p, 1_000, 2, p.defaultKeys, 4, 4, SECOND, 7);
      Trace c = Trace.generate(p, 1_000, 2, p.defaultKeys, 4, 4, SECOND, 8);
      assertThat(a.at).as(p.label).isEqualTo(b.at);
      assertThat(a.key).as(p.label).isEqualTo(b.key);
      assertThat(a.node).as(p.label).isEqualTo(b.node);
      assertThat(a.at).as(p.label).isNotEqualTo(c.at);
    }
  }

  @Test
  void requestsAreSortedWithinTheRunAndOnKnownKeysAndNodes() {
    for (Profile p : Profile.values()) {
      Trace t = Trace.generate(p, 500, 3, p.defaultKeys, 5, 3, SECOND, 1);
      for (int i = 0; i < t.size(); i++) {
        assertThat(t.at[i]).isBetween(0L, 3 * SECOND - 1);
        if (i > 0) {
          assertThat(t.at[i]).isGreaterThanOrEqualTo(t.at[i - 1]);
        }
        assertThat(t.key[i]).isBetween(0, t.keys - 1);
        assertThat(t.node[i]).isBetween(0, 4);
      }
      // Poisson counts: within 10% of what the profile asks for over 3 windows
      double expected = Trace.expected(p, 500, 3, t.keys, 3);
      assertThat((double) t.size()).as(p.label).isBetween(expected * 0.9, expected * 1.1);
    }
  }

  @Test
  void zipfHasAFewHotKeysAndManyColdOnes() {
    Trace t = Trace.generate(Profile.ZIPF, 1_000, 2, 1_000, 4, 10, SECOND, 3);
    long[] perKey = new long[t.keys];
    for (int k : t.key) {
      perKey[k]++;
    }
    // the hottest key wants 2x its limit per window; key 100 about 1/100 of that
    assertThat(perKey[0] / 10.0).isBetween(1_800.0, 2_200.0);
    assertThat(perKey[99] / 10.0).isBetween(10.0, 30.0);
  }

  @Test
  void stepDoublesDemandHalfWay() {
    Trace t = Trace.generate(Profile.STEP, 1_000, 2, 1, 2, 4, SECOND, 5);
    long first = 0;
    long second = 0;
    for (long at : t.at) {
      if (at < 2 * SECOND) {
        first++;
      } else {
        second++;
      }
    }
    assertThat(first / 2.0).isBetween(450.0, 550.0);
    assertThat(second / 2.0).isBetween(1_850.0, 2_150.0);
  }

  /** --key-affinity: every request of a key to one node, the keys spread over every node. */
  @Test
  void withKeyAffinityEachKeysRequestsGoToOneNode() {
    Trace t = Trace.generate(Profile.MIXED, 100, 3, 200, 4, 8, SECOND, 42, null, true);
    int[] nodeOfKey = new int[t.keys];
    java.util.Arrays.fill(nodeOfKey, -1);
    long[] perNode = new long[4];
    for (int i = 0; i < t.key.length; i++) {
      int k = t.key[i];
      if (nodeOfKey[k] < 0) {
        nodeOfKey[k] = t.node[i];
      }
      assertThat(t.node[i]).as("key %d's request %d", k, i).isEqualTo(nodeOfKey[k]);
      perNode[t.node[i]]++;
    }
    for (long n : perNode) {
      assertThat(n).as("requests per node: %s", java.util.Arrays.toString(perNode)).isPositive();
    }
    Trace random = Trace.generate(Profile.MIXED, 100, 3, 200, 4, 8, SECOND, 42);
    assertThat(random.at).as("the same arrivals, routed otherwise").isEqualTo(t.at);
    assertThat(random.node).isNotEqualTo(t.node);
  }

  @Test
  void mixedIsTheSameForTheSameSeed() {
    Trace a = Trace.generate(Profile.MIXED, 100, 3, 200, 4, 8, SECOND, 42);
    Trace b = Trace.generate(Profile.MIXED, 100, 3, 200, 4, 8, SECOND, 42);
    assertThat(a.at).isEqualTo(b.at);
    assertThat(a.key).isEqualTo(b.key);
    assertThat(a.node).isEqualTo(b.node);
    Trace.Mixed p = Trace.Mixed.plan(200, 3, 8 * SECOND, new java.util.SplittableRandom(9));
    Trace.Mixed q = Trace.Mixed.plan(200, 3, 8 * SECOND, new java.util.SplittableRandom(9));
    assertThat(p.demand).isEqualTo(q.demand);
    assertThat(p.startNanos).isEqualTo(q.startNanos);
  }

  @Test
  void mixedSpreadsRatesLogUniformlyFromAHundredthToThreeTimesTheLimit() {
    int keys = 200;
    Trace.Mixed plan = Trace.Mixed.plan(keys, 3, 8 * SECOND, new java.util.SplittableRandom(1));
    int hot = Trace.mixedHotKeys(keys);
    assertThat(hot).isEqualTo(3);
    for (int k = 0; k < hot; k++) {
      assertThat(plan.demand[k]).isEqualTo(3.0);
    }
    // every tenth of the log range 0.01x..3x holds a tenth of the other keys (stratified: 19 or 20 of 197)
    int[] decile = new int[10];
    for (int k = hot; k < keys; k++) {
      assertThat(plan.demand[k]).isBetween(0.01, 3.0);
      double u = Math.log(plan.demand[k] / 0.01) / Math.log(300);
      decile[Math.min(9, (int) (u * 10))]++;
    }
    for (int n : decile) {
      assertThat(n).isBetween(19, 20);
    }
    // the ends are reached: a key within one stratum of 0.01x, one within one of 3x
    double min = 3;
    double max = 0;
    for (int k = hot; k < keys; k++) {
      min = Math.min(min, plan.demand[k]);
      max = Math.max(max, plan.demand[k]);
    }
    assertThat(min).isLessThan(0.01 * Math.pow(300, 1.0 / 197));
    assertThat(max).isGreaterThan(3 / Math.pow(300, 1.0 / 197));
  }

  @Test
  void mixedHasSparseKeysSecondsApartAndKeysAboveTheLimit() {
    // limit 100 per 1 s window over 20 windows: the sparsest keys see about 1 request a second
    Trace t = Trace.generate(Profile.MIXED, 100, 3, 200, 4, 20, SECOND, 5);
    long[] perKey = new long[t.keys];
    for (int k : t.key) {
      perKey[k]++;
    }
    int sparse = 0;
    int aboveLimit = 0;
    for (int k = 0; k < t.keys; k++) {
      double perWindow = perKey[k] / 20.0;
      if (perWindow <= 2) {
        sparse++; // mean gap of half a second or more
      }
      if (perWindow > 100) {
        aboveLimit++;
      }
    }
    assertThat(sparse).isGreaterThanOrEqualTo(10);
    assertThat(aboveLimit).isGreaterThanOrEqualTo(20);
    // the hot keys want 3x the limit
    for (int k = 0; k < Trace.mixedHotKeys(t.keys); k++) {
      assertThat(perKey[k] / 20.0).isBetween(270.0, 330.0);
    }
  }

  @Test
  void mixedHasKeysFirstSeenMidRunAndMidWindow() {
    int keys = 200;
    int windows = 8;
    Trace t = Trace.generate(Profile.MIXED, 100, 3, keys, 4, windows, SECOND, 42);
    long[] first = new long[keys];
    java.util.Arrays.fill(first, -1);
    long[] count = new long[keys];
    for (int i = 0; i < t.size(); i++) {
      if (first[t.key[i]] < 0) {
        first[t.key[i]] = t.at[i];
      }
      count[t.key[i]]++;
    }
    // keys with 50 requests or more that the trace first shows after its first window, away from a
    // window edge: a key that busy shows up at once unless it starts late
    int busyAndLate = 0;
    for (int k = 0; k < keys; k++) {
      long offset = first[k] % SECOND;
      if (first[k] >= SECOND && count[k] >= 50 && offset > SECOND / 10 && offset < SECOND * 9 / 10) {
        busyAndLate++;
      }
    }
    assertThat(busyAndLate).isGreaterThanOrEqualTo(3);
    // about a quarter of the 197 spread keys start late
    Trace.Mixed plan = Trace.Mixed.plan(keys, 3, windows * SECOND, new java.util.SplittableRandom(3));
    long late = java.util.Arrays.stream(plan.startNanos).filter(s -> s > 0).count();
    assertThat(late).isEqualTo(Trace.mixedLateKeys(keys - Trace.mixedHotKeys(keys))).isEqualTo(49);
  }

  @Test
  void aTraceTooLargeIsRefusedByName() {
    assertThatThrownBy(() -> Trace.generate(Profile.STEADY, 1_000_000_000L, 100, 1, 4, 3_600, SECOND, 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--limit");
  }
}
