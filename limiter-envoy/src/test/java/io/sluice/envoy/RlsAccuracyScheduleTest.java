package io.sluice.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The calls {@link RlsAccuracyMain} sends in a window (benchmarks/run-envoy.sh's accuracy runs). */
class RlsAccuracyScheduleTest {
  @Test
  void uniformSendsEveryDescriptorTheSameNumberOfCallsAtTheSameInstants() {
    int[] s = RlsAccuracyMain.schedule(50, 200, false);
    assertThat(s).hasSize(10_000);
    int[] perValue = new int[50];
    for (int v : s) {
      perValue[v]++;
    }
    assertThat(perValue).containsOnly(200);
    // one instant's calls are the 50 descriptors in order
    assertThat(Arrays.copyOfRange(s, 50, 100)).isEqualTo(java.util.stream.IntStream.range(0, 50).toArray());
  }

  @Test
  void zipfSendsTheHottestAboutTheRateAndMostDescriptorsFarBelowIt() {
    int[] s = RlsAccuracyMain.schedule(1_000, 200, true);
    assertThat(s).isEqualTo(RlsAccuracyMain.schedule(1_000, 200, true)); // seeded: both servers get the same calls
    double weights = 0;
    for (int v = 1; v <= 1_000; v++) {
      weights += Math.pow(v, -1.1);
    }
    assertThat(s).hasSize((int) Math.round(200 * weights));
    int[] perValue = new int[1_000];
    for (int v : s) {
      assertThat(v).isBetween(0, 999);
      perValue[v]++;
    }
    assertThat(perValue[0]).isBetween(160, 240); // the hottest at about twice a limit of 100
    assertThat(Arrays.stream(perValue).filter(c -> c <= 5).count()).isGreaterThan(900); // most far below it
  }
}
