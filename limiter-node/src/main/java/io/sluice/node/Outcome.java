package io.sluice.node;

import java.util.Locale;

/** The outcome of one limit's check. */
public enum Outcome {
  ALLOWED,
  DENIED,
  /** Over a soft limit: allowed, counted, listener notified. */
  SOFT_EXCEEDED,
  /** A shadow limit would have denied: allowed and recorded. */
  SHADOW_DENIED;

  /** The value of the {@code result} tag in metrics: allowed, denied, soft or shadow. */
  public String tag() {
    switch (this) {
      case SOFT_EXCEEDED:
        return "soft";
      case SHADOW_DENIED:
        return "shadow";
      default:
        return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Whether the request goes through. */
  public boolean allowed() {
    return this != DENIED;
  }
}
