package io.sluice.sidecar;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.LimitSpec;
import io.sluice.node.Outcome;
import io.sluice.node.RateLimitHeaders;
import io.sluice.node.RequestContext;
import io.sluice.node.RequestLimiter;
import io.sluice.node.Rule;
import io.sluice.node.Rules;
import java.util.LinkedHashMap;
import java.util.Map;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.junit.jupiter.api.Test;

/** The sidecar's fields of one limit's decision: RateLimitHeaders' names, values and order. */
class LimitFieldsTest {
  private static final long SECOND = 1_000_000_000L;

  @Test
  void writesWhatRateLimitHeadersWrites() {
    for (String spec : new String[] {"api=1000/1m", "login=5/15m,fixed-window", "free=1/1s,token-bucket,burst=60",
        "soft=10/1h,soft", "dry=100/1m,shadow"}) {
      Limit limit = LimitSpec.parse(spec);
      LimitFields fields = new LimitFields(limit);
      for (Decision d : new Decision[] {Decision.of(Outcome.ALLOWED, limit, 999, 59 * SECOND + 1, 0),
          Decision.of(Outcome.DENIED, limit, 0, 30 * SECOND, 12 * SECOND + 1),
          Decision.of(Outcome.DENIED, limit, 0, 0, 0),
          Decision.of(Outcome.SOFT_EXCEEDED, limit, 0, 3600 * SECOND, 0),
          Decision.of(Outcome.SHADOW_DENIED, limit, 0, 60 * SECOND, 0)}) {
        assertThat(written(fields, d)).as(spec + " " + d).containsExactlyEntriesOf(RateLimitHeaders.of(d));
      }
    }
  }

  /** A decision that is not of its limit alone (the rules' several limits) gets RateLimitHeaders' own fields. */
  @Test
  void aDecisionOfSeveralLimitsGetsTheGeneralFields() {
    Limit perIp = LimitSpec.parse("per-ip=1000/1m");
    Limit perKey = LimitSpec.parse("per-key=10/1m");
    RequestLimiter limiter = RequestLimiter.builder(Rules.builder().always(Rule.of(perIp, "ip"), Rule.of(perKey, "ip"))
        .build()).build();
    Decision d = limiter.checkIfAnyApplies(RequestContext.builder().identity("ip", "10.0.0.7").build(), 1);
    assertThat(d.parts()).hasSize(2);
    assertThat(written(new LimitFields(d.limit()), d)).containsExactlyEntriesOf(RateLimitHeaders.of(d));
    assertThat(RateLimitHeaders.of(d).get(RateLimitHeaders.RATELIMIT_POLICY)).contains("per-ip").contains("per-key");
  }

  private static Map<String, String> written(LimitFields fields, Decision d) {
    HttpFields.Mutable headers = HttpFields.build();
    fields.addTo(d, headers);
    Map<String, String> out = new LinkedHashMap<>();
    for (HttpField f : headers) {
      assertThat(out.put(f.getName(), f.getValue())).as("each field once").isNull();
    }
    return out;
  }
}
