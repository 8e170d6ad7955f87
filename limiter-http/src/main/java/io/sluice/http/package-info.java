/**
 * HTTP integration of Sluice. {@link io.sluice.http.RateLimitFilter} puts a
 * {@link io.sluice.node.RequestLimiter} in front of a Jakarta Servlet application (configured by
 * {@link io.sluice.http.RateLimitFilterConfig}); {@code io.sluice.http.serve} is the check sidecar
 * for services in other languages. Everything not public is internal.
 */
package io.sluice.http;
