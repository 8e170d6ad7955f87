package io.sluice.sync.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class FlusherCadenceTest {
  private static final long INTERVAL = 100_000_000L;

  @Test
  void aSyncAskedForBeforeTheRegularOneDoesNotPutItOff() {
    long due = 5 * INTERVAL;
    // (parking a whole interval after every sync made this 4.5 intervals + 1 interval: 550 ms)
    assertThat(Flusher.nextRegularSync(due, due - INTERVAL / 2, INTERVAL)).isEqualTo(due);
    assertThat(Flusher.nextRegularSync(due, due - 1, INTERVAL)).isEqualTo(due);
  }

  @Test
  void theRegularSyncIsDueOneIntervalOnFromItsOwnPoint() {
    long due = 5 * INTERVAL;
    assertThat(Flusher.nextRegularSync(due, due, INTERVAL)).isEqualTo(due + INTERVAL);
    // woken a little late, it keeps its points rather than drifting by the delay
    assertThat(Flusher.nextRegularSync(due, due + 3_000_000L, INTERVAL)).isEqualTo(due + INTERVAL);
  }

  @Test
  void aSyncThatRanLongSkipsThePointsItMissed() {
    long due = 5 * INTERVAL;
    assertThat(Flusher.nextRegularSync(due, due + 2 * INTERVAL + 1, INTERVAL)).isEqualTo(due + 3 * INTERVAL);
    assertThat(Flusher.nextRegularSync(due, due + 2 * INTERVAL, INTERVAL)).isEqualTo(due + 3 * INTERVAL);
  }

  @Test
  void theCadenceHoldsAcrossTheNanoTimeWrap() {
    long due = Long.MAX_VALUE - INTERVAL / 2;
    assertThat(Flusher.nextRegularSync(due, due - 10, INTERVAL)).isEqualTo(due);
    assertThat(Flusher.nextRegularSync(due, due + INTERVAL / 4, INTERVAL)).isEqualTo(due + INTERVAL);
  }
}
