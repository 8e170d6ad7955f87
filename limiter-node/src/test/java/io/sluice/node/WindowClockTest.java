package io.sluice.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link WindowClock} answers {@code Math.floorDiv} for every time, however the clock moves. */
class WindowClockTest {

  @Test
  void answersTheDivisionForTimesThatMoveForwardBackAndJump() {
    SplittableRandom random = new SplittableRandom(17);
    for (long window : new long[] {1, 3, 1_000, 1_000_000_000L, 86_400_000_000_000L, Long.MAX_VALUE / 2}) {
      WindowClock clock = new WindowClock(window);
      long now = random.nextLong();
      for (int i = 0; i < 20_000; i++) {
        switch (random.nextInt(4)) {
          case 0 -> now += random.nextLong(Math.max(1, window / 3) + 1); // on in the same or the next window
          case 1 -> now -= random.nextLong(Math.max(1, window / 3) + 1); // a thread whose read was behind
          case 2 -> now = random.nextLong(); // anywhere, signs and overflow included
          default -> now = Math.floorDiv(now, window) * window + (random.nextBoolean() ? 0 : -1); // at an edge
        }
        assertThat(clock.index(now)).as("index of %d in windows of %d", now, window)
            .isEqualTo(Math.floorDiv(now, window));
        assertThat(clock.start(now)).as("start of %d in windows of %d", now, window)
            .isEqualTo(Math.floorDiv(now, window) * window);
      }
    }
  }

  @Test
  void answersAtTheEndsOfTheLongRange() {
    for (long window : new long[] {7, 1_000_000_000L}) {
      WindowClock clock = new WindowClock(window);
      for (long now : new long[] {Long.MIN_VALUE, Long.MIN_VALUE + 1, -1, 0, 1, Long.MAX_VALUE - 1, Long.MAX_VALUE,
          Long.MIN_VALUE + window, Long.MIN_VALUE}) {
        assertThat(clock.index(now)).as("index of %d", now).isEqualTo(Math.floorDiv(now, window));
      }
    }
  }

  @Test
  void refusesAnEmptyWindow() {
    assertThatThrownBy(() -> new WindowClock(0)).hasMessageContaining("window");
  }
}
