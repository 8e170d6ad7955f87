package io.sluice.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.node.Mode;
import io.sluice.node.Outcome;
import io.sluice.node.RateLimiter;
import io.sluice.node.RequestLimiter;
import io.sluice.node.Rule;
import io.sluice.node.Rules;
import io.sluice.node.StructuredFieldsAccess.Member;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The filter in a real Jetty servlet container, over real HTTP from the JDK's client. */
class RateLimitFilterTest {
  private final ManualTicker ticker = new ManualTicker();

  private static Limit fixed(String name, long limit, Mode mode) {
    return Limit.fixedWindow(name).limit(limit).window(Duration.ofMinutes(1)).mode(mode).build();
  }

  private RequestLimiter limiter(Rules rules) {
    return RequestLimiter.builder(rules).ticker(ticker).build();
  }

  @Test
  void deniedRequestsGet429WithRetryAfterAndTheRateLimitFieldsAndNeverReachTheServlet() throws Exception {
    RequestLimiter limiter = limiter(Rules.builder().always(Rule.of(fixed("per-key", 2, Mode.HARD), "api-key")).build());
    try (FilterHarness app = new FilterHarness(new RateLimitFilter(RateLimitFilterConfig.builder(limiter).build()))) {
      assertThat(Http.get(app.uri("/items"), "X-API-Key", "k1").statusCode()).isEqualTo(200);
      assertThat(Http.get(app.uri("/items"), "X-API-Key", "k1").statusCode()).isEqualTo(200);
      HttpResponse<String> denied = Http.get(app.uri("/items"), "X-API-Key", "k1");

      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(app.served).hasValue(2);
      assertThat(Http.longField(denied, "Retry-After")).isBetween(1L, 60L);
      List<Member> policies = Http.policies(denied);
      assertThat(policies).hasSize(1);
      assertThat(policies.get(0).value).isEqualTo("per-key");
      assertThat(policies.get(0).params).containsEntry("q", 2L).containsEntry("w", 60L);
      Member rl = Http.rateLimit(denied);
      assertThat(rl.value).isEqualTo("per-key");
      assertThat(rl.params).containsEntry("r", 0L);
      assertThat((Long) rl.params.get("t")).isBetween(1L, 60L);
      assertThat(Http.longField(denied, "X-RateLimit-Limit")).isEqualTo(2);
      assertThat(Http.longField(denied, "X-RateLimit-Remaining")).isZero();
      assertThat(Http.longField(denied, "X-RateLimit-Reset")).isBetween(1L, 60L);
      assertThat(denied.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("application/json"));
      assertThat(denied.body()).contains("\"limit\":\"per-key\"").contains("\"retryAfterSeconds\":");

      // another key has its own budget; the window's end gives k1 its budget back
      assertThat(Http.get(app.uri("/items"), "X-API-Key", "k2").statusCode()).isEqualTo(200);
      ticker.advance(Duration.ofMinutes(1));
      assertThat(Http.get(app.uri("/items"), "X-API-Key", "k1").statusCode()).isEqualTo(200);
    }
  }

  @Test
  void allowedResponsesCarryTheFieldsButNoRetryAfter() throws Exception {
    RequestLimiter limiter = limiter(Rules.builder().always(Rule.of(fixed("per-ip", 5, Mode.HARD), "ip")).build());
    try (FilterHarness app = new FilterHarness(new RateLimitFilter(RateLimitFilterConfig.builder(limiter).build()))) {
      HttpResponse<String> first = Http.get(app.uri("/"));
      HttpResponse<String> second = Http.get(app.uri("/"));

      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(first.body()).isEqualTo("ok");
      assertThat(first.headers().firstValue("Retry-After")).isEmpty();
      assertThat(Http.policies(first).get(0).params).containsEntry("q", 5L);
      assertThat(Http.rateLimit(first).params).containsEntry("r", 4L);
      assertThat(Http.rateLimit(second).params).containsEntry("r", 3L);
      assertThat(Http.longField(second, "X-RateLimit-Remaining")).isEqualTo(3);
      assertThat(Http.longField(second, "X-RateLimit-Limit")).isEqualTo(5);
    }
  }

