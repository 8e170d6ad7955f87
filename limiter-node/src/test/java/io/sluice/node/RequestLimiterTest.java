package io.sluice.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Plans, endpoints, several limits per request, and soft and shadow modes. */
class RequestLimiterTest {
  private final ManualTicker ticker = new ManualTicker();

  private static Limit window(String name, long limit) {
    return Limit.fixedWindow(name).limit(limit).window(Duration.ofMinutes(1)).build();
  }

  private static RequestContext request(String plan, String method, String path, String apiKey, String ip) {
    return RequestContext.builder().plan(plan).endpoint(method, path).identity("api-key", apiKey)
        .identity("ip", ip).build();
  }

  @Test
  void planAndEndpointChooseTheLimits() {
    Rules rules = Rules.builder()
        .always(Rule.of(window("per-ip", 1_000), "ip"))
        .plan("free", Rule.of(window("free", 10), "api-key"))
        .plan("pro", Rule.of(window("pro", 100), "api-key"))
        .defaultPlan("free")
        .endpoint("POST", "/login", Rule.of(window("login", 3), "ip"))
        .endpoint("*", "/api/{version}/items/**", Rule.of(window("items", 50), "api-key"))
        .build();
    assertThat(names(rules.rulesFor(request("pro", "GET", "/", "k", "1.2.3.4")))).containsExactly("per-ip", "pro");
    assertThat(names(rules.rulesFor(request(null, "post", "/login", "k", "1.2.3.4"))))
        .containsExactly("per-ip", "free", "login");
    assertThat(names(rules.rulesFor(request("unknown", "DELETE", "/api/v2/items/7/tags", "k", "1.2.3.4"))))
        .containsExactly("per-ip", "free", "items");
    assertThat(names(rules.rulesFor(request("pro", "GET", "/api/v2/items", "k", "1.2.3.4"))))
        .containsExactly("per-ip", "pro", "items");
    assertThat(names(rules.rulesFor(request("pro", "GET", "/api/v2/other", "k", "1.2.3.4")))).containsExactly("per-ip", "pro");
  }

  @Test
  void aGetEndpointHoldsForHeadToo() {
    // HEAD is GET without the body (RFC 9110 9.3.2): servlets and Spring MVC run the GET handler for it,
    // so a GET endpoint's limit that HEAD escaped could be skipped by sending HEAD
    Rules rules = Rules.builder()
        .endpoint("GET", "/reports/{id}", Rule.of(window("reports", 3), "ip"))
        .endpoint("POST", "/reports", Rule.of(window("writes", 3), "ip"))
        .build();
    assertThat(names(rules.rulesFor(request(null, "HEAD", "/reports/7", "k", "1.2.3.4")))).containsExactly("reports");
    assertThat(names(rules.rulesFor(request(null, "head", "/reports/7", "k", "1.2.3.4")))).containsExactly("reports");
    assertThat(names(rules.rulesFor(request(null, "HEAD", "/reports", "k", "1.2.3.4")))).isEmpty();
    assertThat(names(rules.rulesFor(request(null, "OPTIONS", "/reports/7", "k", "1.2.3.4")))).isEmpty();
  }

  @Test
  void unknownPlanWithoutDefaultIsAnError() {
    Rules rules = Rules.builder().plan("free", Rule.of(window("free", 10), "api-key")).build();
    assertThatThrownBy(() -> rules.rulesFor(request("gold", "GET", "/", "k", "ip")))
        .hasMessageStartingWith("plan:");
  }

  @Test
  void aDenialConsumesNothingFromTheOtherLimits() {
    Rules rules = Rules.builder()
        .always(Rule.of(window("per-ip", 10), "ip"), Rule.of(window("per-key", 2), "api-key"))
        .build();
    RequestLimiter limiter = RequestLimiter.builder(rules).ticker(ticker).build();
    RequestContext r = request(null, "GET", "/", "key-1", "10.0.0.1");
    assertThat(limiter.check(r).allowed()).isTrue();
    assertThat(limiter.check(r).allowed()).isTrue();
    for (int i = 0; i < 5; i++) {
      Decision denied = limiter.check(r);
      assertThat(denied.allowed()).isFalse();
      assertThat(denied.limit().name()).isEqualTo("per-key");
      assertThat(denied.parts()).hasSize(2);
    }
    // the per-IP limit was charged only for the two allowed requests: 8 left for another key
    RequestContext other = request(null, "GET", "/", "key-2", "10.0.0.1");
    Decision d = limiter.check(other);
    Decision perIp = d.parts().stream().filter(p -> p.limit().name().equals("per-ip")).findFirst().orElseThrow();
    assertThat(perIp.remaining()).isEqualTo(7);
  }

