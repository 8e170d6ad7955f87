package io.sluice.cli;

import io.sluice.node.Durations;
import java.time.Duration;
import picocli.CommandLine;

/** Durations on the command line: {@code 500ms}, {@code 2s}, {@code 1m} (see {@link Durations#parse}). */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
  @Override
  public Duration convert(String value) {
    try {
      return Durations.parse(value);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.TypeConversionException(e.getMessage());
    }
  }
}
