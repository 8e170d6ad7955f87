package io.sluice.node;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as people type them, one grammar for every command, option and file: a whole number and
 * a unit ({@code 250ms}, {@code 10s}, {@code 2m}, {@code 1h}, {@code 1d}) or ISO-8601 ({@code PT90S}).
 */
public final class Durations {
  private static final Pattern SHORT = Pattern.compile("(\\d{1,9})\\s*(ms|s|m|h|d)");

  private Durations() {
  }

  /** The duration, or a message saying what a duration looks like. */
  public static Duration parse(String text) {
    if (text == null) {
      throw new IllegalArgumentException("null is not a duration (" + FORMS + ")");
    }
    Matcher m = SHORT.matcher(text.trim().toLowerCase(Locale.ROOT));
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
      return Duration.parse(text.trim());
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException("'" + text + "' is not a duration (" + FORMS + ")", e);
    }
  }

  /**
   * The shortest of the short forms that says it exactly ({@code 90s}, {@code 2m}, {@code 250ms}), and
   * ISO-8601 for what they cannot say ({@code PT0.0005S}, a negative duration): what {@link #parse}
   * reads back to the same duration, and what every message of Sluice's prints a duration as.
   */
  public static String format(Duration d) {
    if (d == null) {
      return "null"; // (a message saying what it got: a setter refusing null)
    }
    if (d.isNegative() || d.getNano() % 1_000_000 != 0 || d.getSeconds() > Long.MAX_VALUE / 1_000 - 1) {
      return d.toString();
    }
    long ms = d.toMillis();
    if (ms == 0) {
      return "0s";
    }
    for (int i = 0; i < UNIT_MILLIS.length; i++) {
      if (ms % UNIT_MILLIS[i] == 0) {
        long count = ms / UNIT_MILLIS[i];
        // (the short forms take at most nine digits)
        return count <= 999_999_999L ? count + UNIT_NAMES[i] : d.toString();
      }
    }
    throw new AssertionError(); // (every whole number of milliseconds is one of milliseconds)
  }

  private static final long[] UNIT_MILLIS = {86_400_000L, 3_600_000L, 60_000L, 1_000L, 1L};
  private static final String[] UNIT_NAMES = {"d", "h", "m", "s", "ms"};

  /** {@link #format} of a duration in nanoseconds. */
  public static String formatNanos(long nanos) {
    return format(Duration.ofNanos(nanos));
  }

  private static final String FORMS = "a whole number with ms, s, m, h or d, e.g. 500ms, 10s, 1d; or ISO-8601 like PT90S";
}
