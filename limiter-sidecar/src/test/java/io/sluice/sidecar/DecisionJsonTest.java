package io.sluice.sidecar;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.LimitSpec;
import io.sluice.node.Mode;
import io.sluice.node.Outcome;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The answer, byte for byte the fields and order the sidecar has always answered with. */
class DecisionJsonTest {
  private static final JsonFactory JSON = new JsonFactory();

  @Test
  void writesADecisionAsTheGeneratorDid() throws IOException {
    Limit api = LimitSpec.parse("api=1000/1m");
    Limit login = LimitSpec.parse("login.v2:ip_x-y=5/15m,fixed-window,soft");
    long second = 1_000_000_000L;
    for (Decision d : List.of(Decision.of(Outcome.ALLOWED, api, 999, 60 * second, 0),
        Decision.of(Outcome.DENIED, api, 0, 59 * second + 1, 12 * second),
        Decision.of(Outcome.DENIED, api, 0, 0, 0),
        Decision.of(Outcome.SOFT_EXCEEDED, login, 0, 900 * second, 0),
        Decision.of(Outcome.ALLOWED, login, Long.MAX_VALUE, Long.MAX_VALUE, 0))) {
      assertThat(new String(DecisionJson.of(d, false), StandardCharsets.UTF_8)).isEqualTo(generated(d, false));
      assertThat(new String(DecisionJson.of(d, true), StandardCharsets.UTF_8)).isEqualTo(generated(d, true));
    }
  }

  @Test
  void writesTheRulesPartsAsTheGeneratorDid() throws IOException {
    Limit perIp = LimitSpec.parse("per-ip=1000/1m");
    Limit shadow = Limit.slidingWindowCounter("new-rule").limit(100).window(java.time.Duration.ofMinutes(1))
        .mode(Mode.SHADOW).build();
    io.sluice.node.Rules rules = io.sluice.node.Rules.builder()
        .always(io.sluice.node.Rule.of(perIp, "ip"), io.sluice.node.Rule.of(shadow, "ip")).build();
    io.sluice.node.RequestLimiter limiter = io.sluice.node.RequestLimiter.builder(rules).build();
    Decision d = limiter.checkIfAnyApplies(io.sluice.node.RequestContext.builder().identity("ip", "10.0.0.7").build(), 1);
    assertThat(d.parts()).hasSize(2);
    assertThat(new String(DecisionJson.of(d, true), StandardCharsets.UTF_8)).isEqualTo(generated(d, true));
  }

  /** The answer as CheckHandler wrote it with Jackson's generator before this writer. */
  private static String generated(Decision d, boolean withParts) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      writeDecision(g, d);
      g.writeNumberField("retryAfterSeconds", d.allowed() ? 0 : Math.max(1, d.retryAfterSeconds()));
      if (withParts) {
        g.writeArrayFieldStart("limits");
        for (Decision part : d.parts()) {
          g.writeStartObject();
          writeDecision(g, part);
          g.writeEndObject();
        }
        g.writeEndArray();
      }
      g.writeEndObject();
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  private static void writeDecision(JsonGenerator g, Decision d) throws IOException {
    g.writeBooleanField("allowed", d.allowed());
    g.writeStringField("outcome", d.outcome().tag());
    g.writeStringField("limit", d.limit().name());
    g.writeNumberField("remaining", d.remaining());
    g.writeNumberField("resetSeconds", d.resetSeconds());
  }
}
