package io.sluice.http.serve;

import io.sluice.node.Limit;
import io.sluice.node.Mode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The sidecar's limits as text, one per option or line:
 * <pre>
 * NAME=LIMIT/WINDOW[,ALGORITHM][,MODE]
 *
 * api=1000/1m                           1,000 per minute, sliding window counter (the default)
 * login=5/15m,fixed-window              5 per 15 minutes, fixed window
 * beta=100/1s,sliding-window-counter,shadow
 * </pre>
 * Windows: a number and a unit ({@code ms}, {@code s}, {@code m}, {@code h}, {@code d}) or ISO-8601
 * ({@code PT90S}). Algorithms: {@code sliding-window-counter}, {@code fixed-window} (the distributed
 * limiter counts windows). Modes: {@code hard} (default), {@code soft}, {@code shadow}. In a file,
 * blank lines and lines starting with {@code #} are skipped.
 */
public final class LimitSpec {
  private static final Pattern SPEC = Pattern.compile("\\s*([^=\\s]+)\\s*=\\s*(\\d{1,10})\\s*/\\s*([^,\\s]+)\\s*((?:,\\s*[^,\\s]+\\s*)*)");
  private static final Pattern SHORT_DURATION = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)");

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
    Duration window = duration(m.group(3), spec);
    String algorithm = "sliding-window-counter";
    Mode mode = Mode.HARD;
    boolean sawAlgorithm = false;
    boolean sawMode = false;
    for (String raw : m.group(4).split(",")) {
      String word = raw.trim().toLowerCase(Locale.ROOT);
      if (word.isEmpty()) {
        continue;
      }
      if (word.equals("sliding-window-counter") || word.equals("fixed-window")) {
        if (sawAlgorithm) {
          throw new IllegalArgumentException("limit: two algorithms in \"" + spec + "\"");
        }
        sawAlgorithm = true;
        algorithm = word;
      } else if (word.equals("hard") || word.equals("soft") || word.equals("shadow")) {
        if (sawMode) {
          throw new IllegalArgumentException("limit: two modes in \"" + spec + "\"");
        }
        sawMode = true;
        mode = Mode.valueOf(word.toUpperCase(Locale.ROOT));
      } else {
        throw new IllegalArgumentException("limit: unknown word \"" + raw.trim() + "\" in \"" + spec
            + "\" (algorithms: sliding-window-counter, fixed-window; modes: hard, soft, shadow)");
      }
    }
    Limit.Builder b = algorithm.equals("fixed-window") ? Limit.fixedWindow(name) : Limit.slidingWindowCounter(name);
    try {
      return b.limit(count).window(window).mode(mode).build();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("limit \"" + spec + "\": " + e.getMessage(), e);
    }
  }

  /** The limits of a file, one per line; errors name the file and line. */
  public static List<Limit> parseFile(Path file) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException("limitsFile: cannot read " + file + ": " + e.getMessage(), e);
    }
    List<Limit> limits = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).trim();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      try {
        limits.add(parse(line));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(file + ":" + (i + 1) + ": " + e.getMessage(), e);
      }
    }
    return limits;
  }

  /** {@code 250ms}, {@code 10s}, {@code 1m}, {@code 1h}, {@code 1d}, or ISO-8601 {@code PT1M}. */
  public static Duration duration(String text, String where) {
    Matcher m = SHORT_DURATION.matcher(text);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      switch (m.group(2)) {
        case "ms":
          return Duration.ofMillis(n);
        case "s":
          return Duration.ofSeconds(n);
        case "m":
          return Duration.ofMinutes(n);
        case "h":
          return Duration.ofHours(n);
        default:
          return Duration.ofDays(n);
      }
    }
    try {
      return Duration.parse(text);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException("duration: \"" + text + "\" in \"" + where
          + "\" is not a duration (250ms, 10s, 1m, 1h, 1d or ISO-8601 like PT90S)", e);
    }
  }

  static String syntax() {
    return "NAME=LIMIT/WINDOW[,sliding-window-counter|fixed-window][,hard|soft|shadow], e.g. api=1000/1m";
  }
}
