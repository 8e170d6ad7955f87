package io.sluice.http;

import io.sluice.node.Decision;

/**
 * The bodies {@link RateLimitFilter} answers with, for other HTTP stacks to answer the same (no
 * servlet class is needed to load this one): small JSON objects, {@code application/json}, UTF-8.
 */
public final class RateLimitResponses {
  private RateLimitResponses() {
  }

  /** The 429's body: {@code {"error":"rate limited","limit":"api","retryAfterSeconds":12}}. */
  public static String denied(Decision decision) {
    return "{\"error\":\"rate limited\",\"limit\":\"" + decision.limit().name() + "\",\"retryAfterSeconds\":"
        + Math.max(1, decision.retryAfterSeconds()) + "}";
  }

  /** The 400's body for an identity longer than the filter takes ({@code what}: the header or identity). */
  public static String tooLong(String what, int maxLength) {
    return "{\"error\":\"" + what + ": longer than " + maxLength + " characters\"}";
  }

  /** The 400's body for an authenticated user's name longer than the filter takes. */
  public static String userNameTooLong(int maxLength) {
    return "{\"error\":\"user: name longer than " + maxLength + " characters\"}";
  }
}
