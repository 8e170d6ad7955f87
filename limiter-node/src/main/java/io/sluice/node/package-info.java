/**
 * Sluice's in-process limiter.
 *
 * <p>The public API is small: build a {@link io.sluice.node.Limit}, then either a
 * {@link io.sluice.node.RateLimiter} (one limit, keyed) or a {@link io.sluice.node.RequestLimiter}
 * (several limits chosen by {@link io.sluice.node.Rules}); read a {@link io.sluice.node.Decision},
 * turn it into response fields with {@link io.sluice.node.RateLimitHeaders}, and expose metrics with
 * {@link io.sluice.node.RateLimiterMetrics}. Time comes from an injectable {@link io.sluice.node.Ticker}.
 *
 * <p>Everything else in this package is package-private: the algorithms ({@code Kernel} and its
 * subclasses, each an arithmetic over a per-key {@code KeyState} changed by CAS) and the bounded
 * {@code KeyTable}.
 */
package io.sluice.node;
