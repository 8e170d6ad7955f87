package io.sluice.envoy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RlqsConfigTest {
  static final String CONFIG = String.join("\n",
      "assignment_period: 2s",
      "abandon_after: 30s",
      "domains:",
      "  - domain: edge",
      "    buckets:",
      "      - bucket_id: {name: api, tenant: \"*\"}",
      "        rate_limit: {unit: minute, requests_per_unit: 600}",
      "      - bucket_id: {name: api}",
      "        rate_limit: {unit: second, requests_per_unit: 5}",
      "        strategy: requests_per_time_unit",
      "      - bucket_id: {name: health}",
      "        rate_limit: {unlimited: true}",
      "      - bucket_id: {name: blocked}",
      "        rate_limit: {unit: hour, requests_per_unit: 0}",
      "    default:",
      "      rate_limit: {unit: second, requests_per_unit: 10}",
      "  - domain: other",
      "    buckets:",
      "      - bucket_id: {name: api}",
      "        rate_limit: {unit: day, requests_per_unit: 1000}",
      "");

  @Test
  void bucketIdsFindTheFirstRuleWhoseKeysTheyHaveElseTheDefault() {
    RlqsConfig c = RlqsConfig.parse("rlqs.yaml", CONFIG);
    assertThat(c.period()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.abandonAfter()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.domains()).containsExactly("edge", "other");
    RlqsConfig.Rule tenant = c.match("edge", Map.of("name", "api", "tenant", "acme", "extra", "x"));
    assertThat(tenant.limit().requestsPerUnit()).isEqualTo(600);
    assertThat(tenant.limit().unit()).isEqualTo(RlsUnit.MINUTE);
    assertThat(tenant.strategy()).isEqualTo(RlqsConfig.Strategy.TOKEN_BUCKET);
    RlqsConfig.Rule plain = c.match("edge", Map.of("name", "api"));
    assertThat(plain.limit().requestsPerUnit()).isEqualTo(5);
    assertThat(plain.strategy()).isEqualTo(RlqsConfig.Strategy.REQUESTS_PER_TIME_UNIT);
    assertThat(c.match("edge", Map.of("name", "health")).limit().unlimited()).isTrue();
    assertThat(c.match("edge", Map.of("name", "blocked")).limit().requestsPerUnit()).isZero();
    assertThat(c.match("edge", Map.of("name", "else")).limit().requestsPerUnit()).isEqualTo(10);
    // no default in "other": not limited
    assertThat(c.match("other", Map.of("name", "else"))).isNull();
    assertThat(c.match("other", Map.of("name", "api")).limit().unit()).isEqualTo(RlsUnit.DAY);
    assertThat(c.match("nowhere", Map.of("name", "api"))).isNull();
  }

  @Test
  void defaultsOfThePeriodAndAbandonment() {
    RlqsConfig c = RlqsConfig.parse("r.yaml", "domains:\n  - domain: d\n    default:\n      rate_limit: {unlimited: true}\n");
    assertThat(c.period()).isEqualTo(RlqsConfig.DEFAULT_PERIOD);
    assertThat(c.abandonAfter()).isEqualTo(RlqsConfig.DEFAULT_ABANDON_AFTER);
  }

  @Test
  void errorsNameTheFileLineAndField() {
    assertError("domains: []\n", "r.yaml:1: domains: must not be empty");
    assertError("", "r.yaml:1: domains: required (the file is empty)");
    assertError("assignment_period: soon\ndomains: []\n",
        "r.yaml:1: assignment_period: must be a duration such as 500ms, 5s, 1m or 1h, got \"soon\"");
    assertError("assignment_period: 100ms\ndomains: []\n", "r.yaml:1: assignment_period: must be from 200ms to 1h, got 100ms");
    assertError("assignment_period: 10s\nabandon_after: 5s\ndomains: []\n",
        "r.yaml:2: abandon_after: must be at least assignment_period (10000ms), got 5000ms");
    assertError("domains:\n  - domain: d\n", "r.yaml:2: domains[0]: needs buckets, a default or both");
    assertError("domains:\n  - buckets: []\n", "r.yaml:2: domains[0].domain: required, must not be empty");
    assertError("domains:\n  - domain: d\n    default: {rate_limit: {unlimited: true}}\n  - domain: d\n"
        + "    default: {rate_limit: {unlimited: true}}\n", "r.yaml:4: domains[1].domain: \"d\" is configured above already");
    assertError("domains:\n  - domain: d\n    buckets:\n      - rate_limit: {unlimited: true}\n",
        "r.yaml:4: domains[0].buckets[0].bucket_id: required");
    assertError("domains:\n  - domain: d\n    buckets:\n      - bucket_id: {}\n        rate_limit: {unlimited: true}\n",
        "r.yaml:4: domains[0].buckets[0].bucket_id: must be a non-empty mapping");
    assertError("domains:\n  - domain: d\n    buckets:\n      - bucket_id: {name: \"\"}\n"
        + "        rate_limit: {unlimited: true}\n", "r.yaml:4: domains[0].buckets[0].bucket_id.name: must not be empty");
    assertError("domains:\n  - domain: d\n    buckets:\n      - bucket_id: {name: a}\n",
        "r.yaml:4: domains[0].buckets[0].rate_limit: required");
    assertError("domains:\n  - domain: d\n    buckets:\n      - bucket_id: {name: a}\n"
        + "        rate_limit: {unit: weekly, requests_per_unit: 3}\n",
        "r.yaml:5: domains[0].buckets[0].rate_limit.unit: must be second, minute, hour or day, got \"weekly\"");
    assertError("domains:\n  - domain: d\n    buckets:\n      - bucket_id: {name: a}\n"
        + "        rate_limit: {unit: second, requests_per_unit: -3}\n",
        "r.yaml:5: domains[0].buckets[0].rate_limit.requests_per_unit: must be a whole number from 0 to 2147483647");
    assertError("domains:\n  - domain: d\n    buckets:\n      - bucket_id: {name: a}\n"
        + "        rate_limit: {unit: second}\n", "domains[0].buckets[0].rate_limit.requests_per_unit: required");
    assertError("domains:\n  - domain: d\n    buckets:\n      - bucket_id: {name: a}\n"
        + "        rate_limit: {unlimited: true, unit: second}\n",
        "r.yaml:5: domains[0].buckets[0].rate_limit.unit: must not be given with unlimited: true");
    assertError("domains:\n  - domain: d\n    buckets:\n      - bucket_id: {name: a}\n"
        + "        rate_limit: {unlimited: true}\n        strategy: leaky\n",
        "r.yaml:6: domains[0].buckets[0].strategy: must be requests_per_time_unit or token_bucket, got \"leaky\"");
    assertError("domains:\n  - domain: d\n    default: {rate_limit: {unlimited: true}, bucket_id: {a: b}}\n",
        "r.yaml:3: domains[0].default.bucket_id: unknown field (known here: rate_limit, strategy)");
    assertError("domains: [\n", "r.yaml:");
  }

  private static void assertError(String yaml, String message) {
    assertThatThrownBy(() -> RlqsConfig.parse("r.yaml", yaml)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(message.startsWith("r.yaml") ? message : "r.yaml:").hasMessageContaining(message);
  }
}