  @Test
  void shadowLimitsDecideAndRecordButNeverRejectNorShow() throws Exception {
    Limit shadow = fixed("new-rule", 1, Mode.SHADOW);
    RequestLimiter limiter = limiter(Rules.builder()
        .always(Rule.of(fixed("per-ip", 100, Mode.HARD), "ip"), Rule.of(shadow, "ip")).build());
    try (FilterHarness app = new FilterHarness(new RateLimitFilter(RateLimitFilterConfig.builder(limiter).build()))) {
      for (int i = 0; i < 5; i++) {
        HttpResponse<String> r = Http.get(app.uri("/"));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(Http.policies(r)).extracting(m -> m.value).containsExactly("per-ip");
        assertThat(Http.rateLimit(r).value).isEqualTo("per-ip");
      }
      assertThat(app.served).hasValue(5);
      RateLimiter shadowLimiter = (RateLimiter) limiter.limiters().stream().filter(l -> l.limit().name().equals("new-rule"))
          .findFirst().orElseThrow();
      assertThat(shadowLimiter.decisions(Outcome.SHADOW_DENIED)).isEqualTo(4);
    }
  }

  @Test
  void onlyShadowLimitsMeansNoFieldsAtAll() throws Exception {
    RequestLimiter limiter = limiter(Rules.builder().always(Rule.of(fixed("dry-run", 1, Mode.SHADOW), "ip")).build());
    try (FilterHarness app = new FilterHarness(new RateLimitFilter(RateLimitFilterConfig.builder(limiter).build()))) {
      for (int i = 0; i < 3; i++) {
        HttpResponse<String> r = Http.get(app.uri("/"));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("RateLimit-Policy")).isEmpty();
        assertThat(r.headers().firstValue("X-RateLimit-Limit")).isEmpty();
      }
    }
  }

  @Test
  void severalLimitsAllMustPassAndADenialSpendsNothingOfTheOthers() throws Exception {
    RequestLimiter limiter = limiter(Rules.builder()
        .always(Rule.of(fixed("per-ip", 4, Mode.HARD), "ip"))
        .plan("free", Rule.of(fixed("free", 2, Mode.HARD), "api-key"))
        .plan("pro", Rule.of(fixed("pro", 100, Mode.HARD), "api-key"))
        .defaultPlan("free")
        .endpoint("POST", "/login", Rule.of(fixed("login", 1, Mode.HARD), "ip"))
        .build());
    RateLimitFilterConfig config = RateLimitFilterConfig.builder(limiter)
        .planResolver(PlanResolver.header("X-Test-Plan")).build();
    try (FilterHarness app = new FilterHarness(new RateLimitFilter(config))) {
      HttpResponse<String> a1 = Http.get(app.uri("/a"), "X-API-Key", "free-key");
      assertThat(a1.statusCode()).isEqualTo(200);
      assertThat(Http.policies(a1)).extracting(m -> m.value).containsExactly("per-ip", "free");
      assertThat(Http.get(app.uri("/a"), "X-API-Key", "free-key").statusCode()).isEqualTo(200);
      HttpResponse<String> a3 = Http.get(app.uri("/a"), "X-API-Key", "free-key");
      assertThat(a3.statusCode()).isEqualTo(429);
      assertThat(Http.rateLimit(a3).value).isEqualTo("free"); // the denying policy is the one reported

      // the free plan's denial took nothing from per-ip: 2 of 4 used, so the pro key gets 2 more
      HttpResponse<String> p1 = Http.get(app.uri("/a"), "X-API-Key", "pro-key", "X-Test-Plan", "pro");
      assertThat(p1.statusCode()).isEqualTo(200);
      assertThat(Http.policies(p1)).extracting(m -> m.value).containsExactly("per-ip", "pro");
      assertThat(Http.rateLimit(p1).value).isEqualTo("per-ip"); // the one closest to its limit
      assertThat(Http.rateLimit(p1).params).containsEntry("r", 1L);

      // the endpoint rule: one login per IP per minute, on top of the rest
      HttpResponse<String> login = Http.post(app.uri("/login"), "", "X-API-Key", "pro-key", "X-Test-Plan", "pro");
      assertThat(login.statusCode()).isEqualTo(200);
      assertThat(Http.policies(login)).extracting(m -> m.value).containsExactly("per-ip", "pro", "login");
      HttpResponse<String> ipDenied = Http.get(app.uri("/a"), "X-API-Key", "pro-key", "X-Test-Plan", "pro");
      assertThat(ipDenied.statusCode()).isEqualTo(429);
      assertThat(Http.rateLimit(ipDenied).value).isEqualTo("per-ip");
      assertThat(app.served).hasValue(4);
    }
  }

  @Test
  void theUserAndTheClientIdentitiesComeFromThePrincipalAndFallBackToTheAddress() throws Exception {
    RequestLimiter limiter = limiter(Rules.builder()
        .always(Rule.of(fixed("per-user", 1, Mode.HARD), "user"), Rule.of(fixed("per-client", 2, Mode.HARD), "client"))
        .build());
    try (FilterHarness app = new FilterHarness(new RateLimitFilter(RateLimitFilterConfig.builder(limiter).build()))) {
      assertThat(Http.get(app.uri("/"), "X-Test-User", "alice").statusCode()).isEqualTo(200);
      HttpResponse<String> again = Http.get(app.uri("/"), "X-Test-User", "alice");
      assertThat(again.statusCode()).isEqualTo(429);
      assertThat(Http.rateLimit(again).value).isEqualTo("per-user");
      assertThat(Http.get(app.uri("/"), "X-Test-User", "bob").statusCode()).isEqualTo(200);
      // anonymous: no per-user limit applies; the client identity is the address
      HttpResponse<String> anon = Http.get(app.uri("/"));
      assertThat(anon.statusCode()).isEqualTo(200);
      assertThat(Http.policies(anon)).extracting(m -> m.value).containsExactly("per-client");
      assertThat(Http.get(app.uri("/")).statusCode()).isEqualTo(200);
      assertThat(Http.get(app.uri("/")).statusCode()).isEqualTo(429);
    }
  }

  @Test
  void aRequestNoLimitAppliesToPassesUntouched() throws Exception {
    RequestLimiter limiter = limiter(Rules.builder().always(Rule.of(fixed("per-key", 1, Mode.HARD), "api-key")).build());
    try (FilterHarness app = new FilterHarness(new RateLimitFilter(RateLimitFilterConfig.builder(limiter).build()))) {
      for (int i = 0; i < 3; i++) {
        HttpResponse<String> r = Http.get(app.uri("/"));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("RateLimit")).isEmpty();
      }
    }
  }

  @Test
  void theEndpointIsThePathTheContainerDecodedSoEncodingDoesNotDodgeARule() throws Exception {
    RequestLimiter limiter = limiter(Rules.builder()
        .endpoint("GET", "/login", Rule.of(fixed("login", 1, Mode.HARD), "ip")).build());
    try (FilterHarness app = new FilterHarness(new RateLimitFilter(RateLimitFilterConfig.builder(limiter).build()))) {
      assertThat(Http.get(app.uri("/login")).statusCode()).isEqualTo(200);
      assertThat(Http.get(app.uri("/%6Cogin")).statusCode()).isEqualTo(429);
      assertThat(Http.get(app.uri("/other")).statusCode()).isEqualTo(200);
    }
  }

  @Test
  void anOverlongApiKeyIsRefusedWith400() throws Exception {
    RequestLimiter limiter = limiter(Rules.builder().always(Rule.of(fixed("per-key", 10, Mode.HARD), "api-key")).build());
    RateLimitFilterConfig config = RateLimitFilterConfig.builder(limiter).maxKeyLength(16).build();
    try (FilterHarness app = new FilterHarness(new RateLimitFilter(config))) {
      HttpResponse<String> r = Http.get(app.uri("/"), "X-API-Key", "k".repeat(17));
      assertThat(r.statusCode()).isEqualTo(400);
      assertThat(r.body()).contains("X-API-Key: longer than 16");
      assertThat(app.served).hasValue(0);
    }
  }

  @Test
  void customIdentitiesFeedTheRules() throws Exception {
    RequestLimiter limiter = limiter(Rules.builder().always(Rule.of(fixed("per-tenant", 1, Mode.HARD), "tenant")).build());
    RateLimitFilterConfig config = RateLimitFilterConfig.builder(limiter)
        .identity("tenant", req -> req.getHeader("X-Tenant")).build();
    try (FilterHarness app = new FilterHarness(new RateLimitFilter(config))) {
      assertThat(Http.get(app.uri("/"), "X-Tenant", "acme").statusCode()).isEqualTo(200);
      assertThat(Http.get(app.uri("/"), "X-Tenant", "acme").statusCode()).isEqualTo(429);
      assertThat(Http.get(app.uri("/"), "X-Tenant", "globex").statusCode()).isEqualTo(200);
    }
  }

  // ------------------------------------------------------------------ X-Forwarded-For

  private static RequestLimiter perIpOfOne(ManualTicker ticker) {
    return RequestLimiter.builder(Rules.builder().always(Rule.of(fixed("per-ip", 1, Mode.HARD), "ip")).build())
        .ticker(ticker).build();
  }

  @Test
  void withoutTrustedProxiesForwardedForIsIgnored() throws Exception {
    RateLimitFilterConfig config = RateLimitFilterConfig.builder(perIpOfOne(ticker)).build();
    try (FilterHarness app = new FilterHarness(new RateLimitFilter(config))) {
      assertThat(Http.get(app.uri("/"), "X-Forwarded-For", "203.0.113.1").statusCode()).isEqualTo(200);
      // a client rotating spoofed addresses is still the loopback peer
      assertThat(Http.get(app.uri("/"), "X-Forwarded-For", "203.0.113.2").statusCode()).isEqualTo(429);
    }
  }

  @Test
  void aSpoofedForwardedForFromAnUntrustedPeerIsIgnored() throws Exception {
    // only 10/8 is a proxy; the test client comes from 127.0.0.1, so it is the client itself
    RateLimitFilterConfig config = RateLimitFilterConfig.builder(perIpOfOne(ticker)).trustedProxies("10.0.0.0/8").build();
    try (FilterHarness app = new FilterHarness(new RateLimitFilter(config))) {
      assertThat(Http.get(app.uri("/"), "X-Forwarded-For", "203.0.113.1").statusCode()).isEqualTo(200);
      assertThat(Http.get(app.uri("/"), "X-Forwarded-For", "203.0.113.2").statusCode()).isEqualTo(429);
    }
  }

  @Test
  void behindATrustedProxyTheClientIsTheFirstUntrustedHopFromTheRight() throws Exception {
    RateLimitFilterConfig config = RateLimitFilterConfig.builder(perIpOfOne(ticker))
        .trustedProxies("127.0.0.1", "10.0.0.0/8").build();
    try (FilterHarness app = new FilterHarness(new RateLimitFilter(config))) {
      assertThat(Http.get(app.uri("/"), "X-Forwarded-For", "203.0.113.1").statusCode()).isEqualTo(200);
      assertThat(Http.get(app.uri("/"), "X-Forwarded-For", "203.0.113.2").statusCode()).isEqualTo(200);
      assertThat(Http.get(app.uri("/"), "X-Forwarded-For", "203.0.113.1").statusCode()).isEqualTo(429);
      // the client prepends a fake address: the proxy appended the real one, which is what counts
      assertThat(Http.get(app.uri("/"), "X-Forwarded-For", "198.51.100.7, 203.0.113.2").statusCode()).isEqualTo(429);
      // two proxies (10.1.2.3 trusted) in front: skipped, the hop before them is the client
      assertThat(Http.get(app.uri("/"), "X-Forwarded-For", "198.51.100.9, 203.0.113.3, 10.1.2.3").statusCode())
          .isEqualTo(200);
      assertThat(Http.get(app.uri("/"), "X-Forwarded-For", "203.0.113.3, 10.1.2.3").statusCode()).isEqualTo(429);
    }
  }

  @Test
  void unknownPlanWithoutDefaultIsADeploymentErrorNotASilentPass() throws Exception {
    RequestLimiter limiter = limiter(Rules.builder().plan("free", Rule.of(fixed("free", 5, Mode.HARD), "ip")).build());
    RateLimitFilterConfig config = RateLimitFilterConfig.builder(limiter).planResolver(req -> "gold").build();
    try (FilterHarness app = new FilterHarness(new RateLimitFilter(config))) {
      assertThat(Http.get(app.uri("/")).statusCode()).isEqualTo(500);
      assertThat(app.served).hasValue(0);
    }
  }

  @Test
  void theConfigRejectsBadSettingsByName() {
    RequestLimiter limiter = limiter(Rules.builder().always(Rule.of(fixed("x", 1, Mode.HARD), "ip")).build());
    assertThatThrownBy(() -> RateLimitFilterConfig.builder(limiter).trustedProxies("10.0.0.0/33"))
        .hasMessageStartingWith("trustedProxies:").hasMessageContaining("0 to 32");
    assertThatThrownBy(() -> RateLimitFilterConfig.builder(limiter).trustedProxies("proxy.example.com"))
        .hasMessageStartingWith("trustedProxies:");
    assertThatThrownBy(() -> RateLimitFilterConfig.builder(limiter).apiKeyHeader("bad header"))
        .hasMessageStartingWith("apiKeyHeader:");
    assertThatThrownBy(() -> RateLimitFilterConfig.builder(limiter).identity("ip", r -> "x"))
        .hasMessageStartingWith("identity:");
    assertThatThrownBy(() -> RateLimitFilterConfig.builder(null)).hasMessageStartingWith("limiter:");
    assertThat(RateLimitFilterConfig.builder(limiter).trustedProxies(" 10.0.0.0/8", "::1").build().trustedProxies()
        .stream().collect(Collectors.joining(","))).isEqualTo("10.0.0.0/8,::1");
  }
}
