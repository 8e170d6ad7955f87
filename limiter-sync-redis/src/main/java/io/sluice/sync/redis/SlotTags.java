package io.sluice.sync.redis;

import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;

/**
 * For every Redis Cluster hash slot, a short hash tag that falls in it, so that a key made for a
 * slot (a node's sequence key for a group of counters) lands on the same shard as the counters.
 * Found once by trying the decimal numbers in order: all 16,384 slots are covered within a few
 * hundred thousand CRC16s, a few milliseconds.
 */
final class SlotTags {
  private static final String[] TAGS = build();

  private SlotTags() {
  }

  static String tagOf(int slot) {
    if (slot < 0 || slot >= SlotHash.SLOT_COUNT) {
      throw new IllegalArgumentException("slot: must be between 0 and " + (SlotHash.SLOT_COUNT - 1) + ", got " + slot);
    }
    return TAGS[slot];
  }

  private static String[] build() {
    String[] tags = new String[SlotHash.SLOT_COUNT];
    int found = 0;
    for (int i = 0; found < tags.length; i++) {
      String candidate = Integer.toString(i);
      int slot = SlotHash.getSlot(candidate.getBytes(StandardCharsets.US_ASCII));
      if (tags[slot] == null) {
        tags[slot] = candidate;
        found++;
      }
    }
    return tags;
  }
}
