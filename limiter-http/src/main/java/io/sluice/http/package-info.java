/**
 * HTTP integration of Sluice. {@link io.sluice.http.RateLimitFilter} puts a
 * {@link io.sluice.node.RequestLimiter} in front of a Jakarta Servlet application (configured by
 * {@link io.sluice.http.RateLimitFilterConfig}), over in-process limits or, through a
 * {@code RequestLimiter}'s factory, over limiter-sync's distributed ones. The check sidecar for
 * services in other languages is limiter-sidecar. Everything not public is internal.
 */
package io.sluice.http;
