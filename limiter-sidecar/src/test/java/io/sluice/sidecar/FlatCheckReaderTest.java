package io.sluice.sidecar;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The flat reader against the strict parser it stands in front of, on bodies generated at random
 * (seeded, so a failure replays): every body it reads, the strict parser reads the same; every body
 * the strict parser refuses, it leaves to the strict parser (so the refusal's message is unchanged);
 * and it does read the common checks, or the handler would gain nothing.
 */
class FlatCheckReaderTest {
  private static final int MAX_KEY = 32;
  private static final List<String> LIMITS = List.of("api", "open", "tight");
  private final FlatCheckReader reader = new FlatCheckReader(LIMITS, MAX_KEY);

  @Test
  void readsTheCommonChecks() {
    assertRead("{\"key\":\"user-1\",\"limit\":\"api\"}", "user-1", 1, "api");
    assertRead("{\"key\":\"user-1\"}", "user-1", 1, null);
    assertRead(" {\n\t\"cost\" : 7 ,\r\n \"limit\":\"tight\", \"key\" : \"a b/c:d\" } \n", "a b/c:d", 7, "tight");
    assertRead("{\"limit\":\"other\",\"key\":\"k\",\"cost\":123456789012345678}", "k", 123456789012345678L, "other");
    assertRead("{\"key\":\"" + "k".repeat(MAX_KEY) + "\"}", "k".repeat(MAX_KEY), 1, null);
    assertRead("{\"key\":\"\"}", null, 0, null); // the strict parser's message: "key: must not be empty"
  }

  @Test
  void aKnownLimitIsTheConfiguredString() {
    byte[] body = "{\"key\":\"a\",\"limit\":\"open\"}".getBytes(StandardCharsets.UTF_8);
    assertThat(reader.read(body, body.length).limit).isSameAs(LIMITS.get(1));
  }

  @Test
  void readsOnlyTheFirstLengthBytes() {
    byte[] body = "{\"key\":\"a\"}trailing".getBytes(StandardCharsets.UTF_8);
    assertThat(reader.read(body, 11).key).isEqualTo("a");
    assertThat(reader.read(body, 10)).isNull();
  }

  @Test
  void leavesToTheStrictParserWhatItCannotReadExactly() {
    for (String body : new String[] {"", "[]", "{}", "{\"key\":\"a\\\"b\"}", "{\"key\":\"\u00e9\"}", "{\"key\":\"a\",\"key\":\"b\"}",
        "{\"key\":\"a\",\"cost\":0}", "{\"key\":\"a\",\"cost\":01}", "{\"key\":\"a\",\"cost\":-1}", "{\"key\":\"a\",\"cost\":1.0}",
        "{\"key\":\"a\",\"cost\":1e2}", "{\"key\":\"a\",\"cost\":9999999999999999999}", "{\"key\":\"a\",\"cost\":\"1\"}",
        "{\"key\":\"a\",}", "{\"key\":\"a\"} x", "{\"key\":\"a\"}}", "{\"key\":\"a\"", "{\"key\":7}", "{\"kye\":\"a\"}",
        "{\"identities\":{\"ip\":\"1\"}}", "{\"key\":\"a\",\"plan\":\"pro\"}", "\ufeff{\"key\":\"a\"}", "{\"key\":null}",
        "{\"key\":\"" + "k".repeat(MAX_KEY + 1) + "\"}", "{\"key\":\"a\u0001\"}", "{'key':'a'}", "{key:\"a\"}"}) {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      assertThat(reader.read(bytes, bytes.length)).as(body).isNull();
    }
  }

  /** The property, over generated bodies: valid ones and malformed ones near them. */
  @Test
  void agreesWithTheStrictParserOnGeneratedBodies() {
    Random random = new Random(17);
    int read = 0;
    int refusedByBoth = 0;
    for (int n = 0; n < 50_000; n++) {
      String body = body(random);
      if (random.nextInt(3) == 0) {
        body = mutate(body, random);
      }
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      CheckRequest flat = reader.read(bytes, bytes.length);
      CheckRequest strict;
      try {
        strict = CheckRequest.parse(bytes, MAX_KEY);
      } catch (CheckRequest.BadRequest e) {
        assertThat(flat).as("refused by the strict parser (%s), read by the flat one: %s", e.getMessage(), body).isNull();
        refusedByBoth++;
        continue;
      }
      if (flat != null) {
        assertThat(flat.forRules).isFalse();
        assertThat(flat.key).as(body).isEqualTo(strict.key);
        assertThat(flat.cost).as(body).isEqualTo(strict.cost);
        assertThat(flat.limit).as(body).isEqualTo(strict.limit);
        assertThat(strict.forRules).isFalse();
        read++;
      }
    }
    // the generator reaches both sides of the property, and the reader does its job on plain bodies
    assertThat(read).isGreaterThan(2_000);
    assertThat(refusedByBoth).isGreaterThan(5_000);
  }

  private void assertRead(String body, String key, long cost, String limit) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    CheckRequest r = reader.read(bytes, bytes.length);
    if (key == null) {
      assertThat(r).as(body).isNull();
      return;
    }
    assertThat(r).as(body).isNotNull();
    assertThat(r.key).isEqualTo(key);
    assertThat(r.cost).isEqualTo(cost);
    assertThat(r.limit).isEqualTo(limit);
    assertThat(r.forRules).isFalse();
  }

  private static final String[] FIELDS = {"key", "limit", "cost", "key", "limit", "cost", "kye", "plan", "identities"};
  private static final String[] SPACE = {"", "", "", " ", "\n", "\t", "\r\n ", "\f"};
  private static final String[] COSTS = {"1", "2", "42", "1000", "0", "-1", "01", "1.5", "1e3", "2E1", "99999999999999999999",
      "123456789012345678", "\"3\"", "null", "true", "[]", "{}", "9223372036854775807", "9223372036854775808"};
  private static final String[] STRING_PARTS = {"a", "user-", "7", " ", "/", ":", "_", "\\\"", "\\\\", "\\n", "\\u00e9",
      "\\ud800", "\\ud83d\\ude00", "\u00e9", "\u043a", "\ud83d\ude00", "\u0001", "\t", "\\/", "\u007f", "open", "api"};

  private static String body(Random random) {
    List<String> fields = new ArrayList<>();
    int count = random.nextInt(4);
    fields.add("key"); // most bodies are checks
    for (int i = 0; i < count; i++) {
      fields.add(FIELDS[random.nextInt(FIELDS.length)]);
    }
    if (random.nextInt(10) == 0) {
      fields.remove("key");
    }
    Collections.shuffle(fields, random);
    StringBuilder sb = new StringBuilder(space(random)).append('{');
    for (int i = 0; i < fields.size(); i++) {
      String f = fields.get(i);
      sb.append(i == 0 ? "" : ",").append(space(random)).append('"').append(f).append('"').append(space(random))
          .append(':').append(space(random));
      if (f.equals("cost")) {
        sb.append(COSTS[random.nextInt(COSTS.length)]);
      } else if (f.equals("identities")) {
        sb.append("{\"ip\":").append(string(random)).append('}');
      } else if (random.nextInt(30) == 0) {
        sb.append(random.nextBoolean() ? "7" : "null");
      } else if (f.equals("limit") && random.nextBoolean()) {
        sb.append('"').append(LIMITS.get(random.nextInt(LIMITS.size()))).append('"');
      } else {
        sb.append(string(random));
      }
      sb.append(space(random));
    }
    return sb.append('}').append(space(random)).toString();
  }

  private static String string(Random random) {
    StringBuilder sb = new StringBuilder("\"");
    int parts = random.nextInt(12);
    for (int i = 0; i < parts; i++) {
      // mostly plain characters, as keys are; sometimes every kind the generator knows
      sb.append(random.nextInt(20) == 0 ? STRING_PARTS[random.nextInt(STRING_PARTS.length)]
          : STRING_PARTS[random.nextInt(3)]);
    }
    if (random.nextInt(40) == 0) {
      sb.append("x".repeat(MAX_KEY)); // too long
    }
    return sb.append('"').toString();
  }

  private static String space(Random random) {
    return SPACE[random.nextInt(SPACE.length)];
  }

  /** Cuts, drops, doubles or inserts a character somewhere: malformed bodies near valid ones. */
  private static String mutate(String body, Random random) {
    int at = random.nextInt(body.length() + 1);
    String insertable = "{}[]\",: 0-\\a\u00e9";
    String insert = String.valueOf(insertable.charAt(random.nextInt(insertable.length())));
    switch (random.nextInt(4)) {
      case 0:
        return body.substring(0, at);
      case 1:
        return at < body.length() ? body.substring(0, at) + body.substring(at + 1) : body;
      case 2:
        return at < body.length() ? body.substring(0, at + 1) + body.substring(at) : body + body;
      default:
        return body.substring(0, at) + insert + body.substring(at);
    }
  }
}
