package io.sluice.envoy;

import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.type.v3.RateLimitUnit;
import java.time.Duration;
import java.util.Locale;

/**
 * The units a limit counts in: each a fixed window of that length, aligned to the epoch (UTC). Envoy's
 * API also names week, month and year, which envoyproxy/ratelimit counts as fixed windows of 7, 30 and
 * 365 days (utils.UnitToDivider); they are not built here, and are refused in a file and in a request's
 * override.
 */
public enum RlsUnit {
  SECOND(Duration.ofSeconds(1), RateLimitResponse.RateLimit.Unit.SECOND),
  MINUTE(Duration.ofMinutes(1), RateLimitResponse.RateLimit.Unit.MINUTE),
  HOUR(Duration.ofHours(1), RateLimitResponse.RateLimit.Unit.HOUR),
  DAY(Duration.ofDays(1), RateLimitResponse.RateLimit.Unit.DAY);

  /** What the configuration's {@code unit} may say, for messages. */
  public static final String NAMES = "second, minute, hour or day";

  private final Duration window;
  private final RateLimitResponse.RateLimit.Unit proto;

  RlsUnit(Duration window, RateLimitResponse.RateLimit.Unit proto) {
    this.window = window;
    this.proto = proto;
  }

  /** The window's length. */
  public Duration window() {
    return window;
  }

  /** The unit in a response's {@code current_limit}. */
  public RateLimitResponse.RateLimit.Unit proto() {
    return proto;
  }

  /** The unit in Envoy's common type ({@code envoy.type.v3.RateLimitUnit}), as RLQS assignments carry it. */
  public RateLimitUnit rateLimitUnit() {
    return RateLimitUnit.valueOf(name());
  }

  /** A configuration's {@code unit} (any case), or null if it names none of the four. */
  public static RlsUnit parse(String text) {
    if (text == null) {
      return null;
    }
    for (RlsUnit u : values()) {
      if (u.name().equals(text.trim().toUpperCase(Locale.ROOT))) {
        return u;
      }
    }
    return null;
  }

  /** The unit of a request's limit override, or null for UNKNOWN, WEEK, MONTH, YEAR and unrecognised values. */
  public static RlsUnit of(RateLimitUnit unit) {
    switch (unit) {
      case SECOND:
        return SECOND;
      case MINUTE:
        return MINUTE;
      case HOUR:
        return HOUR;
      case DAY:
        return DAY;
      default:
        return null;
    }
  }
}
