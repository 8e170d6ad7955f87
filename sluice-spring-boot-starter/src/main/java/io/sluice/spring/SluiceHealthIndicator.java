package io.sluice.spring;

import io.sluice.node.KeyedLimiter;
import io.sluice.node.RequestLimiter;
import io.sluice.sync.StoreBreaker;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.CounterStore;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/**
 * {@code /actuator/health}'s {@code sluice} component: whether the store answers (one heartbeat of this
 * node, as its limiters send every second; {@code DOWN} when it does not answer within the timeout),
 * the nodes alive as the store counts them, and for each limit its circuit breaker's state and the
 * nodes it divides its allowances by. While the store is down the limiters keep deciding by their
 * failure policy ({@code sluice.sync.on-store-failure}).
 */
public class SluiceHealthIndicator implements HealthIndicator {
  /** Longest the health check waits for the store. */
  static final Duration TIMEOUT = Duration.ofSeconds(1);

  private final CounterStore store;
  private final RequestLimiter limiter;

  public SluiceHealthIndicator(CounterStore store, RequestLimiter limiter) {
    this.store = store;
    this.limiter = limiter;
  }

  @Override
  public Health health() {
    List<SyncedLimiter> synced = SluiceAutoConfiguration.synced(limiter);
    Map<String, Object> limits = new LinkedHashMap<>();
    boolean breakerOpen = false;
    for (KeyedLimiter l : limiter.limiters()) {
      Map<String, Object> d = new LinkedHashMap<>();
      if (l instanceof SyncedLimiter s) {
        StoreBreaker.State state = s.storeBreaker().state();
        breakerOpen |= s.storeBreaker().keepsStoreOut();
        d.put("breaker", state.name());
        d.put("nodes", s.activeNodes());
        d.put("keys", s.keys());
      } else {
        d.put("in-process", true);
      }
      limits.put(l.limit().name(), d);
    }
    if (store == null || synced.isEmpty()) {
      return Health.up().withDetail("store", store == null ? "none" : store.getClass().getSimpleName())
          .withDetail("limits", limits).build();
    }
    SyncedLimiter first = synced.get(0);
    StoreFailurePolicy policy = first.config().onStoreFailure();
    Health.Builder health;
    try {
      Integer nodes = store.heartbeat(first.nodeId(), System.currentTimeMillis(),
              first.config().heartbeatInterval().multipliedBy(3))
          .toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      health = Health.up().withDetail("store", store.getClass().getSimpleName()).withDetail("reachable", true)
          .withDetail("nodes", nodes);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      health = unreachable(policy, "interrupted");
    } catch (ExecutionException e) {
      health = unreachable(policy, String.valueOf(e.getCause()));
    } catch (TimeoutException e) {
      health = unreachable(policy, "no answer within " + TIMEOUT.toMillis() + " ms");
    } catch (RuntimeException e) {
      health = unreachable(policy, e.toString());
    }
    return health.withDetail("breakerOpen", breakerOpen).withDetail("limits", limits).build();
  }

  /**
   * The store does not answer: DOWN only where the limiters then deny everything (FAIL_CLOSED). Under
   * LOCAL_SHARE or FAIL_OPEN the application goes on serving, decided by its failure policy, and a DOWN
   * here would turn the root health into a 503 that takes every instance out of its load balancer at
   * once, over the very outage the policy absorbs: UP, with the store unreachable in the details (as
   * the sidecar's /health answers DEGRADED with a 200).
   */
  private Health.Builder unreachable(StoreFailurePolicy policy, String error) {
    Health.Builder b = policy == StoreFailurePolicy.FAIL_CLOSED ? Health.down() : Health.up();
    return b.withDetail("store", store.getClass().getSimpleName()).withDetail("reachable", false)
        .withDetail("error", error).withDetail("onStoreFailure", policy.name());
  }
}
