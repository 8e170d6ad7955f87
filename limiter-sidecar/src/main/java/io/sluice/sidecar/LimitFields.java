package io.sluice.sidecar;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.Mode;
import io.sluice.node.Outcome;
import io.sluice.node.RateLimitHeaders;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.PreEncodedHttpField;

/**
 * The rate limit fields of a decision by one limit alone, the same names, values and order as
 * {@link RateLimitHeaders#of} gives them, without its map: the fields that never change for the limit
 * ({@code RateLimit-Policy}, {@code X-RateLimit-Limit}) encoded once, the others built with their
 * names given (Jetty would otherwise look each name up among the known headers, every request).
 */
final class LimitFields {
  private final Limit limit;
  private final boolean shadow;
  private final HttpField policy;
  private final HttpField capacity;
  /** {@code "api";r=}: the start of the {@code RateLimit} field. */
  private final String itemStart;

  LimitFields(Limit limit) {
    this.limit = limit;
    this.shadow = limit.mode() == Mode.SHADOW; // a dry run's limit shows clients nothing
    // the policy's one formula stays RateLimitHeaders': asked here of a decision of this limit
    this.policy = new PreEncodedHttpField(RateLimitHeaders.RATELIMIT_POLICY,
        RateLimitHeaders.policy(Decision.of(Outcome.ALLOWED, limit, 0, 0, 0)));
    this.capacity = new PreEncodedHttpField(RateLimitHeaders.X_RATELIMIT_LIMIT, Long.toString(limit.capacity()));
    this.itemStart = "\"" + limit.name() + "\";r=";
  }

  /**
   * Adds the fields of {@code d} to a response's (empty) fields: {@code d} must be a decision of this
   * limit alone, as a limiter of it returns; anything else gets {@link RateLimitHeaders#of}'s fields.
   */
  void addTo(Decision d, HttpFields.Mutable headers) {
    if (d.limit() != limit || d.parts().size() != 1 || d.parts().get(0) != d) {
      RateLimitHeaders.of(d).forEach(headers::add);
      return;
    }
    if (shadow) {
      return;
    }
    if (!d.allowed()) {
      headers.add(new HttpField.LongValueHttpField(HttpHeader.RETRY_AFTER, Math.max(1, d.retryAfterSeconds())));
    }
    headers.add(policy);
    headers.add(new HttpField(null, RateLimitHeaders.RATELIMIT, itemStart + d.remaining() + ";t=" + d.resetSeconds()));
    headers.add(capacity);
    headers.add(new HttpField.LongValueHttpField(null, RateLimitHeaders.X_RATELIMIT_REMAINING, d.remaining()));
    headers.add(new HttpField.LongValueHttpField(null, RateLimitHeaders.X_RATELIMIT_RESET, d.resetSeconds()));
  }
}
