package io.sluice.sync.spi.state;

import java.io.Serializable;
import java.util.Map;

/**
 * What one store script does to one key's state, as a function of the key's entry: the Java form of
 * {@code flush.lua}, the exact scripts and {@code lease.lua} for stores that run no Lua. The
 * Hazelcast store runs these as entry processors on the key's owner (one at a time per key, so each
 * is atomic); the in-memory test store runs them on a map. Deterministic: the caller's clock travels
 * with the update, so a store may run the same update again on a backup.
 *
 * <p>The entry may be an {@link ExpiringEntry}, whose time to live the update sets as the script's
 * PEXPIRE does; on a plain entry the value is set and no time to live is kept.
 */
public interface EntryUpdate extends Serializable {
  /** Applies the update to {@code entry} (its value null when the key has no state) and answers as the script. */
  long[] process(Map.Entry<byte[], CounterEntry> entry);
}
