package io.sluice.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RulesFileTest {
  /** The README's rules, as a file. */
  static final String README_RULES = String.join("\n",
      "# limits",
      "per-ip   = 1000/1m",
      "free     = 1/1s, token-bucket, burst=60",
      "pro      = 10/1s, token-bucket, burst=600",
      "login    = 5/15m, fixed-window",
      "new-rule = 100/1m, shadow",
      "",
      "# rules",
      "always                per-ip by ip, new-rule by api-key",
      "plan free default     free by api-key",
      "plan pro              pro by api-key",
      "endpoint POST /login  login by ip",
      "");

  @Test
  void readsLimitsAndRules() {
    RulesFile file = RulesFile.parse(README_RULES, "rules.conf");
    assertThat(file.limits()).extracting(Limit::name).containsExactly("per-ip", "free", "pro", "login", "new-rule");
    Rules rules = file.rules().orElseThrow();
    RequestContext proLogin = RequestContext.builder().plan("pro").endpoint("POST", "/login")
        .identity("ip", "10.0.0.7").identity("api-key", "k").build();
    assertThat(rules.rulesFor(proLogin)).extracting(r -> r.limit().name())
        .containsExactly("per-ip", "new-rule", "pro", "login");
    RequestContext anonymous = RequestContext.builder().endpoint("GET", "/items").build();
    assertThat(rules.rulesFor(anonymous)).extracting(r -> r.limit().name())
        .containsExactly("per-ip", "new-rule", "free");
    // a request limiter over the file decides as one built in Java
    RequestLimiter limiter = RequestLimiter.builder(rules).build();
    int allowed = 0;
    for (int i = 0; i < 8; i++) {
      allowed += limiter.check(proLogin).allowed() ? 1 : 0;
    }
    assertThat(allowed).as("login: 5 per 15 minutes").isEqualTo(5);
  }

  @Test
  void aFileOfLimitsAloneHasNoRules() {
    RulesFile file = RulesFile.parse("api=100/1m\nlogin=5/15m,fixed-window\n", "limits.conf");
    assertThat(file.limits()).extracting(Limit::name).containsExactly("api", "login");
    assertThat(file.rules()).isEmpty();
  }

  @Test
  void errorsNameTheLineAndTheField() {
    assertThat(error("api=100/1m\nalways api by ip\nplan pro pr by api-key\n"))
        .isEqualTo("f:3: rule: unknown limit \"pr\" (defined: api)");
    assertThat(error("api=100/1m\nalways api for ip\n")).startsWith("f:2: rule: cannot read \"api for ip\"");
    assertThat(error("api=100/1m\napi=5/1s\n")).isEqualTo("f:2: limit: \"api\" is defined twice");
    assertThat(error("api=100/1m\nplan a default api by ip\nplan b default api by ip\n"))
        .isEqualTo("f:3: plan: two default plans, a and b");
    assertThat(error("api=100/1m\nplan a default\n")).startsWith("f:2: rule: at least one");
    assertThat(error("api=100/1m\nendpoint GET api by ip\n")).startsWith("f:2: path");
    assertThat(error("api=100/1m\nendpoint /x\n")).startsWith("f:2: endpoint: a method and a path");
    assertThat(error("api=100/forever\n")).startsWith("f:1: duration:");
    assertThat(error("\n\napi=100/1m\nplan p api by ip\nplan p api by ip\n")).startsWith("f:5: plan: \"p\" is defined twice");
  }

  @Test
  void filesAreReadAsUtf8AndAMissingOneIsNamed(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("rules.conf");
    Files.writeString(file, README_RULES);
    assertThat(RulesFile.read(file).rules()).isPresent();
    assertThatThrownBy(() -> RulesFile.read(dir.resolve("missing"))).hasMessageStartingWith("limitsFile: cannot read");
    Files.writeString(file, "api=100/1m\nlogin=5/forever\n");
    assertThatThrownBy(() -> RulesFile.read(file)).hasMessageStartingWith(file + ":2: duration:");
  }

  @Test
  void commentsLineEndsAndNamesLikeKeywordsReadAsMeant() {
    RulesFile file = RulesFile.parse("\uFEFF# a file saved with a BOM\r\nplan = 100/1m  # named plan\r"
        + "default=5/1s\n\tendpoint = 1/1s\n"
        + "plan p default by ip, plan by ip   # 'default' the limit, not the marker\n"
        + "endpoint GET /x endpoint by api-key\n", "f");
    assertThat(file.limits()).extracting(Limit::name).containsExactly("plan", "default", "endpoint");
    assertThat(file.identities()).containsExactlyInAnyOrder("ip", "api-key");
    Rules rules = file.rules().orElseThrow();
    RequestContext inP = RequestContext.builder().plan("p").endpoint("GET", "/x").identity("ip", "1.2.3.4").build();
    assertThat(rules.rulesFor(inP)).extracting(r -> r.limit().name()).containsExactly("default", "plan", "endpoint");
    assertThat(RulesFile.parse("api=1/1s\n", "f").identities()).isEmpty();
  }

  @Test
  void aLimitCountsOneIdentity() {
    assertThat(error("api=100/1m\nalways api by ip\nplan pro api by api-key\n"))
        .isEqualTo("f:3: rule: limit \"api\" is keyed by ip in another rule; a limit counts one identity"
            + " (define a second limit for api-key)");
  }

  private static String error(String text) {
    try {
      RulesFile.parse(text, "f");
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    throw new AssertionError("no error for:\n" + text);
  }
}
