package io.sluice.cli.tune;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The exact reference of a wall-clock replay ({@link Simulation#exactAt}) against requests decided across a window's edge. */
class ExactAtTest {
  private static final long SECOND = 1_000_000_000L;

  @Test
  void aRequestDecidedAfterOneOfTheNextWindowIsCountedInItsOwnWindow() {
    // one key, one permit a window: node 1 decides a request at 1.001 s (window 1) first, then node 2
    // one it read the clock for at 0.999 s (window 0). Decided in that order, the exact limiter counted
    // the second in window 1 (it does not turn back) and denied it there, while the replay counts it in
    // window 0: window 0 showed 0 admitted by the exact algorithm, and a node that admitted its one
    // permit there a permit "over" it
    Limit limit = Limit.fixedWindow("edge").limit(1).window(Duration.ofSeconds(1)).build();
    Trace trace = Trace.generate(Profile.STEADY, 1, 4, 1, 2, 2, SECOND, 1);
    assertThat(trace.key.length).isGreaterThanOrEqualTo(2);
    Simulation sim = new Simulation(trace, limit, 0);
    long[] when = new long[trace.key.length];
    Arrays.fill(when, Simulation.NOT_DECIDED);
    int[] done = new int[trace.key.length];
    int[] cell = new int[trace.key.length];
    Arrays.fill(cell, -1);
    when[0] = SECOND + 1_000_000; // window 1, decided first
    done[0] = 0;
    cell[0] = trace.key[0] * trace.windows + 1;
    when[1] = SECOND - 1_000_000; // window 0, decided second
    done[1] = 1;
    cell[1] = trace.key[1] * trace.windows;

    Measurement exact = sim.exactAt(when, done, cell, new Setting(1, Duration.ZERO), "exact");

    assertThat(exact.outcome[1]).as("the request of window 0").isEqualTo(Measurement.ADMITTED);
    assertThat(exact.outcome[0]).as("the request of window 1").isEqualTo(Measurement.ADMITTED);
    assertThat(exact.admitted[cell[1]]).isEqualTo(1);
    assertThat(exact.admitted[cell[0]]).isEqualTo(1);
  }
}
