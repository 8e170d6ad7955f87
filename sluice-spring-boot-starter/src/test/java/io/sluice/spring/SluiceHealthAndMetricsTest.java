package io.sluice.spring;

import static io.sluice.spring.SluiceAutoConfigurationTest.API_5_PER_MINUTE;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.sluice.node.RequestContext;
import io.sluice.node.RequestLimiter;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The health indicator, the Micrometer binders, and what closing the context does. */
class SluiceHealthAndMetricsTest {
  final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class, HealthContributorAutoConfiguration.class))
      .withPropertyValues(API_5_PER_MINUTE);

  @Test
  void healthIsUpWithTheStoreTheNodesAndEachLimitsBreaker() {
    runner.withBean(CounterStore.class, MemoryStore::new).withPropertyValues("sluice.sync.node-id=web-1")
        .run(context -> {
          assertThat(context).hasNotFailed();
          Health health = context.getBean("sluiceHealthIndicator", SluiceHealthIndicator.class).health();
          assertThat(health.getStatus()).isEqualTo(Status.UP);
          assertThat(health.getDetails()).containsEntry("store", "MemoryStore").containsEntry("reachable", true)
              .containsEntry("nodes", 1).containsEntry("breakerOpen", false);
          @SuppressWarnings("unchecked")
          Map<String, Map<String, Object>> limits = (Map<String, Map<String, Object>>) health.getDetails().get("limits");
          assertThat(limits.get("api")).containsEntry("breaker", "CLOSED").containsEntry("nodes", 1);
          // an open breaker shows
          SyncedLimiter api = (SyncedLimiter) context.getBean(RequestLimiter.class).limiters().iterator().next();
          api.storeBreaker().forceOpen();
          Health open = context.getBean(SluiceHealthIndicator.class).health();
          assertThat(open.getDetails()).containsEntry("breakerOpen", true);
          @SuppressWarnings("unchecked")
          Map<String, Map<String, Object>> openLimits = (Map<String, Map<String, Object>>) open.getDetails().get("limits");
          assertThat(openLimits.get("api")).containsEntry("breaker", "FORCED_OPEN");
        });
  }

  @Test
  void healthIsDownWhenTheStoreFailsOrDoesNotAnswerAndTheLimitersThenDenyEverything() {
    runner.withPropertyValues("sluice.sync.on-store-failure=fail-closed").withBean(CounterStore.class, () -> new DelegatingStore() {
      @Override
      public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
        return CompletableFuture.failedFuture(new IllegalStateException("connection refused"));
      }
    }).run(context -> {
      Health health = context.getBean(SluiceHealthIndicator.class).health();
      assertThat(health.getStatus()).isEqualTo(Status.DOWN);
      assertThat(health.getDetails()).containsEntry("reachable", false);
      assertThat((String) health.getDetails().get("error")).contains("connection refused");
    });
    runner.withPropertyValues("sluice.sync.on-store-failure=fail-closed").withBean(CounterStore.class, () -> new DelegatingStore() {
      @Override
      public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
        return new CompletableFuture<>(); // never answers
      }
    }).run(context -> {
      Health health = context.getBean(SluiceHealthIndicator.class).health();
      assertThat(health.getStatus()).isEqualTo(Status.DOWN);
      assertThat(health.getDetails()).containsEntry("error", "no answer within 1000 ms");
    });
  }

  /**
   * Under a failure policy that keeps serving (LOCAL_SHARE, the default, or FAIL_OPEN) an unreachable
   * store leaves the component UP, with the store unreachable in its details: a DOWN would make the root
   * health a 503 and take every instance out of its load balancer over the outage the policy absorbs.
   */
  @Test
  void healthStaysUpWithTheStoreUnreachableWhenTheLimitersKeepDeciding() {
    runner.withBean(CounterStore.class, () -> new DelegatingStore() {
      @Override
      public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
        return CompletableFuture.failedFuture(new IllegalStateException("connection refused"));
      }
    }).run(context -> {
      Health health = context.getBean(SluiceHealthIndicator.class).health();
      assertThat(health.getStatus()).isEqualTo(Status.UP);
      assertThat(health.getDetails()).containsEntry("reachable", false).containsEntry("onStoreFailure", "LOCAL_SHARE");
      assertThat((String) health.getDetails().get("error")).contains("connection refused");
    });
  }

  @Test
  void withoutActuatorThereIsNoHealthIndicatorAndNoBinder() {
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
        .withPropertyValues(API_5_PER_MINUTE).withBean(CounterStore.class, MemoryStore::new)
        .withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate")).run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).hasSingleBean(RequestLimiter.class);
          assertThat(context).doesNotHaveBean("sluiceHealthIndicator");
        });
  }

  @Test
  void theHealthIndicatorCanBeTurnedOff() {
    runner.withBean(CounterStore.class, MemoryStore::new).withPropertyValues("management.health.sluice.enabled=false")
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(SluiceHealthIndicator.class);
        });
  }

  @Test
  void theBindersAreBoundWhenThereIsAMeterRegistry() {
    runner.withBean(CounterStore.class, MemoryStore::new)
        .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
            CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
        .run(context -> {
          assertThat(context).hasNotFailed();
          MeterRegistry registry = context.getBean(MeterRegistry.class);
          context.getBean(RequestLimiter.class).check(RequestContext.builder().identity("api-key", "k").build());
          assertThat(registry.get("sluice.decisions").tag("limit", "api").tag("result", "allowed").functionCounter()
              .count()).isEqualTo(1.0);
          assertThat(registry.find("sluice.sync.store.calls").tag("limit", "api").functionCounter()).isNotNull();
        });
    runner.withBean(CounterStore.class, MemoryStore::new).run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(context).doesNotHaveBean(MeterBinder.class);
    });
  }

  @Test
  void closingTheContextFlushesTheLimitersBeforeTheStoreCloses() {
    List<String> events = Collections.synchronizedList(new ArrayList<>());
    DelegatingStore store = new DelegatingStore() {
      @Override
      public CompletionStage<io.sluice.sync.spi.FlushResult> flush(io.sluice.sync.spi.Batch batch) {
        events.add("flush");
        return super.flush(batch);
      }

      @Override
      public void close() {
        events.add("close");
        super.close();
      }
    };
    long window = System.currentTimeMillis() / Duration.ofHours(1).toMillis();
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
        .withPropertyValues("sluice.limits.api.limit=1000", "sluice.limits.api.window=1h",
            "sluice.rules.always=api by api-key", "sluice.sync.sync-interval=20m")
        .withBean(CounterStore.class, () -> store)
        .run(context -> {
          RequestLimiter limiter = context.getBean(RequestLimiter.class);
          RequestContext request = RequestContext.builder().identity("api-key", "k1").build();
          for (int i = 0; i < 3; i++) {
            assertThat(limiter.check(request).allowed()).isTrue();
          }
          SyncedLimiter api = (SyncedLimiter) limiter.limiters().iterator().next();
          assertThat(api.pending()).as("admitted, not yet flushed").isPositive();
          events.clear();
          context.close();
          assertThat(api.pending()).isZero();
        });
    long after = System.currentTimeMillis() / Duration.ofHours(1).toMillis();
    long stored = 0;
    for (long w = window; w <= after; w++) {
      stored += store.memory.count("api", "k1", w);
    }
    assertThat(stored).isEqualTo(3);
    assertThat(events).contains("flush").endsWith("close");
    assertThat(events.indexOf("close")).isEqualTo(events.size() - 1);
  }
}
