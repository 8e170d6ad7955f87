package io.sluice.sync.spi.state;

import java.util.Map;

/**
 * A store entry with a time to live, as a Hazelcast map entry on its member (the Hazelcast store
 * adapts its {@code ExtendedMapEntry} to this), so that {@link EntryUpdate}s need no store's types.
 */
public interface ExpiringEntry<V> extends Map.Entry<byte[], V> {
  /** Sets the value, to live {@code ttlMillis} from now. */
  void setValue(V value, long ttlMillis);

  /** Sets the value and keeps the entry's time to live (as HINCRBY keeps a Redis key's). */
  void setValueKeepingExpiry(V value);

  /**
   * Writes {@code value} to {@code entry}: to live {@code ttlMillis} when that is positive, else
   * keeping its time to live; a plain entry just takes the value.
   */
  static <V> void write(Map.Entry<byte[], V> entry, V value, long ttlMillis) {
    if (entry instanceof ExpiringEntry) {
      ExpiringEntry<V> e = (ExpiringEntry<V>) entry;
      if (ttlMillis > 0) {
        e.setValue(value, ttlMillis);
      } else {
        e.setValueKeepingExpiry(value);
      }
    } else {
      entry.setValue(value);
    }
  }
}
