package io.sluice.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DurationsTest {

  @ParameterizedTest
  @CsvSource({"250ms, PT0.25S", "10s, PT10S", "2m, PT2M", "1h, PT1H", "1d, PT24H", "10 S, PT10S", "PT90S, PT1M30S"})
  void readsTheShortFormsAndIso(String text, String iso) {
    assertThat(Durations.parse(text)).isEqualTo(Duration.parse(iso));
  }

  @ParameterizedTest
  @CsvSource({"PT0.25S, 250ms", "PT10S, 10s", "PT1M30S, 90s", "PT2M, 2m", "PT1H, 1h", "PT48H, 2d", "PT0S, 0s",
      "PT0.0005S, PT0.0005S", "PT-1S, PT-1S", "PT1.0001S, PT1.0001S"})
  void formatsTheShortestFormThatSaysItExactly(String iso, String text) {
    assertThat(Durations.format(Duration.parse(iso))).isEqualTo(text);
  }

  @Test
  void whatItFormatsReadsBackAsTheSameDuration() {
    Duration[] samples = {Duration.ZERO, Duration.ofNanos(1), Duration.ofNanos(500_000), Duration.ofMillis(1),
        Duration.ofMillis(1_500), Duration.ofSeconds(61), Duration.ofMinutes(90), Duration.ofHours(25),
        Duration.ofDays(400), Duration.ofSeconds(-5), ChronoUnit.FOREVER.getDuration(), Duration.ofMillis(1_000_000_001),
        Duration.ofSeconds(1_000_000_001), Duration.ofDays(999_999_999), Duration.ofDays(1_000_000_000),
        Duration.ofMillis(999_999_999), Duration.parse("PT1000000.5S")};
    for (Duration d : samples) {
      assertThat(Durations.parse(Durations.format(d))).as("%s", d).isEqualTo(d);
    }
  }

  @Test
  void refusesWhatIsNotADurationSayingWhatOneLooksLike() {
    // (a bare number is refused: 60000 of what? Spring reads it as milliseconds, a rules file would not)
    for (String bad : new String[] {"60000", "2 sec", "1.5s", "5x", ""}) {
      assertThatThrownBy(() -> Durations.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
          .hasMessage("'" + bad + "' is not a duration (a whole number with ms, s, m, h or d, e.g. 500ms, 10s, 1d;"
              + " or ISO-8601 like PT90S)");
    }
  }
}
