package io.sluice.sync.spi;

import io.sluice.node.Limit;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Store key names, as bytes so that any key (binary, unicode, huge) maps to exactly one store key:
 * well-formed text is UTF-8; a string with unpaired surrogates, which UTF-8 cannot carry, is written
 * as a 0xFF marker (a byte UTF-8 never uses) followed by its UTF-16 code units. The limit name and the
 * user key sit inside the Redis hash tag, so keys spread over cluster slots.
 *
 * <p>A counter key is {@code <prefix>:{<n>:<limit>:<key>}}, where {@code n} is the length in bytes of
 * the encoded limit name, in decimal. The length makes the layout injective: without it, limit
 * {@code a} with key {@code b:c} and limit {@code a:b} with key {@code c} were both
 * {@code sluice:{a:b:c}}, and one spent the other's budget. Public so that tools and other modules'
 * tests can name a counter in the store without copying the layout.
 */
public final class StoreKeys {
  private static final byte MARKER = (byte) 0xFF;

  private StoreKeys() {
  }

  /**
   * {@code <prefix>:{<n>:<limit>:<key>}}, {@code n} the byte length of the encoded limit name.
   *
   * <p>Injective for a given prefix: after the prefix and ":{" the digits up to the next ':' are n
   * (digits hold no ':'), the n bytes after that ':' are the limit name; after one more ':' every byte
   * but the final '}' is the key. Limit name and key are each encoded one-to-one ({@link #encode}), so
   * distinct (limit, key) pairs give distinct bytes, and {@link #keyOf} reads the key back.
   *
   * <p>Hash tag: Redis Cluster hashes the bytes between the first '{' and the first '}' after it. The
   * first '{' is always the one after the prefix (Redis key prefixes are validated to have none), so a
   * '{' in a limit name or key changes nothing. A '}' in the key (validated limit names cannot have
   * one) ends the tag early: such a key hashes by {@code <n>:<limit>:} and its key up to the '}', as it
   * did before the length was added (then without the n). That only affects how keys spread over
   * slots (keys alike up to their '}' share one); it is never a collision, since the store key is the
   * whole byte string and every node computes the same slot for it. The tag is never empty: it starts
   * with n.
   */
  public static byte[] counterKey(String prefix, String limitName, String key) {
    if (ascii(prefix) && ascii(limitName) && ascii(key)) {
      return asciiCounterKey(prefix, limitName, key);
    }
    byte[] limit = encode(limitName);
    byte[] user = encode(key);
    ByteArrayOutputStream out = new ByteArrayOutputStream(prefix.length() + limit.length + user.length + 16);
    out.writeBytes(header(prefix, limit));
    out.writeBytes(user);
    out.write('}');
    return out.toByteArray();
  }

  /**
   * The counter key of {@code limit} for a user key: {@link #counterKey(String, String, String)} with
   * the limit's {@link #storeName}, so that a limit whose algorithm changes under the same name starts
   * on a key of its own instead of reading the old state with a new meaning (a sorted set where a hash
   * was, window counts where a bucket's backlog was: the scripts failed or over-admitted until the old
   * key expired).
   */
  public static byte[] counterKey(String prefix, Limit limit, String key) {
    return counterKey(prefix, storeName(limit), key);
  }

  /**
   * The bytes {@link #counterKey(String, Limit, String)} puts before the user key, for a caller that
   * names many keys of one limit ({@link #counterKey(byte[], String)}) without encoding the prefix and
   * the limit's name again each time.
   */
  public static byte[] counterKeyHeader(String prefix, Limit limit) {
    return header(prefix, encode(storeName(limit)));
  }

  /**
   * {@link #counterKey(String, Limit, String)} from its header ({@link #counterKeyHeader}): the same
   * bytes.
   */
  public static byte[] counterKey(byte[] header, String key) {
    byte[] user = encode(key);
    byte[] out = Arrays.copyOf(header, header.length + user.length + 1);
    System.arraycopy(user, 0, out, header.length, user.length);
    out[out.length - 1] = '}';
    return out;
  }

  /**
   * The name a limit's counters are stored under: its name for the window algorithms (fixed window
   * and sliding window counter keep the same counts per window, so either reads the other's), and its
   * name with {@code #gcra} (token and leaky buckets) or {@code #log} (sliding log) for the others. A
   * limit name never holds '#', so no limit's store name is another's.
   */
  public static String storeName(Limit limit) {
    switch (limit.algorithm()) {
      case FIXED_WINDOW:
      case SLIDING_WINDOW_COUNTER:
        return limit.name();
      case SLIDING_WINDOW_LOG:
        return limit.name() + "#log";
      default:
        return limit.name() + "#gcra";
    }
  }

