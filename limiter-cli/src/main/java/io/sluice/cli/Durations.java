package io.sluice.cli;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as people type them: {@code 250ms}, {@code 10s}, {@code 2m}, {@code 1h}. */
public final class Durations {
  private static final Pattern FORM = Pattern.compile("(\\d{1,9})\\s*(ms|s|m|h)");

  private Durations() {
  }

  public static Duration parse(String text) {
    Matcher m = FORM.matcher(text.trim().toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw new IllegalArgumentException("'" + text + "' is not a duration (a whole number with ms, s, m or h, e.g. 500ms, 10s)");
    }
    long n = Long.parseLong(m.group(1));
    switch (m.group(2)) {
      case "ms":
        return Duration.ofMillis(n);
      case "s":
        return Duration.ofSeconds(n);
      case "m":
        return Duration.ofMinutes(n);
      default:
        return Duration.ofHours(n);
    }
  }

  public static String format(Duration d) {
    long ms = d.toMillis();
    if (ms % 3_600_000 == 0 && ms > 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0 && ms > 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1_000 == 0 && ms > 0) {
      return ms / 1_000 + "s";
    }
    return ms + "ms";
  }
}
