package io.sluice.sync;

import io.sluice.sync.internal.LimiterCore;

/** Tests that look inside a limiter: its {@link LimiterCore} (the facade keeps it package-private). */
public final class CoreAccess {
  private CoreAccess() {
  }

  public static LimiterCore core(SyncedLimiter limiter) {
    return limiter.core;
  }
}