  /**
   * The same rules over limiters a factory builds (here in-process limiters behind the interface only,
   * as a distributed one is): a denial by one limit gives back what the others took, soft and shadow
   * limits never deny, and the request limiter closes what it built.
   */
  @Test
  void rulesRunOverAnyKeyedLimiterTheFactoryBuilds() {
    Rules rules = Rules.builder()
        .always(Rule.of(window("per-ip", 10), "ip"), Rule.of(window("per-key", 2), "api-key"),
            Rule.of(Limit.fixedWindow("dry-run").limit(1).window(Duration.ofMinutes(1)).mode(Mode.SHADOW).build(), "ip"))
        .build();
    List<Wrapped> built = new ArrayList<>();
    RequestLimiter limiter = overWrapped(rules, built);
    assertThat(limiter.limiters()).hasSize(3).allSatisfy(l -> assertThat(l).isInstanceOf(Wrapped.class));
    RequestContext r = request(null, "GET", "/", "key-1", "10.0.0.1");
    assertThat(limiter.check(r).allowed()).isTrue();
    assertThat(limiter.check(r).allowed()).isTrue();
    for (int i = 0; i < 5; i++) {
      Decision denied = limiter.check(r);
      assertThat(denied.allowed()).isFalse();
      assertThat(denied.limit().name()).isEqualTo("per-key");
    }
    Decision d = limiter.check(request(null, "GET", "/", "key-2", "10.0.0.1"));
    assertThat(d.allowed()).as("the shadow limit breached, never denying").isTrue();
    Decision perIp = d.parts().stream().filter(p -> p.limit().name().equals("per-ip")).findFirst().orElseThrow();
    assertThat(perIp.remaining()).as("per-ip charged for the allowed requests only").isEqualTo(7);
    assertThat(d.parts()).extracting(p -> p.limit().name()).containsExactly("per-ip", "per-key", "dry-run");
    limiter.close();
    assertThat(built).allSatisfy(w -> assertThat(w.closed).isTrue());

    assertThatThrownBy(() -> RequestLimiter.builder(rules).limiters(limit -> RateLimiter.of(window("other", 1))).build())
        .hasMessageStartingWith("limiters: the factory must build a limiter of the limit it is given (")
        .hasMessageEndingWith("got one of other");
  }

  /** A limit that fails half way (a cost above its capacity, a limiter that throws) leaves nothing taken. */
  @Test
  void aRequestThatFailsHalfWayTakesNothing() {
    Rules rules = Rules.builder()
        .always(Rule.of(window("big", 100), "ip"), Rule.of(window("small", 10), "api-key"))
        .build();
    List<Wrapped> built = new ArrayList<>();
    RequestLimiter limiter = overWrapped(rules, built);
    RequestContext r = request(null, "GET", "/", "key-1", "10.0.0.1");
    // (the in-process path's own message: the same check serves both)
    assertThatThrownBy(() -> limiter.check(r, 50))
        .hasMessage("cost: 50 exceeds the capacity 10 of limit small, so it could never be allowed");
    built.forEach(w -> w.failing = w.limit().name().equals("small"));
    assertThatThrownBy(() -> limiter.check(r, 5)).hasMessage("injected");
    built.forEach(w -> w.failing = false);
    Decision d = limiter.check(r, 1);
    Decision big = d.parts().stream().filter(p -> p.limit().name().equals("big")).findFirst().orElseThrow();
    assertThat(big.remaining()).as("nothing kept from the failed requests").isEqualTo(99);
  }

