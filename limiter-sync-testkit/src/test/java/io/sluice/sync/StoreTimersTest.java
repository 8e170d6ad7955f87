package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The histogram timers of {@link SyncedLimiterMetrics} ({@code sluice.sync.store.calls.duration},
 * {@code sluice.sync.decisions.waited}): one per limit, counting every store call and every decision
 * that waited for the store, with the buckets a p99 is computed from in a Prometheus scrape.
 */
class StoreTimersTest {
  private final ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
  private final MemoryStore store = new MemoryStore();
  /** Exact mode: every decision is a store call it waits for. */
  private final SyncedLimiter exact = SyncedLimiter.builder(Limit.fixedWindow("exact").limit(100)
      .window(Duration.ofMinutes(1)).build(), store).nodeId("a").ticker(ticker).autoSync(false)
      .activeNodes(() -> 1).batchSize(1).build();
  /** The approximate mode: a cold key's first decision waits for its claim (without the node's allowance). */
  private final SyncedLimiter claims = SyncedLimiter.builder(Limit.fixedWindow("claims").limit(1_000)
      .window(Duration.ofMinutes(1)).build(), store).nodeId("a").ticker(ticker).autoSync(false)
      .activeNodes(() -> 1).batchSize(50).coldKeyAllowance(false).build();

  @AfterEach
  void close() {
    exact.close();
    claims.close();
  }

  @Test
  void everyStoreCallAndEveryWaitIsTimedPerLimitWithBuckets() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new SyncedLimiterMetrics(List.of(exact, claims)).bindTo(registry);
    for (int i = 0; i < 7; i++) {
      assertThat(exact.tryAcquire("k")).isTrue();
    }
    for (int i = 0; i < 3; i++) {
      assertThat(claims.tryAcquire("cold-" + i)).isTrue();
    }
    claims.syncNow(); // (a flush, when the claims left anything to send, is a store call too)

    assertThat(exact.waitedDecisions()).isEqualTo(7);
    assertThat(claims.waitedDecisions()).as("one claim call per cold key").isEqualTo(3);
    for (SyncedLimiter l : List.of(exact, claims)) {
      String limit = l.limit().name();
      Timer waits = registry.get("sluice.sync.decisions.waited").tag("limit", limit).timer();
      assertThat(waits.count()).as(limit).isEqualTo(l.waitedDecisions());
      assertThat(waits.totalTime(TimeUnit.NANOSECONDS)).as(limit).isEqualTo((double) l.waitedNanos());
      Timer calls = registry.get("sluice.sync.store.calls.duration").tag("limit", limit).timer();
      assertThat(calls.count()).as(limit).isEqualTo(l.storeCalls()).isPositive();
      assertThat(calls.count()).as("the function timer counts the same calls")
          .isEqualTo((long) registry.get("sluice.sync.store.latency").tag("limit", limit).functionTimer().count());
    }

    String scrape = registry.scrape();
    for (String limit : List.of("exact", "claims")) {
      assertThat(scrape)
          .containsPattern("(?m)^sluice_sync_store_calls_duration_seconds_bucket\\{limit=\"" + limit + "\",le=\"[^\"]+\"} ")
          .containsPattern("(?m)^sluice_sync_decisions_waited_seconds_bucket\\{limit=\"" + limit + "\",le=\"[^\"]+\"} ")
          .containsPattern("(?m)^sluice_sync_decisions_waited_seconds_count\\{limit=\"" + limit + "\"} ")
          // the meters that were there before are there still, under their names
          .containsPattern("(?m)^sluice_sync_store_calls_total\\{limit=\"" + limit + "\"} ")
          .containsPattern("(?m)^sluice_sync_store_latency_seconds_count\\{limit=\"" + limit + "\"} ");
    }
    assertThat(scrape).containsPattern("(?m)^sluice_sync_decisions_waited_seconds_count\\{limit=\"exact\"} 7(\\.0)?$");
  }

  @Test
  void aLimiterBoundToTwoRegistriesRecordsInEachOnceAndAnUnboundOneInNone() {
    for (int i = 0; i < 2; i++) {
      exact.tryAcquire("k"); // before any binding: counted by the limiter, recorded nowhere
    }
    SimpleMeterRegistry first = new SimpleMeterRegistry();
    SimpleMeterRegistry second = new SimpleMeterRegistry();
    SyncedLimiterMetrics.of(exact).bindTo(first);
    SyncedLimiterMetrics.of(exact).bindTo(first); // the same timers again: not counted twice
    SyncedLimiterMetrics.of(exact).bindTo(second);
    for (int i = 0; i < 5; i++) {
      exact.tryAcquire("k");
    }
    assertThat(exact.waitedDecisions()).isEqualTo(7);
    for (SimpleMeterRegistry r : List.of(first, second)) {
      assertThat(r.get("sluice.sync.decisions.waited").tag("limit", "exact").timer().count()).isEqualTo(5);
      assertThat(r.get("sluice.sync.store.calls.duration").tag("limit", "exact").timer().count()).isEqualTo(5);
    }
  }
}
