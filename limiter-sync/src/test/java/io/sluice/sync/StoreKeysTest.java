package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.cluster.SlotHash;
import io.sluice.sync.spi.StoreKeys;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Counter keys are injective in (limit name, key) and {@link StoreKeys#keyOf} inverts them: no two
 * limits, or limit and key split differently, ever share a counter.
 */
class StoreKeysTest {
  private static final String PREFIX = "sluice";

  private static byte[] key(String limit, String key) {
    return StoreKeys.counterKey(PREFIX, limit, key);
  }

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /**
   * ASCII names and keys (written straight into one array) and the rest (built part by part) give the
   * documented layout: the byte length of the encoded limit name, in as many digits as it takes.
   */
  @Test
  void asciiAndOtherKeysFollowTheOneLayout() {
    for (String limit : new String[] {"l", "api", "a".repeat(9), "b".repeat(10), "c".repeat(99), "d".repeat(100),
        "caf\u00e9", "\u4e2d"}) {
      for (String user : new String[] {"", "user-000123", "k}{:", "\u00fc", "x\uD83D\uDE00"}) {
        for (String prefix : new String[] {"sluice", "", "p\u00e9"}) {
          byte[] name = limit.getBytes(StandardCharsets.UTF_8);
          String expected = prefix + ":{" + name.length + ":" + limit + ":" + user + "}";
          assertThat(StoreKeys.counterKey(prefix, limit, user)).as("%s / %s / %s", prefix, limit, user)
              .isEqualTo(expected.getBytes(StandardCharsets.UTF_8));
          assertThat(StoreKeys.keyOf(prefix, limit, StoreKeys.counterKey(prefix, limit, user))).isEqualTo(user);
        }
      }
    }
  }

  @Test
  void aLimitAndAKeyThatJoinAlikeAreTwoCounters() {
    // the pair: both were sluice:{a:b:c}
    assertThat(text(key("a", "b:c"))).isEqualTo("sluice:{1:a:b:c}");
    assertThat(text(key("a:b", "c"))).isEqualTo("sluice:{3:a:b:c}");
    assertThat(key("a", "b:c")).isNotEqualTo(key("a:b", "c"));
    assertThat(text(key("api", "user-1"))).isEqualTo("sluice:{3:api:user-1}");
    assertThat(text(StoreKeys.counterKey("other", "api", "user-1"))).isEqualTo("other:{3:api:user-1}");
  }

  /** A store that keeps a limit's header (its exact calls) names the very keys the whole encoding names. */
  @Test
  void aKeyFromItsLimitsHeaderIsTheSameKey() {
    io.sluice.node.Limit fixed = io.sluice.node.Limit.fixedWindow("a:b").limit(5)
        .window(java.time.Duration.ofSeconds(1)).build();
    io.sluice.node.Limit bucket = io.sluice.node.Limit.tokenBucket("api").capacity(5)
        .refill(1, java.time.Duration.ofSeconds(1)).build();
    for (io.sluice.node.Limit limit : List.of(fixed, bucket)) {
      byte[] header = StoreKeys.counterKeyHeader(PREFIX, limit);
      for (String k : List.of("k", "b:c", "}{", "x\uDC00\uD800", "", "é".repeat(300))) {
        assertThat(StoreKeys.counterKey(header, k)).isEqualTo(StoreKeys.counterKey(PREFIX, limit, k));
      }
    }
    assertThat(text(StoreKeys.counterKey(StoreKeys.counterKeyHeader(PREFIX, bucket), "u"))).isEqualTo("sluice:{8:api#gcra:u}");
  }

  @Test
  void theLengthCountsBytesOfTheEncodedLimitName() {
    assertThat(text(key("ключ", "k"))).isEqualTo("sluice:{8:ключ:k}");
    assertThat(text(key("x".repeat(64), "k"))).isEqualTo("sluice:{64:" + "x".repeat(64) + ":k}");
    // a lone surrogate: 0xFF and two UTF-16 bytes
    byte[] lone = key("\uD800", "k");
    assertThat(Arrays.copyOfRange(lone, 0, 10)).isEqualTo("sluice:{3:".getBytes(StandardCharsets.UTF_8));
    assertThat(Arrays.copyOfRange(lone, 10, 14)).containsExactly(0xFF, 0xD8, 0x00, ':');
  }

  /** 0xFF, then the UTF-16 code units as they are (not as the UTF-16 charset writes them: U+FFFD). */
  @Test
  void unpairedSurrogatesAreWrittenAsTheirOwnCodeUnits() {
    byte[] k = key("a", "x\uDC00\uD800");
    assertThat(Arrays.copyOfRange(k, "sluice:{1:a:".length(), k.length))
        .containsExactly(0xFF, 0x00, 'x', 0xDC, 0x00, 0xD8, 0x00, '}');
    assertThat(StoreKeys.keyOf(PREFIX, "a", k)).isEqualTo("x\uDC00\uD800");
    assertThat(key("a", "\uD800")).isNotEqualTo(key("a", "\uDC00"));
    // 0xFF and one byte: no key writes that
    byte[] oddKey = Arrays.copyOf(key("a", "\uD800"), "sluice:{1:a:".length() + 3);
    oddKey[oddKey.length - 1] = '}';
    assertThatThrownBy(() -> StoreKeys.keyOf(PREFIX, "a", oddKey)).isInstanceOf(IllegalArgumentException.class);
  }

  /** Pairs chosen to collide under any layout that joins limit and key with a separator only. */
  @Test
  void trickyLimitsAndKeysAreAllDistinctAndReadBack() {
    String[][] pairs = {
        {"a", "b:c"}, {"a:b", "c"}, {"a:b:c", ""}, {"", "a:b:c"}, {"a", ""}, {"", "a"}, {"", ""}, {":", ""}, {"", ":"},
        {":", ":"}, {"::", ""}, {"", "::"},
        // digits that look like a length
        {"1", "a:b"}, {"1:a", "b"}, {"a", "1:a:b"}, {"3", "api:k"}, {"3:api", "k"}, {"10", "x"}, {"1", "0:x"},
        {"", "1:a:b"}, {"0", ""}, {"", "0:"}, {"0:", ""},
        // braces
        {"a", "}"}, {"a}", ""}, {"a", "{"}, {"a{", ""}, {"{", "}"}, {"a", "b}c"}, {"a", "b}d"}, {"a:b}", "c"},
        {"a", "b:c}"}, {"}", "{"}, {"a", "{b:c}"}, {"a:{b", "c}"},
        // unicode and what a lossy encoding makes of a lone surrogate
        {"a", "用户-🚦-ключ"}, {"用户", "🚦"}, {"a", "?"}, {"a", "\uD800"}, {"a", "\uDC00"}, {"a", "\uDC00\uD800"},
        {"a", "\uD83D\uDEA6"}, {"a", "\uD83D"}, {"a", "\uDEA6"}, {"\uD800", "a"}, {"?", "a"}, {"\uD800:a", ""},
        {"a", "\uFFFD"}, {"a", "a\uD800b"}, {"a", "a\uDC00b"}, {"a", "a\uFFFDb"}, {"a", "a?b"}, {"\uDC00", "a"},
        {"a", "\u00FF"}, {"a", "\uFFFF"}, {"a", "\u0000"}, {"a\u0000", ""}, {"a", "x".repeat(10_000)},
    };
    Map<ByteBuffer, String> seen = new HashMap<>();
    for (String[] p : pairs) {
      byte[] k = key(p[0], p[1]);
      String was = seen.put(ByteBuffer.wrap(k), Arrays.toString(p));
      assertThat(was).as("%s and %s share %s", was, Arrays.toString(p), text(k)).isNull();
      assertThat(StoreKeys.keyOf(PREFIX, p[0], k)).as(Arrays.toString(p)).isEqualTo(p[1]);
    }
  }

  /**
   * The whole limit name and key are the hash tag, '{' or not; a '}' in the key ends the tag early (as
   * before), which moves the key's slot but never merges two keys; and the tag is never empty.
   */
  @Test
  void theHashTagIsTheLimitAndTheKeyUpToAClosingBrace() {
    for (String k : List.of("alice", "{", "a{b", "{a}", "a:b", "", "用户")) {
      String tag = "3:api:" + k;
      if (k.contains("}")) {
        tag = tag.substring(0, tag.indexOf('}'));
      }
      assertThat(SlotHash.getSlot(key("api", k))).as(k).isEqualTo(SlotHash.getSlot(tag.getBytes(StandardCharsets.UTF_8)));
    }
    assertThat(SlotHash.getSlot(key("api", "a}x"))).isEqualTo(SlotHash.getSlot("3:api:a".getBytes(StandardCharsets.UTF_8)));
    assertThat(SlotHash.getSlot(key("api", "a}y"))).isEqualTo(SlotHash.getSlot(key("api", "a}x")));
    assertThat(key("api", "a}y")).isNotEqualTo(key("api", "a}x"));
    assertThat(SlotHash.getSlot(key("api", "}"))).isEqualTo(SlotHash.getSlot("3:api:".getBytes(StandardCharsets.UTF_8)));
    // keys do spread: 1,000 keys of one limit over many slots
    Set<Integer> slots = new HashSet<>();
    for (int i = 0; i < 1_000; i++) {
      slots.add(SlotHash.getSlot(key("api", "user-" + i)));
    }
    assertThat(slots).hasSizeGreaterThan(900);
  }

  @Test
  void keyOfRejectsKeysOfAnotherLimitOrLayout() {
    assertThatThrownBy(() -> StoreKeys.keyOf(PREFIX, "a", key("a:b", "c"))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("counterKey:");
    assertThatThrownBy(() -> StoreKeys.keyOf(PREFIX, "a:b", key("a", "b:c"))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> StoreKeys.keyOf("other", "a", key("a", "b"))).isInstanceOf(IllegalArgumentException.class);
    // the layout before the length: sluice:{<limit>:<key>}
    assertThatThrownBy(() -> StoreKeys.keyOf(PREFIX, "api", "sluice:{api:alice}".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(IllegalArgumentException.class);
    byte[] cut = key("api", "alice");
    assertThatThrownBy(() -> StoreKeys.keyOf(PREFIX, "api", Arrays.copyOf(cut, cut.length - 1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> StoreKeys.keyOf(PREFIX, "api", new byte[0])).isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * Many random (limit, key) pairs over a small alphabet of separators, braces and digits, where a
   * layout without the length collides often (checked: the old one does, on the same pairs), plus
   * unicode and lone surrogates: distinct pairs give distinct bytes, and keyOf reads each key back.
   */
  @Test
  void randomPairsNeverCollideAndReadBack() {
    Random random = new Random(20_260_101L);
    String alphabet = ":{}0123456789ab";
    String[] rare = {"é", "用", "\uD83D\uDEA6", "\uD800", "\uDC00", "\u0000", "\u00FF", "?"};
    Map<ByteBuffer, List<String>> byKey = new HashMap<>();
    Map<String, List<String>> byOldKey = new HashMap<>();
    int pairs = 200_000;
    int oldCollisions = 0;
    for (int i = 0; i < pairs; i++) {
      String limit = randomString(random, alphabet, rare);
      String key = randomString(random, alphabet, rare);
      List<String> pair = List.of(limit, key);
      byte[] k = key(limit, key);
      List<String> was = byKey.putIfAbsent(ByteBuffer.wrap(k), pair);
      if (was != null && !was.equals(pair)) {
        throw new AssertionError(String.format("%s and %s share the counter key %s", was, pair, Arrays.toString(k)));
      }
      assertThat(StoreKeys.keyOf(PREFIX, limit, k)).isEqualTo(key);
      List<String> wasOld = byOldKey.putIfAbsent(limit + ":" + key, pair);
      if (wasOld != null && !wasOld.equals(pair)) {
        oldCollisions++;
      }
    }
    assertThat(byKey.size()).as("distinct pairs drawn").isGreaterThan(pairs / 2);
    assertThat(oldCollisions).as("pairs the old layout <limit>:<key> merged").isGreaterThan(1_000);
  }

  private static String randomString(Random random, String alphabet, String[] rare) {
    int length = random.nextInt(7);
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < length; i++) {
      if (random.nextInt(10) == 0) {
        s.append(rare[random.nextInt(rare.length)]);
      } else {
        s.append(alphabet.charAt(random.nextInt(alphabet.length())));
      }
    }
    return s.toString();
  }

  /** Every (limit, key) with limit and key from a small set, exhaustively: no two share a counter. */
  @Test
  void allSmallPairsAreDistinct() {
    List<String> words = new ArrayList<>();
    String alphabet = ":{}1a";
    words.add("");
    for (int round = 0; round < 3; round++) {
      List<String> longer = new ArrayList<>();
      for (String w : words) {
        if (w.length() == round) {
          for (char c : alphabet.toCharArray()) {
            longer.add(w + c);
          }
        }
      }
      words.addAll(longer);
    }
    Set<ByteBuffer> keys = new HashSet<>();
    for (String limit : words) {
      for (String key : words) {
        assertThat(keys.add(ByteBuffer.wrap(key(limit, key)))).as("%s / %s", limit, key).isTrue();
      }
    }
    assertThat(keys).hasSize(words.size() * words.size());
  }
}
