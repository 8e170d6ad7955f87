package io.sluice.sync.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.sync.redis.FlushWire.Kind;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Java side of flush.lua's wire layout against the script itself: the head and the widths the
 * script reads each delta by (its {@code HEAD} and {@code width} table) are the ones the codec
 * declares, the codec writes every argument of every kind, a batch of every kind lines up argument by
 * argument, and the answer is read back at the places the script writes them.
 */
class FlushWireTest {
  /** Every number on the wire is its decimal digits in ASCII, as Long.toString writes them. */
  @Test
  void numbersAreTheirDecimalDigits() {
    for (long v : new long[] {0, 1, 9, 10, 99, 100, 123_456_789, 1_000_000_000_000L, Long.MAX_VALUE, -1, -10,
        Long.MIN_VALUE}) {
      assertThat(new String(RedisCounterStore.ascii(v), StandardCharsets.US_ASCII)).isEqualTo(Long.toString(v));
    }
    java.util.SplittableRandom random = new java.util.SplittableRandom(5);
    for (int i = 0; i < 10_000; i++) {
      long v = random.nextLong() >>> random.nextInt(64);
      assertThat(new String(RedisCounterStore.ascii(v), StandardCharsets.US_ASCII)).isEqualTo(Long.toString(v));
    }
  }

  private final Counter sliding = Counter.of(Limit.slidingWindowCounter("s").limit(100).window(Duration.ofSeconds(1)).build());
  private final Counter fixed = Counter.of(Limit.fixedWindow("f").limit(100).window(Duration.ofSeconds(1)).build());
  private final Counter bucket = Counter.of(Limit.tokenBucket("b").capacity(10).refill(1, Duration.ofSeconds(1)).build());
  private final Counter region = Counter.regional(Limit.fixedWindow("r").limit(300).window(Duration.ofSeconds(1)).build(), 3);

