/**
 * A key's state in a store that runs no Lua, and the updates the scripts make to it, in Java:
 * {@link io.sluice.sync.spi.state.FlushProcessor} ({@code flush.lua}), {@link
 * io.sluice.sync.spi.state.ExactProcessor} (the exact scripts and {@code give_back.lua}), {@link
 * io.sluice.sync.spi.state.LeaseProcessor} ({@code lease.lua}) and {@link
 * io.sluice.sync.spi.state.TokenClaimProcessor} ({@code token_claim.lua}) as {@link
 * io.sluice.sync.spi.state.EntryUpdate}s over one key's {@link io.sluice.sync.spi.state.CounterEntry}.
 * The Hazelcast store runs them as entry processors and the test kit's in-memory store on a map; the
 * store contracts check both against the Lua scripts. Store internals: public for those two modules,
 * not an API for applications, and free to change between versions (entries are serialized: a
 * Hazelcast cluster runs one version).
 */
package io.sluice.sync.spi.state;
