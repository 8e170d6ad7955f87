package io.sluice.spring;

import io.sluice.http.RateLimitFilterConfig;

/**
 * Changes the servlet filter's settings after the {@code sluice.filter.*} properties: a bean of this
 * type adds identities read from the request ({@code builder.identity("tenant", req -> ...)}), a plan
 * resolver, and so on.
 */
@FunctionalInterface
public interface SluiceFilterCustomizer {
  void customize(RateLimitFilterConfig.Builder builder);
}
