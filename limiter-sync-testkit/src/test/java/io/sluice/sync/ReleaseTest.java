package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.node.RequestContext;
import io.sluice.node.RequestLimiter;
import io.sluice.node.Rule;
import io.sluice.node.Rules;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a {@link SyncedLimiter} does as a {@link io.sluice.node.KeyedLimiter} under a request limiter's
 * rules. Permits given back ({@link SyncedLimiter#release}): a request that one limit denies costs the other
 * limits nothing, also when they are shared across nodes. Permits not sent yet are not sent; permits
 * the store counted already pay for the node's next admissions of the key in the window.
 */
class ReleaseTest {
  private static final Duration MINUTE = Duration.ofMinutes(1);
  private final ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());

  @Test
  void givenBackPermitsAreNeitherCountedNorLost() {
    Limit limit = Limit.fixedWindow("api").limit(10).window(MINUTE).build();
    MemoryStore store = new MemoryStore();
    long w = Math.floorDiv(ticker.read(), MINUTE.toNanos());
    try (SyncedLimiter node = node(limit, store, "n")) {
      // a cold key's first decision is a take: the store counts it at once
      io.sluice.node.Decision first = node.acquire("k");
      assertThat(first.allowed()).isTrue();
      assertThat(first.window()).isEqualTo(w);
      assertThat(store.count("api", "k", w)).isEqualTo(1);
      node.release("k", 1, first);
      // the next admission uses the permit the store already counted
      assertThat(node.tryAcquire("k")).isTrue();
      node.flushAll();
      assertThat(store.count("api", "k", w)).isEqualTo(1);
      // more admissions (takes, or under a claim and not sent yet), two of them given back
      io.sluice.node.Decision last = null;
      for (int i = 0; i < 4; i++) {
        last = node.acquire("k");
        assertThat(last.allowed()).isTrue();
      }
      node.release("k", 1, last);
      node.release("k", 1, last);
      node.flushAll();
      assertThat(store.count("api", "k", w)).isBetween(3L, 5L);
      // the limit counts what was kept (3): 7 more fit, not 5, and the store ends at the limit
      int more = 0;
      while (node.tryAcquire("k")) {
        more++;
      }
      assertThat(more).isEqualTo(7);
      node.flushAll();
      assertThat(store.count("api", "k", w)).isEqualTo(10);
    }
  }

  @Test
  void aDenialByOneSharedLimitCostsTheOthersNothing() {
    Rules rules = Rules.builder()
        .always(Rule.of(Limit.fixedWindow("per-ip").limit(10).window(MINUTE).build(), "ip"),
            Rule.of(Limit.fixedWindow("per-key").limit(2).window(MINUTE).build(), "api-key"))
        .build();
    MemoryStore store = new MemoryStore();
    long w = Math.floorDiv(ticker.read(), MINUTE.toNanos());
    List<RequestLimiter> pods = List.of(pod(rules, store, "a"), pod(rules, store, "b"));
    RequestContext r = RequestContext.builder().identity("api-key", "key-1").identity("ip", "10.0.0.1").build();
    int allowed = 0;
    for (int i = 0; i < 8; i++) {
      Decision d = pods.get(i % 2).check(r);
      if (d.allowed()) {
        allowed++;
      } else {
        assertThat(d.limit().name()).isEqualTo("per-key");
      }
    }
    assertThat(allowed).as("per-key, 2 across both pods").isEqualTo(2);
    pods.forEach(RequestLimiter::close);
    // per-ip: the 2 allowed requests, and at most one given-back permit per pod that the store had
    // counted before the denial (reused by the pod's next request, never added to): not the 6 denials
    assertThat(store.count("per-ip", "10.0.0.1", w)).as("per-ip charged").isBetween(2L, 4L);
    assertThat(store.count("per-key", "key-1", w)).isEqualTo(2);
  }

  /**
   * A permit given back after its window ended stays with that window: the next window's permits,
   * which other requests hold, are not given back in its place (the release would let the node admit
   * more than the limit there).
   */
  @Test
  void permitsOfAWindowGoneByAreNotGivenBackFromTheNextOne() {
    Limit limit = Limit.fixedWindow("roll").limit(10).window(MINUTE).build();
    MemoryStore store = new MemoryStore();
    try (SyncedLimiter node = node(limit, store, "n")) {
      ticker.advance(Duration.ofSeconds(59));
      io.sluice.node.Decision early = node.acquire("k", 5);
      assertThat(early.allowed()).isTrue();
      ticker.advance(Duration.ofSeconds(2)); // the next window
      int admitted = 0;
      while (node.tryAcquire("k")) {
        admitted++;
      }
      assertThat(admitted).isEqualTo(10);
      node.release("k", 5, early);
      assertThat(node.tryAcquire("k")).as("the new window stays at its limit").isFalse();
      node.flushAll();
      long w = Math.floorDiv(ticker.read(), MINUTE.toNanos());
      assertThat(store.count("roll", "k", w)).isEqualTo(10);
    }
  }

  /**
   * A key decided on the overflow view (the table full) gives its permits back to that view: the
   * other new keys that share it get them, as a key with a view of its own would.
   */
  @Test
  void aKeyChargedToTheOverflowViewGivesItsPermitsBack() {
    Limit one = Limit.fixedWindow("overflow").limit(1).window(MINUTE).build();
    try (SyncedLimiter node = SyncedLimiter.builder(one, new MemoryStore()).nodeId("n").ticker(ticker).autoSync(false)
        .activeNodes(() -> 1).maxKeys(2).build()) {
      assertThat(node.tryAcquire("a")).isTrue();
      assertThat(node.tryAcquire("b")).isTrue();
      io.sluice.node.Decision c = node.acquire("c"); // the table is full: c shares the overflow view
      assertThat(c.allowed()).isTrue();
      assertThat(node.overflowed()).isPositive();
      assertThat(node.tryAcquire("d")).as("the overflow view's one permit is taken").isFalse();
      node.release("c", 1, c);
      assertThat(node.tryAcquire("d")).as("c's permit, given back").isTrue();
    }
  }

  /** Soft and shadow limits shared across nodes tell their listener of each breach, as in-process ones do. */
  @Test
  void softAndShadowBreachesReachTheListener() {
    MemoryStore store = new MemoryStore();
    List<String> breaches = new java.util.ArrayList<>();
    Limit soft = Limit.fixedWindow("soft").limit(2).window(MINUTE).mode(io.sluice.node.Mode.SOFT).build();
    try (SyncedLimiter node = SyncedLimiter.builder(soft, store).nodeId("n").ticker(ticker).autoSync(false)
        .activeNodes(() -> 1).listener((limit, key, d) -> breaches.add(limit.name() + ":" + key + ":" + d.outcome()))
        .build()) {
      for (int i = 0; i < 4; i++) {
        assertThat(node.tryAcquire("k")).as("a soft limit never denies").isTrue();
      }
      assertThat(node.acquire("k").outcome()).isEqualTo(io.sluice.node.Outcome.SOFT_EXCEEDED);
      assertThat(breaches).hasSize(3);
      // for a caller deciding several limits (RequestLimiter): counted, told only when the caller says
      io.sluice.node.Decision untold = node.acquireUntold("k", 1);
      assertThat(untold.outcome()).isEqualTo(io.sluice.node.Outcome.SOFT_EXCEEDED);
      assertThat(breaches).hasSize(3);
      node.tellBreach("k", untold);
    }
    assertThat(breaches).containsExactly("soft:k:SOFT_EXCEEDED", "soft:k:SOFT_EXCEEDED", "soft:k:SOFT_EXCEEDED",
        "soft:k:SOFT_EXCEEDED");
  }

  private RequestLimiter pod(Rules rules, MemoryStore store, String name) {
    return RequestLimiter.builder(rules).limiters(limit -> node(limit, store, name)).build();
  }

  private SyncedLimiter node(Limit limit, MemoryStore store, String name) {
    return SyncedLimiter.builder(limit, store).nodeId(name).ticker(ticker).autoSync(false).activeNodes(() -> 2).build();
  }
}
