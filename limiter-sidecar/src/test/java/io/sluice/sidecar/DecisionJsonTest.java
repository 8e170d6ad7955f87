package io.sluice.sidecar;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.LimitSpec;
import io.sluice.node.Mode;
import io.sluice.node.Outcome;
import io.sluice.node.RequestContext;
import io.sluice.node.RequestLimiter;
import io.sluice.node.Rule;
import io.sluice.node.Rules;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The answer, byte for byte the fields and order the sidecar has always answered with. */
class DecisionJsonTest {
  private static final long SECOND = 1_000_000_000L;

  @Test
  void writesADecision() {
    Limit api = LimitSpec.parse("api=1000/1m");
    Limit login = LimitSpec.parse("login.v2:ip_x-y=5/15m,fixed-window,soft");
    assertThat(json(Decision.of(Outcome.ALLOWED, api, 999, 60 * SECOND, 0), false)).isEqualTo(
        "{\"allowed\":true,\"outcome\":\"allowed\",\"limit\":\"api\",\"remaining\":999,\"resetSeconds\":60,"
            + "\"retryAfterSeconds\":0}");
    assertThat(json(Decision.of(Outcome.DENIED, api, 0, 59 * SECOND + 1, 12 * SECOND), false)).isEqualTo(
        "{\"allowed\":false,\"outcome\":\"denied\",\"limit\":\"api\",\"remaining\":0,\"resetSeconds\":60,"
            + "\"retryAfterSeconds\":12}");
    // (a denial says to retry in a second at least)
    assertThat(json(Decision.of(Outcome.DENIED, api, 0, 0, 0), false)).isEqualTo(
        "{\"allowed\":false,\"outcome\":\"denied\",\"limit\":\"api\",\"remaining\":0,\"resetSeconds\":0,"
            + "\"retryAfterSeconds\":1}");
    assertThat(json(Decision.of(Outcome.SOFT_EXCEEDED, login, 0, 900 * SECOND, 0), false)).isEqualTo(
        "{\"allowed\":true,\"outcome\":\"soft\",\"limit\":\"login.v2:ip_x-y\",\"remaining\":0,\"resetSeconds\":900,"
            + "\"retryAfterSeconds\":0}");
    assertThat(json(Decision.of(Outcome.ALLOWED, login, Long.MAX_VALUE, Long.MAX_VALUE, 0), false)).isEqualTo(
        "{\"allowed\":true,\"outcome\":\"allowed\",\"limit\":\"login.v2:ip_x-y\",\"remaining\":9223372036854775807,"
            + "\"resetSeconds\":9223372037,\"retryAfterSeconds\":0}");
    // the rules' form of a single limit's decision: its own part
    assertThat(json(Decision.of(Outcome.ALLOWED, api, 999, 60 * SECOND, 0), true)).startsWith(
        "{\"allowed\":true,\"outcome\":\"allowed\",\"limit\":\"api\",\"remaining\":999,\"resetSeconds\":60,"
            + "\"retryAfterSeconds\":0,\"limits\":[");
  }

  @Test
  void writesTheRulesParts() {
    Limit perIp = LimitSpec.parse("per-ip=1000/1m");
    Limit shadow = Limit.slidingWindowCounter("new-rule").limit(100).window(Duration.ofMinutes(1)).mode(Mode.SHADOW)
        .build();
    Rules rules = Rules.builder().always(Rule.of(perIp, "ip"), Rule.of(shadow, "ip")).build();
    Decision d = RequestLimiter.builder(rules).build()
        .checkIfAnyApplies(RequestContext.builder().identity("ip", "10.0.0.7").build(), 1);
    assertThat(d.parts()).hasSize(2);
    // (the reset is where the wall clock is in the minute)
    assertThat(json(d, true)).matches("\\{\"allowed\":true,\"outcome\":\"allowed\",\"limit\":\"new-rule\","
        + "\"remaining\":99,\"resetSeconds\":\\d+,\"retryAfterSeconds\":0,\"limits\":\\["
        + "\\{\"allowed\":true,\"outcome\":\"allowed\",\"limit\":\"per-ip\",\"remaining\":999,\"resetSeconds\":\\d+\\},"
        + "\\{\"allowed\":true,\"outcome\":\"allowed\",\"limit\":\"new-rule\",\"remaining\":99,\"resetSeconds\":\\d+\\}\\]\\}");
  }

  private static String json(Decision d, boolean withParts) {
    return new String(DecisionJson.of(d, withParts), StandardCharsets.UTF_8);
  }
}
