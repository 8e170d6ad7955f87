package io.sluice.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Decision;
import io.sluice.node.LimitSpec;
import io.sluice.node.Outcome;
import org.junit.jupiter.api.Test;

class RateLimitResponsesTest {

  @Test
  void theDenialNamesTheLimitAndWhenToRetry() {
    Decision d = Decision.of(Outcome.DENIED, LimitSpec.parse("api=5/1m"), 0, 60_000_000_000L, 12_000_000_000L);
    assertThat(RateLimitResponses.denied(d)).isEqualTo("{\"error\":\"rate limited\",\"limit\":\"api\",\"retryAfterSeconds\":12}");
  }

  /** An identity's name comes from configuration or a header: whatever it holds, the body stays JSON. */
  @Test
  void aNameWithQuotesOrControlCharactersIsEscaped() {
    assertThat(RateLimitResponses.tooLong("X-\"Key\"\\\n", 16))
        .isEqualTo("{\"error\":\"X-\\\"Key\\\"\\\\\\n: longer than 16 characters\"}");
    assertThat(RateLimitResponses.userNameTooLong(64)).isEqualTo("{\"error\":\"user: name longer than 64 characters\"}");
  }
}
