package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Found by {@code WindowProbe} (seed 45903, shrunk to 8 requests: one node, fixed window of 100 per 5 s,
 * batch 50, sync 10 ms, costs up to the limit; the same in seeds 40635, 42454, 44811, 45704, 47006). A
 * node alone on a key at its fixed window's limit denies with a retry-after of one sync interval, though
 * nothing can free a permit before the window ends: a client that honours {@code Retry-After} is denied
 * again and again.
 */
class RetryAfterAtTheLimitTest {

  /**
   * The shrunk case, replayed by the probe itself (its sync phase, its clock): requests of 19, 56, 50,
   * 41, 59, 92, 25 and 3 permits from 1,136 ms to 2,472 ms of a 5 s window, on one node; the node and the
   * exact algorithm admit 19, 56 and 25 (the key at 100 of 100) and deny the others. The last denial (3
   * permits at 2,472 ms) should say to retry when the window ends, in 2,528 ms, as the exact algorithm
   * does. On the code of 2026-12-02 it said 10 ms.
   */
  @Test
  void aDenialAtAFixedWindowsLimitSaysToRetryWhenTheWindowEnds() {
    WindowProbe.Case drawn = WindowProbe.Case.draw(45_903);
    long[][] requests = {{1_136_134, 19}, {1_790_195, 56}, {1_952_953, 50}, {1_997_834, 41}, {2_039_967, 59},
        {2_416_342, 92}, {2_441_118, 25}, {2_471_895, 3}};
    List<WindowProbe.Event> events = new ArrayList<>();
    for (long[] r : requests) { // (in the case's fourth window: 15 s after its start)
      events.add(WindowProbe.Event.request(WindowProbe.START + 15_000_000_000L + r[0] * 1_000, "k0", r[1],
          WindowProbe.ALTERNATE, false));
    }
    WindowProbe.Case c = new WindowProbe.Case(drawn.seed(), drawn.limit(), drawn.nodes(), drawn.reservation(),
        drawn.batch(), drawn.sync(), drawn.heartbeatAtStart(), List.copyOf(events), "seed 45903 shrunk");
    assertThat(c.toString()).contains("fixed 100 per PT5S, 1 node, approximate, batch 50, sync PT0.01S");
    WindowProbe.Result r = WindowProbe.run(c);
    assertThat(r.requests()).isEqualTo(8);
    assertThat(r.violations()).as("what the probe found in %s", c).isEmpty();
  }
}
