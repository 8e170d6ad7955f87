package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Found by {@code WindowProbe} (2026-12-06, seeds from 600,000: 1,422 of about 48,000 cases threw): a
 * permit admitted under the node's allowance and given back ({@link SyncedLimiter#release}) before a sync
 * sent it left the view's count of allowed permits not sent above its count of permits not sent, and
 * the next sync threw building its delta ("allowed: must be between 0 and the amount 0, got 1"): the
 * flusher's whole sync failed, for every key, at every sync from then on.
 */
class AllowanceReleaseTest {

  @Test
  void aPermitAdmittedUnderTheAllowanceAndGivenBackBeforeItWasSentLeavesTheSyncWhole() {
    Limit limit = Limit.fixedWindow("api").limit(100).window(Duration.ofSeconds(1)).build();
    try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), false)) {
      sim.startNode();
      sim.startNode();
      sim.at(3_100 * ProbeSim.MS); // (allowances from two heartbeats after the nodes joined)
      long callsBefore = sim.node(0).storeCalls();
      assertThat(sim.acquire(0, "cold", 1)).isTrue();
      assertThat(sim.node(0).storeCalls()).as("admitted under the allowance, no store call").isEqualTo(callsBefore);
      sim.releaseLast(0, "cold", 1);
      sim.at(3_350 * ProbeSim.MS); // (two regular syncs)
      assertThat(sim.acquire(0, "cold", 1)).isTrue();
      assertThat(sim.acquire(1, "other", 1)).isTrue();
      sim.at(3_550 * ProbeSim.MS);
      assertThat(sim.node(0).storeFailures()).isZero();
      assertThat(sim.store.count("api", "cold", sim.window())).isEqualTo(1);
      assertThat(sim.store.count("api", "other", sim.window())).isEqualTo(1);
    }
  }
}
