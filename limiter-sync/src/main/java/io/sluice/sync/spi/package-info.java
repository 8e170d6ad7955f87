/**
 * The store port of {@code SyncedLimiter}: what a store implements ({@link io.sluice.sync.spi.CounterStore}
 * for batched flushes and the node registry, {@link io.sluice.sync.spi.ExactStore} for exact mode,
 * {@link io.sluice.sync.spi.LeaseStore} for reservation mode, {@link io.sluice.sync.spi.TokenStore} for
 * token claims on a shared bucket), the values that cross it, the store's key
 * layout ({@link io.sluice.sync.spi.StoreKeys}) and the checks every store applies to its arguments.
 * For store implementations (limiter-sync-redis, limiter-sync-hazelcast, the test kit's in-memory store,
 * a store of your own); an application needs none of it beyond naming a store.
 */
package io.sluice.sync.spi;
