package io.sluice.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reload on change: a good file is applied, a bad one leaves the last good configuration in use. */
class ConfigWatcherTest {
  static String config(String unit, int rpu) {
    return "domain: d\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: " + unit + "\n      requests_per_unit: "
        + rpu + "\n";
  }

  static long limitOf(RlsConfig c) {
    return c.match("d", RlsConfigTest.entries("k", "v")).requestsPerUnit();
  }

  @Test
  void aChangedFileIsAppliedAndABadOneKeepsTheLastGood(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("d.yaml");
    Files.writeString(file, config("second", 5));
    List<Path> paths = List.of(dir);
    AtomicReference<RlsConfig> applied = new AtomicReference<>(RlsConfig.load(paths));
    try (ConfigWatcher<RlsConfig> w = new ConfigWatcher<>("configuration", paths, RlsConfig.read(paths), 3_600_000,
        RlsConfig::read, RlsConfig::parse, applied::set,
        c -> limitOf(c) > 1000 ? "maxLimits: too many" : null)) {
      w.checkNow();
      assertThat(w.reloads()).as("unchanged files are not applied again").isZero();

      Files.writeString(file, config("minute", 7));
      w.checkNow();
      assertThat(limitOf(applied.get())).isEqualTo(7);
      assertThat(w.reloads()).isEqualTo(1);
      assertThat(w.lastError()).isNull();

      RlsConfig good = applied.get();
      Files.writeString(file, config("fortnight", 9));
      w.checkNow();
      w.checkNow();
      assertThat(applied.get()).isSameAs(good);
      assertThat(w.lastError()).isEqualTo(file + ":5: descriptors[0].rate_limit.unit: must be second, minute, hour"
          + " or day, got \"fortnight\"");
      assertThat(w.failures()).as("the same broken file is judged once").isEqualTo(1);

      Files.writeString(file, config("minute", 5000));
      w.checkNow();
      assertThat(applied.get()).isSameAs(good);
      assertThat(w.lastError()).isEqualTo("maxLimits: too many");

      Files.delete(file);
      w.checkNow();
      assertThat(applied.get()).isSameAs(good);
      assertThat(w.lastError()).isEqualTo(dir + ": no *.yaml or *.yml file in this directory");

      Files.writeString(dir.resolve("renamed.yml"), config("hour", 3));
      w.checkNow();
      assertThat(limitOf(applied.get())).isEqualTo(3);
      assertThat(w.lastError()).isNull();
      assertThat(w.reloads()).isEqualTo(2);
    }
  }
}
