package io.sluice.cli.tune;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class ComparisonTest {

  /** Two keys, three windows: cells are key * 3 + window. */
  static Measurement m(long[] attempts, long[] admitted, long storeCalls) {
    return replay(attempts, admitted, storeCalls, null);
  }

  /** A replay compared with {@code exact}; with null, a model (the reference). */
  static Measurement replay(long[] attempts, long[] admitted, long storeCalls, Measurement exact) {
    return new Measurement(new Setting(100, Duration.ofMillis(100)), "batched", 2, 3, attempts, admitted, 0, storeCalls,
        0, new Histogram(3), new Histogram(3), Double.NaN, exact);
  }

  @Test
  void overAndUnderPerKeyAndWindowInPercentOfTheLimit() {
    // key 0 is over its limit of 1000 in every window; key 1 stays far below
    Measurement exact = m(new long[] {2000, 2000, 2000, 10, 10, 10}, new long[] {1000, 1000, 1000, 10, 10, 10}, -1);
    Measurement s = replay(new long[] {2000, 2000, 2000, 10, 11, 9}, new long[] {1012, 995, 1000, 10, 11, 9}, 50,
        exact);
    Row r = Comparison.compare(s, exact, 1000);
    assertThat(r.overWorstPct()).isCloseTo(1.2, within(1e-9));
    assertThat(r.underWorstPct()).isCloseTo(0.5, within(1e-9));
    // only key 0's three windows reached the limit: key 1's one-request differences are window-edge noise
    assertThat(r.contestedWindows()).isEqualTo(3);
    assertThat(r.overMeanPct()).isCloseTo(1.2 / 3, within(1e-9));
    assertThat(r.underMeanPct()).isCloseTo(0.5 / 3, within(1e-9));
    assertThat(r.overByWindowPct()).containsExactly(1.2, 0, 0);
    assertThat(r.underByWindowPct()).containsExactly(0, 0.5, 0);
    assertThat(r.storeCallsPer1000()).isCloseTo(50 * 1000.0 / 6030, within(1e-9));
    assertThat(r.reference()).isFalse();
  }

  @Test
  void aDenialByTheSettingAloneMakesTheWindowCount() {
    Measurement exact = m(new long[] {500, 0, 0, 0, 0, 0}, new long[] {500, 0, 0, 0, 0, 0}, -1);
    Measurement s = replay(new long[] {500, 0, 0, 0, 0, 0}, new long[] {480, 0, 0, 0, 0, 0}, 10, exact);
    Row r = Comparison.compare(s, exact, 1000);
    assertThat(r.contestedWindows()).isEqualTo(1);
    assertThat(r.underWorstPct()).isCloseTo(2.0, within(1e-9));
    assertThat(r.overWorstPct()).isZero();
  }

  @Test
  void anExactRunOfOtherRequestsIsRefused() {
    Measurement exact = m(new long[] {500, 0, 0, 0, 0, 0}, new long[] {500, 0, 0, 0, 0, 0}, -1);
    Measurement s = replay(new long[] {499, 0, 0, 0, 0, 0}, new long[] {480, 0, 0, 0, 0, 0}, 10, exact);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Comparison.compare(s, exact, 1000))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void theReferenceAgainstItselfIsExactAndHasNoStore() {
    Measurement exact = m(new long[] {2000, 0, 0, 0, 0, 0}, new long[] {1000, 0, 0, 0, 0, 0}, -1);
    Row r = Comparison.compare(exact, exact, 1000);
    assertThat(r.reference()).isTrue();
    assertThat(r.worstErrorPct()).isZero();
    assertThat(r.storeCallsPer1000()).isNaN();
  }
}
