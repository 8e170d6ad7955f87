package io.sluice.sync;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Store key names, as bytes so that any key (binary, unicode, huge) maps to exactly one store key:
 * well-formed text is UTF-8; a string with unpaired surrogates, which UTF-8 cannot carry, is written
 * as a 0xFF marker (a byte UTF-8 never uses) followed by its UTF-16 code units. The user key sits
 * inside the Redis hash tag, so keys spread over cluster slots.
 */
final class StoreKeys {
  private static final byte MARKER = (byte) 0xFF;

  private StoreKeys() {
  }

  /** {@code <prefix>:{<limit>:<key>}} */
  static byte[] counterKey(String prefix, String limitName, String key) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(prefix.length() + limitName.length() + key.length() + 8);
    out.writeBytes(prefix.getBytes(StandardCharsets.UTF_8));
    out.writeBytes(":{".getBytes(StandardCharsets.UTF_8));
    out.writeBytes(limitName.getBytes(StandardCharsets.UTF_8));
    out.write(':');
    out.writeBytes(encode(key));
    out.write('}');
    return out.toByteArray();
  }

  /** {@code <prefix>:demand:<limit>}: the counter keys of a regional quota by the last window they were written in. */
  static byte[] demandIndexKey(String prefix, String limitName) {
    return (prefix + ":demand:" + limitName).getBytes(StandardCharsets.UTF_8);
  }

  /** {@code <prefix>:coordinator:epoch}: the highest coordinator epoch a region has accepted shares from. */
  static byte[] epochKey(String prefix) {
    return (prefix + ":coordinator:epoch").getBytes(StandardCharsets.UTF_8);
  }

  /**
   * {@code <prefix>:seq:<node>:<group>}: a node's last applied sequence in one group; in a cluster,
   * where the group is a hash slot, with a hash tag that falls in that very slot.
   */
  static byte[] sequenceKey(String prefix, String nodeId, int group, boolean cluster) {
    String key = prefix + ":seq:" + nodeId + ":" + group;
    if (cluster) {
      key += ":{" + SlotTags.tagOf(group) + "}";
    }
    return key.getBytes(StandardCharsets.UTF_8);
  }

  /** The user key of a counter key written by {@link #counterKey}; the inverse of it. */
  static String keyOf(String prefix, String limitName, byte[] counterKey) {
    int from = prefix.getBytes(StandardCharsets.UTF_8).length + 2 + limitName.getBytes(StandardCharsets.UTF_8).length + 1;
    if (counterKey.length < from + 1) {
      throw new IllegalArgumentException("counterKey: not a key of limit " + limitName);
    }
    byte[] encoded = java.util.Arrays.copyOfRange(counterKey, from, counterKey.length - 1);
    if (encoded.length > 0 && encoded[0] == MARKER) {
      return new String(encoded, 1, encoded.length - 1, StandardCharsets.UTF_16BE);
    }
    return new String(encoded, StandardCharsets.UTF_8);
  }

  static byte[] encode(String key) {
    if (wellFormed(key)) {
      return key.getBytes(StandardCharsets.UTF_8);
    }
    byte[] utf16 = key.getBytes(StandardCharsets.UTF_16BE);
    byte[] out = new byte[utf16.length + 1];
    out[0] = MARKER;
    System.arraycopy(utf16, 0, out, 1, utf16.length);
    return out;
  }

  private static boolean wellFormed(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)) {
        if (i + 1 == s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
          return false;
        }
        i++;
      } else if (Character.isLowSurrogate(c)) {
        return false;
      }
    }
    return true;
  }
}
