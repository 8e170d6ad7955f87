package io.sluice.node;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Limits as text, one per option or line; the sidecar's {@code --limit} and the limit lines of a
 * {@link RulesFile}:
 * <pre>
 * NAME=COUNT/PERIOD[,ALGORITHM][,MODE][,burst=N]
 *
 * api=1000/1m                           1,000 per minute, sliding window counter (the default)
 * login=5/15m,fixed-window              5 per 15 minutes, fixed window
 * free=1/1s,token-bucket,burst=60       a token bucket: 1 a second, bursts of up to 60
 * uploads=10/1m,leaky-bucket            a leaky bucket (meter): 10 a minute, room for 10
 * beta=100/1s,sliding-window-counter,shadow
 * </pre>
 * Periods: a number and a unit ({@code ms}, {@code s}, {@code m}, {@code h}, {@code d}) or ISO-8601
 * ({@code PT90S}). Algorithms: {@code sliding-window-counter}, {@code fixed-window},
 * {@code sliding-window-log}, {@code token-bucket} and {@code leaky-bucket} (COUNT per PERIOD is the
 * refill or leak rate; {@code burst} the capacity, COUNT when not given). Modes: {@code hard}
 * (default), {@code soft}, {@code shadow}.
 */
public final class LimitSpec {
  private static final Pattern SPEC = Pattern.compile("\\s*([^=\\s]+)\\s*=\\s*(\\d{1,10})\\s*/\\s*([^,\\s]+)\\s*((?:,\\s*[^,\\s]+\\s*)*)");
  private static final Pattern BURST = Pattern.compile("burst=(\\d{1,10})");
  private static final List<String> ALGORITHMS = List.of("sliding-window-counter", "fixed-window",
      "sliding-window-log", "token-bucket", "leaky-bucket");

  private LimitSpec() {
  }

  /** One limit; the message of a bad spec says what is wrong and shows the syntax. */
  public static Limit parse(String spec) {
    if (spec == null || spec.isBlank()) {
      throw new IllegalArgumentException("limit: must not be empty (" + syntax() + ")");
    }
    Matcher m = SPEC.matcher(spec);
    if (!m.matches()) {
      throw new IllegalArgumentException("limit: cannot read \"" + spec + "\" (" + syntax() + ")");
    }
    String name = m.group(1);
    long count = Long.parseLong(m.group(2));
    Duration period = duration(m.group(3), spec);
    String algorithm = null;
    Mode mode = null;
    long burst = -1;
    for (String raw : m.group(4).split(",")) {
      String word = raw.trim().toLowerCase(Locale.ROOT);
      if (word.isEmpty()) {
        continue;
      }
      Matcher burstWord = BURST.matcher(word);
      if (ALGORITHMS.contains(word)) {
        if (algorithm != null) {
          throw new IllegalArgumentException("limit: two algorithms in \"" + spec + "\"");
        }
        algorithm = word;
      } else if (word.equals("hard") || word.equals("soft") || word.equals("shadow")) {
        if (mode != null) {
          throw new IllegalArgumentException("limit: two modes in \"" + spec + "\"");
        }
        mode = Mode.valueOf(word.toUpperCase(Locale.ROOT));
      } else if (burstWord.matches()) {
        if (burst >= 0) {
          throw new IllegalArgumentException("limit: two bursts in \"" + spec + "\"");
        }
        burst = Long.parseLong(burstWord.group(1));
      } else {
        throw new IllegalArgumentException("limit: unknown word \"" + raw.trim() + "\" in \"" + spec
            + "\" (algorithms: " + String.join(", ", ALGORITHMS) + "; modes: hard, soft, shadow; burst=N)");
      }
    }
    algorithm = algorithm == null ? "sliding-window-counter" : algorithm;
    boolean bucket = algorithm.endsWith("-bucket");
    if (burst >= 0 && !bucket) {
      throw new IllegalArgumentException("limit: burst is a bucket's capacity; " + algorithm + " has none, in \""
          + spec + "\"");
    }
    try {
      Limit.Builder b;
      switch (algorithm) {
        case "token-bucket":
          b = Limit.tokenBucket(name).capacity(burst >= 0 ? burst : count).refill(count, period);
          break;
        case "leaky-bucket":
          b = Limit.leakyBucket(name).capacity(burst >= 0 ? burst : count).leakRate(count, period);
          break;
        case "fixed-window":
          b = Limit.fixedWindow(name).limit(count).window(period);
          break;
        case "sliding-window-log":
          b = Limit.slidingWindowLog(name).limit(count).window(period);
          break;
        default:
          b = Limit.slidingWindowCounter(name).limit(count).window(period);
      }
      return b.mode(mode == null ? Mode.HARD : mode).build();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("limit \"" + spec + "\": " + e.getMessage(), e);
    }
  }

  /** A duration ({@link Durations}); the message names the spec it came from. */
  public static Duration duration(String text, String where) {
    try {
      return Durations.parse(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("duration: " + e.getMessage() + " in \"" + where + "\"", e);
    }
  }

  /** The syntax, for messages. */
  public static String syntax() {
    return "NAME=COUNT/PERIOD[,ALGORITHM][,hard|soft|shadow][,burst=N], e.g. api=1000/1m";
  }
}
