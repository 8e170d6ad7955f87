package io.sluice.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
    assertThatThrownBy(() -> LimitSpec.parse("api")).hasMessageContaining("NAME=COUNT/PERIOD");
    assertThatThrownBy(() -> LimitSpec.parse("api=10/1y")).hasMessageStartingWith("duration:");
    assertThatThrownBy(() -> LimitSpec.parse("api=10/1m,token-buckets")).hasMessageContaining("unknown word \"token-buckets\"");
    assertThatThrownBy(() -> LimitSpec.parse("api=10/1m,burst=5")).hasMessageContaining("burst is a bucket's capacity");
    assertThatThrownBy(() -> LimitSpec.parse("api=10/1m,token-bucket,burst=0")).hasMessageContaining("capacity:");
    assertThatThrownBy(() -> LimitSpec.parse("api=10/1m,hard,shadow")).hasMessageContaining("two modes");
    assertThatThrownBy(() -> LimitSpec.parse("api=0/1m")).hasMessageContaining("limit: must be positive, got 0");
    assertThatThrownBy(() -> LimitSpec.parse("bad name=1/1m")).hasMessageContaining("cannot read");
    assertThatThrownBy(() -> LimitSpec.parse("a/b=1/1m")).hasMessageContaining("name");
  }

  @Test
  void readsBucketsAndLogs() {
    Limit free = LimitSpec.parse("free=1/1s,token-bucket,burst=60");
    assertThat(free).isEqualTo(Limit.tokenBucket("free").capacity(60).refill(1, Duration.ofSeconds(1)).build());
    assertThat(LimitSpec.parse("up=10/1m,leaky-bucket,soft")).isEqualTo(
        Limit.leakyBucket("up").capacity(10).leakRate(10, Duration.ofMinutes(1)).mode(Mode.SOFT).build());
    assertThat(LimitSpec.parse("l=8/1s,sliding-window-log").algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW_LOG);
  }

}
