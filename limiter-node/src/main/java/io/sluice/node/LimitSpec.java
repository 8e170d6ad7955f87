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
    Words words = Words.read(m.group(4), spec);
    String algorithm = words.algorithm == null ? "sliding-window-counter" : words.algorithm;
    boolean bucket = algorithm.endsWith("-bucket");
    if (words.burst >= 0 && !bucket) {
      throw new IllegalArgumentException("limit: burst is a bucket's capacity; " + algorithm + " has none, in \""
          + spec + "\"");
    }
    try {
      Mode mode = words.mode == null ? Mode.HARD : words.mode;
      return builder(algorithm, name, count, period, words.burst).mode(mode).build();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("limit \"" + spec + "\": " + e.getMessage(), e);
    }
  }

  /** The builder of {@code algorithm}'s limit; a bucket holds {@code burst}, or {@code count} when it is negative. */
  private static Limit.Builder builder(String algorithm, String name, long count, Duration period, long burst) {
    switch (algorithm) {
      case "token-bucket":
        return Limit.tokenBucket(name).capacity(burst >= 0 ? burst : count).refill(count, period);
      case "leaky-bucket":
        return Limit.leakyBucket(name).capacity(burst >= 0 ? burst : count).leakRate(count, period);
      case "fixed-window":
        return Limit.fixedWindow(name).limit(count).window(period);
      case "sliding-window-log":
        return Limit.slidingWindowLog(name).limit(count).window(period);
      default:
        return Limit.slidingWindowCounter(name).limit(count).window(period);
    }
  }

  /** The words after the period: an algorithm, a mode and a burst, each at most once (null, or -1, when not given). */
  private static final class Words {
    private String algorithm;
    private Mode mode;
    private long burst = -1;

    static Words read(String text, String spec) {
      Words words = new Words();
      for (String raw : text.split(",")) {
        String word = raw.trim().toLowerCase(Locale.ROOT);
        if (!word.isEmpty()) {
          words.add(word, raw, spec);
        }
      }
      return words;
    }

    private void add(String word, String raw, String spec) {
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