  /**
   * The user key of a counter key written by {@link #counterKey} for this prefix and limit: the
   * inverse of it.
   *
   * @throws IllegalArgumentException when the bytes are not a counter key of this prefix and limit in
   *     this layout (another limit's, or one written before the limit name was length-prefixed)
   */
  public static String keyOf(String prefix, String limitName, byte[] counterKey) {
    byte[] header = header(prefix, encode(limitName));
    if (counterKey.length < header.length + 1 || counterKey[counterKey.length - 1] != '}'
        || Arrays.mismatch(counterKey, 0, header.length, header, 0, header.length) != -1) {
      throw new IllegalArgumentException("counterKey: not a key of limit " + limitName);
    }
    return decode(counterKey, header.length, counterKey.length - 1);
  }

  /** The prefix, ":{" (the hash tag opens), n, ':', the limit name and ':': what precedes the user key. */
  /**
   * {@link #counterKey(String, String, String)} for ASCII strings (every character below 0x80, which is
   * its own UTF-8 byte): the same bytes, written into one array. Every flush and claim call makes the
   * key of each delta, so this is the common case made cheap (the general path builds each part apart).
   */
  private static byte[] asciiCounterKey(String prefix, String limitName, String key) {
    int n = limitName.length();
    int digits = n < 10 ? 1 : n < 100 ? 2 : Integer.toString(n).length();
    byte[] out = new byte[prefix.length() + 2 + digits + 1 + n + 1 + key.length() + 1];
    int at = put(prefix, out, 0);
    out[at++] = ':';
    out[at++] = '{';
    for (int i = digits - 1, rest = n; i >= 0; i--, rest /= 10) {
      out[at + i] = (byte) ('0' + rest % 10);
    }
    at += digits;
    out[at++] = ':';
    at = put(limitName, out, at);
    out[at++] = ':';
    at = put(key, out, at);
    out[at] = '}';
    return out;
  }

  private static int put(String ascii, byte[] out, int at) {
    for (int i = 0; i < ascii.length(); i++) {
      out[at++] = (byte) ascii.charAt(i);
    }
    return at;
  }

  private static boolean ascii(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) >= 0x80) {
        return false;
      }
    }
    return true;
  }

  private static byte[] header(String prefix, byte[] limit) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(prefix.length() + limit.length + 16);
    out.writeBytes(prefix.getBytes(StandardCharsets.UTF_8));
    out.writeBytes(":{".getBytes(StandardCharsets.UTF_8));
    out.writeBytes(Integer.toString(limit.length).getBytes(StandardCharsets.US_ASCII));
    out.write(':');
    out.writeBytes(limit);
    out.write(':');
    return out.toByteArray();
  }

  /** {@code <prefix>:demand:<limit>}: the counter keys of a regional quota by the last window they were written in. */
  public static byte[] demandIndexKey(String prefix, String limitName) {
    return (prefix + ":demand:" + limitName).getBytes(StandardCharsets.UTF_8);
  }

  /** {@code <prefix>:nodes}: the node registry (node id to the deadline it counts as alive until, ms). */
  public static byte[] registryKey(String prefix) {
    return (prefix + ":nodes").getBytes(StandardCharsets.UTF_8);
  }

  /** {@code <prefix>:coordinator:epoch}: the highest coordinator epoch a region has accepted shares from. */
  public static byte[] epochKey(String prefix) {
    return (prefix + ":coordinator:epoch").getBytes(StandardCharsets.UTF_8);
  }

  /**
   * {@code <prefix>:seq:<node>:<group>}: a node's last applied sequence in one group; in a Redis
   * cluster, where the group is a hash slot, with {@code slotTag}, a hash tag that falls in that very
   * slot ({@code null}: none).
   */
  public static byte[] sequenceKey(String prefix, String nodeId, int group, String slotTag) {
    String key = prefix + ":seq:" + nodeId + ":" + group;
    if (slotTag != null) {
      key += ":{" + slotTag + "}";
    }
    return key.getBytes(StandardCharsets.UTF_8);
  }

  /** A string's bytes, one-to-one: UTF-8 when well-formed, else 0xFF and its UTF-16 code units. */
  static byte[] encode(String key) {
    if (wellFormed(key)) {
      return key.getBytes(StandardCharsets.UTF_8);
    }
    // code unit by code unit: the UTF-16 charset would write each unpaired surrogate as U+FFFD,
    // which made "\uD800" and "\uDC00" one key (and keyOf answer neither)
    byte[] out = new byte[1 + 2 * key.length()];
    out[0] = MARKER;
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      out[1 + 2 * i] = (byte) (c >>> 8);
      out[2 + 2 * i] = (byte) c;
    }
    return out;
  }

  /** The inverse of {@link #encode}. */
  static String decode(byte[] bytes, int from, int to) {
    if (to > from && bytes[from] == MARKER) {
      if ((to - from - 1) % 2 != 0) {
        throw new IllegalArgumentException("key: an odd number of UTF-16 bytes after the 0xFF marker");
      }
      char[] chars = new char[(to - from - 1) / 2];
      for (int i = 0; i < chars.length; i++) {
        chars[i] = (char) (((bytes[from + 1 + 2 * i] & 0xFF) << 8) | (bytes[from + 2 + 2 * i] & 0xFF));
      }
      return new String(chars);
    }
    return new String(bytes, from, to - from, StandardCharsets.UTF_8);
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