  /** Limiters a factory builds decide on their own clocks (the request limiter's is for its own). */
  @Test
  void aFactorysLimitersKeepTheirOwnClock() {
    ManualTicker theirs = new ManualTicker();
    Rules rules = Rules.builder().always(Rule.of(window("per-ip", 1), "ip")).build();
    RequestLimiter limiter = RequestLimiter.builder(rules).ticker(ticker)
        .limiters(limit -> RateLimiter.builder(limit).ticker(theirs).build()).build();
    RequestContext r = request(null, "GET", "/", "k", "10.0.0.1");
    assertThat(limiter.check(r).allowed()).isTrue();
    assertThat(limiter.check(r).allowed()).isFalse();
    theirs.advance(Duration.ofMinutes(1));
    assertThat(limiter.check(r).allowed()).as("a new window on the limiter's clock").isTrue();
  }

  /** A request limiter whose limits are in-process limiters behind the interface only; {@code built} gets them. */
  private RequestLimiter overWrapped(Rules rules, List<Wrapped> built) {
    return RequestLimiter.builder(rules).limiters(limit -> {
      Wrapped w = new Wrapped(RateLimiter.builder(limit).ticker(ticker).build());
      built.add(w);
      return w;
    }).build();
  }

  /** An in-process limiter seen only through the interface. */
  private static final class Wrapped implements KeyedLimiter {
    private final RateLimiter inner;
    boolean closed;
    boolean failing;

    Wrapped(RateLimiter inner) {
      this.inner = inner;
    }

    @Override
    public Limit limit() {
      return inner.limit();
    }

    @Override
    public boolean tryAcquire(String key, long cost) {
      return inner.tryAcquire(key, cost);
    }

    @Override
    public Decision acquire(String key, long cost) {
      failIfAsked();
      return inner.acquire(key, cost);
    }

    private void failIfAsked() {
      if (failing) {
        throw new IllegalStateException("injected");
      }
    }

    @Override
    public void release(String key, long cost, Decision acquired) {
      inner.release(key, cost, acquired);
    }

    @Override
    public Decision acquireUntold(String key, long cost) {
      failIfAsked();
      return inner.acquireUntold(key, cost);
    }

