package io.sluice.node;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The HTTP response fields of a {@link Decision}, as pure functions (no servlet API here):
 * <ul>
 *   <li>{@code RateLimit-Policy} and {@code RateLimit}, structured fields of
 *       draft-ietf-httpapi-ratelimit-headers-11: {@code "burst";q=100;w=60} lists every policy;
 *       {@code "burst";r=50;t=30} reports the one closest to its limit (the denying one when denied);</li>
 *   <li>{@code Retry-After} in seconds, on denials;</li>
 *   <li>the legacy {@code X-RateLimit-Limit}, {@code -Remaining} and {@code -Reset} (seconds from now)
 *       of that same policy.</li>
 * </ul>
 * Shadow limits are left out: a dry run must not change what clients see. Seconds are rounded up.
 */
public final class RateLimitHeaders {
  public static final String RETRY_AFTER = "Retry-After";
  public static final String RATELIMIT_POLICY = "RateLimit-Policy";
  public static final String RATELIMIT = "RateLimit";
  public static final String X_RATELIMIT_LIMIT = "X-RateLimit-Limit";
  public static final String X_RATELIMIT_REMAINING = "X-RateLimit-Remaining";
  public static final String X_RATELIMIT_RESET = "X-RateLimit-Reset";

  private RateLimitHeaders() {
  }

  /** All the fields for the response, in a stable order; empty if only shadow limits applied. */
  public static Map<String, String> of(Decision decision) {
    List<Decision> visible = visibleParts(decision);
    if (visible.isEmpty()) {
      return Collections.emptyMap();
    }
    Decision reported = reported(decision, visible);
    Map<String, String> fields = new LinkedHashMap<>();
    if (!decision.allowed()) {
      fields.put(RETRY_AFTER, Long.toString(Math.max(1, decision.retryAfterSeconds())));
    }
    fields.put(RATELIMIT_POLICY, policy(visible));
    fields.put(RATELIMIT, rateLimitItem(reported));
    fields.put(X_RATELIMIT_LIMIT, Long.toString(reported.limit().capacity()));
    fields.put(X_RATELIMIT_REMAINING, Long.toString(reported.remaining()));
    fields.put(X_RATELIMIT_RESET, Long.toString(reported.resetSeconds()));
    return fields;
  }

  /** The {@code RateLimit-Policy} field: one list member per visible policy. */
  public static String policy(Decision decision) {
    return policy(visibleParts(decision));
  }

  /** The {@code RateLimit} field of the policy closest to its limit, or "" if none is visible. */
  public static String rateLimit(Decision decision) {
    List<Decision> visible = visibleParts(decision);
    return visible.isEmpty() ? "" : rateLimitItem(reported(decision, visible));
  }

  private static String policy(List<Decision> parts) {
    StringBuilder sb = new StringBuilder();
    for (Decision d : parts) {
      if (sb.length() > 0) {
        sb.append(", ");
      }
      Limit l = d.limit();
      sb.append('"').append(l.name()).append("\";q=").append(l.capacity())
          .append(";w=").append(Math.max(1, Decision.ceilSeconds(l.quotaWindowNanos())));
    }
    return sb.toString();
  }

  private static String rateLimitItem(Decision d) {
    return "\"" + d.limit().name() + "\";r=" + d.remaining() + ";t=" + d.resetSeconds();
  }

  private static List<Decision> visibleParts(Decision decision) {
    List<Decision> out = new ArrayList<>(decision.parts().size());
    for (Decision d : decision.parts()) {
      if (d.limit().mode() != Mode.SHADOW) {
        out.add(d);
      }
    }
    return out;
  }

  private static Decision reported(Decision decision, List<Decision> visible) {
    if (!decision.allowed()) {
      return decision;
    }
    Decision closest = visible.get(0);
    for (Decision d : visible) {
      if (d.utilization() > closest.utilization()) {
        closest = d;
      }
    }
    return closest;
  }
}
