package io.sluice.cli.tune;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class ComparisonTest {

  /**
   * A hand-made trace: requests added one by one with their key, window (-1: decided after the last
   * window) and the decision of the exact algorithm and of the setting. Builds the exact run and the
   * setting's replay as the harness does: one cell array shared by both, counts per cell from it.
   */
  static final class Hand {
    final int keys;
    final int windows;
    private final List<int[]> requests = new ArrayList<>();

    Hand(int keys, int windows) {
      this.keys = keys;
      this.windows = windows;
    }

    /** {@code times} requests of key in window, decided so by the exact algorithm and by the setting. */
    Hand add(int key, int window, boolean exactAdmits, boolean settingAdmits, int times) {
      for (int i = 0; i < times; i++) {
        requests.add(new int[] {key, window, exactAdmits ? 1 : 0, settingAdmits ? 1 : 0});
      }
      return this;
    }

    /** The exact run (a model: compared with itself it is the reference). */
    Measurement exact() {
      return measurement(2, -1, null);
    }

    /** The setting's replay, compared with {@link #exact()}. */
    Measurement setting(long storeCalls) {
      return measurement(3, storeCalls, exact());
    }

    private Measurement measurement(int decisionColumn, long storeCalls, Measurement exact) {
      int n = requests.size();
      int[] cell = exact != null ? exact.cell : new int[n];
      byte[] outcome = new byte[n];
      long[] attempts = new long[keys * windows];
      long[] admitted = new long[keys * windows];
      long late = 0;
      for (int i = 0; i < n; i++) {
        int[] r = requests.get(i);
        cell[i] = r[1] < 0 ? Measurement.late(r[0]) : r[0] * windows + r[1];
        boolean ok = r[decisionColumn] == 1;
        outcome[i] = ok ? Measurement.ADMITTED : Measurement.DENIED;
        if (cell[i] < 0) {
          late++;
        } else {
          attempts[cell[i]]++;
          if (ok) {
            admitted[cell[i]]++;
          }
        }
      }
      return new Measurement(new Setting(100, Duration.ofMillis(100)), exact == null ? Simulation.MODEL_MODE : "batched",
          keys, windows, attempts, admitted, late, storeCalls, 0, new Histogram(3), new Histogram(3), Double.NaN, exact,
          outcome, cell, Double.NaN);
    }
  }

  @Test
  void overAndUnderPerKeyAndWindowInPercentOfTheLimit() {
    // key 0 is over its limit of 1000 in every window; key 1 stays far below and is admitted by both
    Hand h = new Hand(2, 3)
        // window 0: the setting admits 12 that the exact algorithm denied
        .add(0, 0, true, true, 1000).add(0, 0, false, true, 12).add(0, 0, false, false, 988)
        // window 1: the setting denies 5 that the exact algorithm admitted
        .add(0, 1, true, true, 995).add(0, 1, true, false, 5).add(0, 1, false, false, 1000)
        .add(0, 2, true, true, 1000).add(0, 2, false, false, 1000)
        .add(1, 0, true, true, 10).add(1, 1, true, true, 10).add(1, 2, true, true, 10);
    Row r = Comparison.compare(h.setting(50), h.exact(), 1000, true);
    assertThat(r.overWorstPct()).isCloseTo(1.2, within(1e-9));
    assertThat(r.underWorstPct()).isCloseTo(0.5, within(1e-9));
    // only key 0's three windows reached the limit
    assertThat(r.contestedWindows()).isEqualTo(3);
    assertThat(r.overMeanPct()).isCloseTo(1.2 / 3, within(1e-9));
    assertThat(r.underMeanPct()).isCloseTo(0.5 / 3, within(1e-9));
    assertThat(r.overByWindowPct()).containsExactly(1.2, 0, 0);
    assertThat(r.underByWindowPct()).containsExactly(0, 0.5, 0);
    assertThat(r.storeCallsPer1000()).isCloseTo(50 * 1000.0 / 6030, within(1e-9));
    assertThat(r.reference()).isFalse();
    // request by request: the 5 of window 1, none of them below half the limit (key 0 wants 2x)
    assertThat(r.falseDenials()).isEqualTo(5);
    assertThat(r.falseDenialsPct()).isCloseTo(100.0 * 5 / 6030, within(1e-9));
    assertThat(r.falseDenialsBelowHalf()).isZero();
    // key 1's three windows are below half the limit (and so are the windows before them)
    assertThat(r.keyWindowsBelowHalf()).isEqualTo(3);
    assertThat(r.exactAdmitted()).isEqualTo(3030);
    assertThat(r.admitted()).isEqualTo(3030 + 12 - 5);
    assertThat(r.admittedPctOfExact()).isCloseTo(100.0 * 3037 / 3030, within(1e-9));
  }

  @Test
  void aSettingThatDeniesAKeyBelowHalfItsLimitShowsFalseDenialsAndFailsTheGate() {
    // the hot-key case: key 0 at its limit decided perfectly, key 1 (40 requests a window, limit 1000) denied 8
    // times in window 0. Under-admission sees 0.8% of the limit there, within --max-error 1: the old gate passed it
    Hand h = new Hand(2, 2)
        .add(0, 0, true, true, 1000).add(0, 0, false, false, 1000)
        .add(0, 1, true, true, 1000).add(0, 1, false, false, 1000)
        .add(1, 0, true, true, 32).add(1, 0, true, false, 8)
        .add(1, 1, true, true, 40);
    Row r = Comparison.compare(h.setting(20), h.exact(), 1000, true);
    assertThat(r.overWorstPct()).isZero();
    assertThat(r.underWorstPct()).isCloseTo(0.8, within(1e-9));
    assertThat(r.falseDenials()).isEqualTo(8);
    assertThat(r.falseDenialsBelowHalf()).isEqualTo(8);
    assertThat(r.falseDenialsPct()).isCloseTo(100.0 * 8 / 4080, within(1e-9));
    assertThat(r.admittedPctOfExact()).isCloseTo(100.0 * 2072 / 2080, within(1e-9));
    assertThat(Recommender.failures(r, 1.0, 1.0)).singleElement().asString()
        .contains("8 false denials in key-windows below half the limit");
    assertThat(Recommender.recommend(List.of(r), 1.0, 1.0).row()).isNull();
  }

  @Test
  void aPerfectSettingShowsNoFalseDenialsAndAllOfTheExactAdmissions() {
    Hand h = new Hand(3, 2)
        .add(0, 0, true, true, 100).add(0, 0, false, false, 50)
        .add(0, 1, true, true, 100).add(0, 1, false, false, 120)
        .add(1, 0, true, true, 3).add(2, 1, true, true, 60).add(1, -1, true, true, 2);
    Row r = Comparison.compare(h.setting(5), h.exact(), 100, true);
    assertThat(r.falseDenials()).isZero();
    assertThat(r.falseDenialsPct()).isZero();
    assertThat(r.falseDenialsBelowHalf()).isZero();
    assertThat(r.admittedPctOfExact()).isEqualTo(100.0);
    assertThat(r.overWorstPct()).isZero();
    assertThat(r.underWorstPct()).isZero();
    assertThat(Recommender.passes(r, 1.0, 0.1)).isTrue();
  }

  @Test
  void aDenialMadeUpForInTheSameKeyWindowIsASwapNotAFalseDenial() {
    // the setting denies 3 early requests the exact algorithm admitted and admits 3 later ones it denied:
    // the same count in the window (no over- or under-admission), 100% of the exact admissions
    Hand h = new Hand(1, 1)
        .add(0, 0, true, false, 3).add(0, 0, true, true, 97).add(0, 0, false, true, 3).add(0, 0, false, false, 20);
    Row r = Comparison.compare(h.setting(5), h.exact(), 100, false);
    assertThat(r.overWorstPct()).isZero();
    assertThat(r.underWorstPct()).isZero();
    assertThat(r.admittedPctOfExact()).isEqualTo(100.0);
    assertThat(r.falseDenials()).isZero();
    assertThat(r.swapped()).isEqualTo(3);
    assertThat(r.swappedPct()).isCloseTo(100.0 * 3 / 123, within(1e-9));
    assertThat(Recommender.passes(r, 1.0, 0.1)).isTrue();
  }

  @Test
  void onlyTheDenialsBeyondTheSwapsAreFalseDenials() {
    // 5 denied that the exact algorithm admitted, 2 admitted that it denied: 2 swaps, 3 false denials
    Hand h = new Hand(1, 1)
        .add(0, 0, true, false, 5).add(0, 0, true, true, 95).add(0, 0, false, true, 2).add(0, 0, false, false, 98);
    Row r = Comparison.compare(h.setting(5), h.exact(), 100, false);
    assertThat(r.falseDenials()).isEqualTo(3);
    assertThat(r.swapped()).isEqualTo(2);
    assertThat(r.underWorstPct()).isCloseTo(3.0, within(1e-9));
    assertThat(r.admittedPctOfExact()).isCloseTo(97.0, within(1e-9));
  }

  @Test
  void aDenialIsNotMadeUpForByAnAdmissionOfAnotherKeyOrWindow() {
    Hand h = new Hand(2, 2)
        .add(0, 0, true, true, 99).add(0, 0, true, false, 1).add(0, 0, false, false, 50)
        .add(0, 1, true, true, 100).add(0, 1, false, true, 1).add(0, 1, false, false, 49)
        .add(1, 0, true, true, 100).add(1, 0, false, true, 1).add(1, 0, false, false, 49);
    Row r = Comparison.compare(h.setting(5), h.exact(), 100, false);
    assertThat(r.falseDenials()).isEqualTo(1);
    assertThat(r.swapped()).isZero();
    assertThat(r.overWorstPct()).isCloseTo(1.0, within(1e-9));
    assertThat(r.underWorstPct()).isCloseTo(1.0, within(1e-9));
  }

  @Test
  void belowHalfLooksAtTheWindowBeforeForASlidingWindowOnly() {
    // 80 requests (limit 100) in window 0, 20 in window 1 of which one falsely denied
    Hand h = new Hand(1, 2).add(0, 0, true, true, 80).add(0, 1, true, true, 19).add(0, 1, true, false, 1);
    // sliding: window 1 still weighs in the 80 of window 0, so the exact count may be near the limit there
    Row sliding = Comparison.compare(h.setting(5), h.exact(), 100, true);
    assertThat(sliding.falseDenials()).isEqualTo(1);
    assertThat(sliding.falseDenialsBelowHalf()).isZero();
    assertThat(sliding.keyWindowsBelowHalf()).isZero();
    // fixed: window 1 starts from zero
    Row fixed = Comparison.compare(h.setting(5), h.exact(), 100, false);
    assertThat(fixed.falseDenialsBelowHalf()).isEqualTo(1);
    assertThat(fixed.keyWindowsBelowHalf()).isEqualTo(1);
    // exactly half the limit is not below half
    assertThat(Comparison.belowHalf(new long[] {50}, 0, 1, 100, false)).isFalse();
    assertThat(Comparison.belowHalf(new long[] {49}, 0, 1, 100, false)).isTrue();
    assertThat(Comparison.belowHalf(new long[] {49}, 0, 1, 98, false)).isFalse();
  }

  @Test
  void lateRequestsAreComparedPerKeyInNoWindow() {
    // decided after the last window (the replay fell behind): key 0 one false denial, key 1 one swap
    Hand h = new Hand(2, 1).add(0, 0, true, true, 10).add(0, -1, true, false, 1)
        .add(1, -1, true, false, 1).add(1, -1, false, true, 1);
    Row r = Comparison.compare(h.setting(5), h.exact(), 100, false);
    assertThat(r.decisions()).isEqualTo(13);
    assertThat(r.falseDenials()).isEqualTo(1);
    assertThat(r.swapped()).isEqualTo(1);
    assertThat(r.falseDenialsBelowHalf()).isZero();
    assertThat(r.admittedPctOfExact()).isCloseTo(100.0 * 11 / 12, within(1e-9));
  }

  @Test
  void anExactRunOfOtherRequestsIsRefused() {
    Measurement exact = new Hand(1, 1).add(0, 0, true, true, 500).exact();
    Measurement s = new Hand(1, 1).add(0, 0, true, true, 480).add(0, 0, true, false, 19).setting(10);
    assertThatThrownBy(() -> Comparison.compare(s, exact, 1000, true)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void theReferenceAgainstItselfIsExactAndHasNoStore() {
    Measurement exact = new Hand(2, 3).add(0, 0, true, true, 1000).add(0, 0, false, false, 1000).exact();
    Row r = Comparison.compare(exact, exact, 1000, true);
    assertThat(r.reference()).isTrue();
    assertThat(r.worstErrorPct()).isZero();
    assertThat(r.falseDenials()).isZero();
    assertThat(r.admittedPctOfExact()).isEqualTo(100.0);
    assertThat(r.storeCallsPer1000()).isNaN();
  }
}