  private static String script() throws IOException {
    try (InputStream in = FlushWire.class.getResourceAsStream("lua/flush.lua")) {
      assertThat(in).as("flush.lua in the jar").isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** flush.lua's {@code local width = {w = 11, ...}}, as the script has it. */
  private static Map<String, Integer> scriptWidths() throws IOException {
    Matcher table = Pattern.compile("local width = \\{([^}]*)\\}").matcher(script());
    assertThat(table.find()).as("flush.lua's width table").isTrue();
    Map<String, Integer> widths = new HashMap<>();
    Matcher entry = Pattern.compile("(\\w+)\\s*=\\s*(\\d+)").matcher(table.group(1));
    while (entry.find()) {
      widths.put(entry.group(1), Integer.parseInt(entry.group(2)));
    }
    return widths;
  }

  @Test
  void theHeadIsTheScripts() throws IOException {
    Matcher head = Pattern.compile("local HEAD = (\\d+)").matcher(script());
    assertThat(head.find()).as("flush.lua's HEAD").isTrue();
    assertThat(FlushWire.HEAD).isEqualTo(Integer.parseInt(head.group(1)));
  }

  @Test
  void everyKindTakesTheWidthTheScriptReadsItBy() throws IOException {
    Map<String, Integer> codec = new HashMap<>();
    for (Kind k : Kind.values()) {
      codec.put(k.letter, k.width);
    }
    assertThat(codec).isEqualTo(scriptWidths());
  }

  @Test
  void everyCounterGoesAsItsKind() {
    assertThat(Kind.of(sliding)).isEqualTo(Kind.SLIDING);
    assertThat(Kind.of(fixed)).isEqualTo(Kind.FIXED);
    assertThat(Kind.of(bucket)).isEqualTo(Kind.GCRA);
    assertThat(Kind.of(region)).isEqualTo(Kind.REGION);
    assertThat(Kind.of(new Delta(fixed, "a", 7, 1).afterItsWindow())).isEqualTo(Kind.FIXED_OVER);
    assertThat(Kind.of(new Delta(fixed, "a", 7, 1))).isEqualTo(Kind.FIXED);
  }

  @Test
  void aDeltaOfEachKindFillsItsWidth() {
    for (Counter c : List.of(sliding, fixed, bucket, region)) {
      Batch batch = new Batch("n1", 0, 42, 1_000_000, List.of(new Delta(c, "a", 7, 1)));
      FlushWire.Call call = FlushWire.encode(batch, "sluice", null, "86400".getBytes(StandardCharsets.US_ASCII), 41,
          c.regional() ? c : null);
      Kind kind = Kind.of(c);
      assertThat(call.args().length).as("arguments of a %s delta", kind).isEqualTo(FlushWire.HEAD + kind.width);
      assertThat(List.of(call.args())).as("arguments of a %s delta", kind).doesNotContainNull();
      assertThat(new String(call.args()[FlushWire.HEAD], StandardCharsets.US_ASCII)).isEqualTo(kind.letter);
    }
  }

  @Test
  void aBatchOfEveryKindLinesUpArgumentByArgument() throws IOException {
    Map<String, Integer> script = scriptWidths();
    List<Delta> deltas = List.of(new Delta(sliding, "a", 7, 1), new Delta(bucket, "b", 0, 2), new Delta(fixed, "c", 7, 3),
        new Delta(fixed, "e", 6, 5).afterItsWindow(), new Delta(region, "d", 7, 4));
    Batch batch = new Batch("n1", 0, 42, 1_000_000, deltas);
    FlushWire.Call call = FlushWire.encode(batch, "sluice", null, "86400".getBytes(StandardCharsets.US_ASCII), 41, region);
    assertThat(call.keys().length).isEqualTo(1 + deltas.size() + 1); // sequence key, counters, demand index
    // walk the arguments as the script does: a kind, then its width
    int cursor = FlushWire.HEAD;
    for (Delta d : deltas) {
      String kind = new String(call.args()[cursor], StandardCharsets.US_ASCII);
      assertThat(kind).isEqualTo(Kind.of(d).letter);
      assertThat(new String(call.args()[cursor + 3], StandardCharsets.US_ASCII)).as("amount of %s", kind)
          .isEqualTo(Long.toString(d.amount()));
      cursor += script.get(kind);
    }
    assertThat(cursor).isEqualTo(call.args().length);
    assertThat(new String(call.args()[5], StandardCharsets.US_ASCII)).as("the record's creator").isEqualTo("41");
  }

  @Test
  void theAnswerIsReadWhereTheScriptWritesIt() {
    List<Delta> deltas = List.of(new Delta(sliding, "a", 7, 1), new Delta(bucket, "b", 0, 2), new Delta(region, "d", 7, 4),
        new Delta(fixed, "c", 7, 3));
    // applied, created; window: count, previous, claim, split, taken, claim ahead; gcra: backlog, 0;
    // region: count, previous, share, next share; fixed window: count, 0, claim, 0, taken, claim ahead
    List<Object> reply = List.<Object>of(1L, 41L, 10L, 9L, 5L, 3L, 1L, 0L, 700L, 0L, 20L, 19L, 100L, 110L, 30L, 0L, 6L,
        0L, 0L, 4L);
    int answered = 2;
    for (Delta d : deltas) {
      answered += Kind.of(d.counter()).answerWidth;
    }
    assertThat(answered).as("the reply's length by the kinds' answer widths").isEqualTo(reply.size());
    FlushResult r = FlushWire.decode(reply, deltas);
    assertThat(r.applied()).isTrue();
    assertThat(r.current(0)).isEqualTo(10);
    assertThat(r.previous(0)).isEqualTo(9);
    assertThat(r.claim(0)).isEqualTo(5);
    assertThat(r.split(0)).isEqualTo(3);
    assertThat(r.taken(0)).isTrue();
    assertThat(r.current(1)).isEqualTo(700);
    assertThat(r.claim(1)).isEqualTo(-1);
    assertThat(r.current(2)).isEqualTo(20);
    assertThat(r.claim(2)).isEqualTo(-1);
    assertThat(r.share(2)).isEqualTo(100);
    assertThat(r.nextShare(2)).isEqualTo(110);
    assertThat(r.current(3)).isEqualTo(30);
    assertThat(r.claim(3)).isEqualTo(6);
    assertThat(r.taken(3)).isFalse();
    assertThat(r.ahead(3)).isEqualTo(4);
    assertThat(r.ahead(0)).isZero();
  }
}
