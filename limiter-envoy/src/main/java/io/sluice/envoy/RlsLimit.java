package io.sluice.envoy;

import java.util.List;
import java.util.Objects;

/**
 * One {@code rate_limit} block of a configuration file: {@code requests_per_unit} per {@code unit}
 * (a fixed window), or {@code unlimited}; with the descriptor's {@code shadow_mode}, and the
 * optional {@code name} and {@code replaces} (the names of limits this one drops from a request
 * where both match).
 *
 * @param requestsPerUnit the permits per window, 0 to 2^31-1 (0 refuses every request); 0 when unlimited. Envoy's
 *     API carries up to 2^32-1; Sluice's fixed windows count up to 2^31-1, and more is refused by name
 * @param unit the window, null when unlimited
 */
public record RlsLimit(long requestsPerUnit, RlsUnit unit, boolean unlimited, boolean shadowMode, String name,
    List<String> replaces) {
  /** The largest {@code requests_per_unit}: a Sluice fixed window's largest limit. */
  public static final long MAX_REQUESTS_PER_UNIT = Integer.MAX_VALUE;

  public RlsLimit {
    replaces = List.copyOf(replaces);
    if (!unlimited) {
      Objects.requireNonNull(unit, "unit");
      if (requestsPerUnit < 0 || requestsPerUnit > MAX_REQUESTS_PER_UNIT) {
        throw new IllegalArgumentException("requests_per_unit: must be 0 to " + MAX_REQUESTS_PER_UNIT
            + ", got " + requestsPerUnit);
      }
    }
  }

  /** A limit of the request's own ({@code limit} override): never unlimited, shadow or named. */
  public static RlsLimit override(long requestsPerUnit, RlsUnit unit) {
    return new RlsLimit(requestsPerUnit, unit, false, false, null, List.of());
  }
}