    @Override
    public void tellBreach(String key, Decision breach) {
      inner.tellBreach(key, breach);
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  /**
   * A request no limit applies to (no rule matches it, or no matching rule's key resolves) gets null
   * from checkIfAnyApplies, in-process and over the factory's limiters alike, and takes nothing; check
   * refuses it; the same request with a key is decided.
   */
  @Test
  void aRequestNoLimitAppliesToIsAnsweredWithoutADecision() {
    Rules rules = Rules.builder()
        .always(Rule.of(window("per-user", 1), "user"))
        .endpoint("POST", "/login", Rule.of(window("login", 1), "ip"))
        .build();
    List<Wrapped> built = new ArrayList<>();
    for (RequestLimiter limiter : List.of(RequestLimiter.builder(rules).ticker(ticker).build(), overWrapped(rules, built))) {
      RequestContext anonymous = request(null, "GET", "/", null, "10.0.0.1");
      assertThat(limiter.checkIfAnyApplies(anonymous, 1)).isNull();
      assertThatThrownBy(() -> limiter.check(anonymous)).hasMessageStartingWith("request: no limit applies");
      RequestContext login = request(null, "POST", "/login", null, "10.0.0.1");
      assertThat(limiter.checkIfAnyApplies(login, 1).allowed()).isTrue();
      assertThat(limiter.checkIfAnyApplies(login, 1).allowed()).as("the login limit of 1 was taken once").isFalse();
      assertThatThrownBy(() -> limiter.checkIfAnyApplies(login, 2)).hasMessageStartingWith("cost:");
    }
    Rules plans = Rules.builder().plan("free", Rule.of(window("free", 10), "api-key")).build();
    assertThatThrownBy(() -> RequestLimiter.builder(plans).build().checkIfAnyApplies(request("gold", "GET", "/", "k", "ip"), 1))
        .hasMessageStartingWith("plan:");
  }

  @Test
  void aLimitWhoseKeyIsMissingDoesNotApply() {
    Rules rules = Rules.builder()
        .always(Rule.of(window("per-ip", 10), "ip"), Rule.of(window("per-user", 1), "user"))
        .build();
    RequestLimiter limiter = RequestLimiter.builder(rules).ticker(ticker).build();
    RequestContext anonymous = request(null, "GET", "/", null, "10.0.0.1");
    assertThat(limiter.check(anonymous).parts()).extracting(p -> p.limit().name()).containsExactly("per-ip");
  }

  @Test
  void softAndShadowLimitsAllowRecordAndNotify() {
    List<String> breaches = new ArrayList<>();
    Limit soft = window("soft", 1).toBuilder().mode(Mode.SOFT).build();
    Limit shadow = Limit.slidingWindowCounter("shadow").limit(2).window(Duration.ofMinutes(1)).mode(Mode.SHADOW).build();
    Rules rules = Rules.builder().always(Rule.of(soft, "api-key"), Rule.of(shadow, "api-key")).build();
    RequestLimiter limiter = RequestLimiter.builder(rules).ticker(ticker)
        .listener((limit, key, decision) -> breaches.add(limit.name() + ":" + key + ":" + decision.outcome()))
        .build();
    RequestContext r = request(null, "GET", "/", "k", null);
    assertThat(limiter.check(r).outcome()).isEqualTo(Outcome.ALLOWED);
    Decision second = limiter.check(r);
    assertThat(second.allowed()).isTrue();
    assertThat(second.outcome()).isEqualTo(Outcome.SOFT_EXCEEDED);
    Decision third = limiter.check(r);
    assertThat(third.allowed()).isTrue();
    assertThat(third.parts()).extracting(Decision::outcome)
        .containsExactly(Outcome.SOFT_EXCEEDED, Outcome.SHADOW_DENIED);
    assertThat(breaches).containsExactly("soft:k:SOFT_EXCEEDED", "soft:k:SOFT_EXCEEDED", "shadow:k:SHADOW_DENIED");
  }

  /**
   * A soft limit's breach by a request that a later hard limit denies is not told to the listener, in
   * process and over the factory's limiters alike (the generic path once told it before the denial);
   * the same breach by a request that goes on is told once.
   */
  @Test
  void aBreachIsToldOnlyForARequestThatGoesOn() {
    Limit soft = window("soft", 1).toBuilder().mode(Mode.SOFT).build();
    Rules rules = Rules.builder().always(Rule.of(soft, "api-key"), Rule.of(window("hard", 2), "api-key")).build();
    for (boolean overInterface : new boolean[] {false, true}) {
      List<String> breaches = new ArrayList<>();
      LimitListener listener = (limit, key, decision) -> breaches.add(limit.name() + ":" + decision.outcome());
      RequestLimiter limiter = overInterface
          ? RequestLimiter.builder(rules).limiters(limit -> new Wrapped(RateLimiter.builder(limit).ticker(ticker)
              .listener(listener).build())).build()
          : RequestLimiter.builder(rules).ticker(ticker).listener(listener).build();
      RequestContext r = request(null, "GET", "/", "k", null);
      assertThat(limiter.check(r).outcome()).isEqualTo(Outcome.ALLOWED);
      assertThat(limiter.check(r).outcome()).as("over the interface %s", overInterface).isEqualTo(Outcome.SOFT_EXCEEDED);
      assertThat(limiter.check(r).allowed()).as("the hard limit of 2").isFalse();
      assertThat(breaches).as("over the interface %s", overInterface).containsExactly("soft:SOFT_EXCEEDED");
    }
  }

  @Test
  void aThrowingListenerDoesNotFailTheRequest() {
    Limit soft = window("soft", 1).toBuilder().mode(Mode.SOFT).build();
    RateLimiter limiter = RateLimiter.builder(soft).ticker(ticker).listener((l, k, d) -> {
      throw new IllegalStateException("boom");
    }).build();
    assertThat(limiter.tryAcquire("k")).isTrue();
    assertThat(limiter.tryAcquire("k")).isTrue();
    assertThat(limiter.decisions(Outcome.SOFT_EXCEEDED)).isEqualTo(1);
  }

  private static List<String> names(List<Rule> rules) {
    List<String> out = new ArrayList<>();
    rules.forEach(r -> out.add(r.limit().name()));
    return out;
  }
}
