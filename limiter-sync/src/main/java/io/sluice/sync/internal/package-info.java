/**
 * The inside of {@link io.sluice.sync.SyncedLimiter}: the key views and their table, the flusher, the
 * store calls behind the circuit breaker, the claim and share arithmetic, and one admission per mode
 * (exact, token claims, window views), wired by {@link io.sluice.sync.internal.LimiterCore}. Internal:
 * every type here may change in any release; build limiters with {@link io.sluice.sync.SyncedLimiter}
 * and {@link io.sluice.sync.SyncConfig}. Only {@code LimiterCore} is public, for the facade.
 */
package io.sluice.sync.internal;
