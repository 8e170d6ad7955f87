package io.sluice.http.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Algorithm;
import io.sluice.node.Limit;
import io.sluice.node.Mode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LimitSpecTest {
  @Test
  void readsTheShortForm() {
    Limit api = LimitSpec.parse("api=1000/1m");
    assertThat(api.name()).isEqualTo("api");
    assertThat(api.algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW_COUNTER);
    assertThat(api.capacity()).isEqualTo(1000);
    assertThat(api.periodNanos()).isEqualTo(Duration.ofMinutes(1).toNanos());
    assertThat(api.mode()).isEqualTo(Mode.HARD);

    Limit login = LimitSpec.parse(" login = 5 / 15m , fixed-window , shadow ");
    assertThat(login.algorithm()).isEqualTo(Algorithm.FIXED_WINDOW);
    assertThat(login.periodNanos()).isEqualTo(Duration.ofMinutes(15).toNanos());
    assertThat(login.mode()).isEqualTo(Mode.SHADOW);
    assertThat(LimitSpec.parse("x=1/PT90S,soft").periodNanos()).isEqualTo(Duration.ofSeconds(90).toNanos());
    assertThat(LimitSpec.parse("x=1/250ms").periodNanos()).isEqualTo(Duration.ofMillis(250).toNanos());
  }

  @Test
  void badSpecsSayWhatIsWrong() {
    assertThatThrownBy(() -> LimitSpec.parse("api")).hasMessageContaining("NAME=LIMIT/WINDOW");
    assertThatThrownBy(() -> LimitSpec.parse("api=10/1y")).hasMessageStartingWith("duration:");
    assertThatThrownBy(() -> LimitSpec.parse("api=10/1m,token-bucket")).hasMessageContaining("unknown word \"token-bucket\"");
    assertThatThrownBy(() -> LimitSpec.parse("api=10/1m,hard,shadow")).hasMessageContaining("two modes");
    assertThatThrownBy(() -> LimitSpec.parse("api=0/1m")).hasMessageContaining("limit");
    assertThatThrownBy(() -> LimitSpec.parse("bad name=1/1m")).hasMessageContaining("cannot read");
    assertThatThrownBy(() -> LimitSpec.parse("a/b=1/1m")).hasMessageContaining("name");
  }

  @Test
  void filesSkipCommentsAndNameTheBadLine(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("limits.conf");
    Files.writeString(file, "# the API\napi=100/1m\n\n  # logins\nlogin=5/15m,fixed-window\n");
    List<Limit> limits = LimitSpec.parseFile(file);
    assertThat(limits).extracting(Limit::name).containsExactly("api", "login");

    Files.writeString(file, "api=100/1m\nlogin=5/forever\n");
    assertThatThrownBy(() -> LimitSpec.parseFile(file)).hasMessageStartingWith(file + ":2: duration:");
    assertThatThrownBy(() -> LimitSpec.parseFile(dir.resolve("missing"))).hasMessageStartingWith("limitsFile:");
  }
}
