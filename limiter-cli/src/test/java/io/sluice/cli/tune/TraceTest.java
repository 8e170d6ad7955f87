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

  @Test
  void aTraceTooLargeIsRefusedByName() {
    assertThatThrownBy(() -> Trace.generate(Profile.STEADY, 1_000_000_000L, 100, 1, 4, 3_600, SECOND, 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--limit");
  }
}
