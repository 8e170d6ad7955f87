package io.sluice.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TickerTest {

  @Test
  void systemTickerIsMonotonicAndNearTheWallClock() {
    long a = Ticker.system().read();
    long b = Ticker.system().read();
    assertThat(b).isGreaterThanOrEqualTo(a);
    long wall = System.currentTimeMillis() * 1_000_000L;
    assertThat(Math.abs(a - wall)).isLessThan(TimeUnit.SECONDS.toNanos(5));
  }

  /** Behaviour, not timing: the cached ticker moves forward and never passes the precise one. */
  @Test
  void cachedTickerFollowsTheSystemTickerFromBehind() throws InterruptedException {
    long first = Ticker.cached().read();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    long later = first;
    while (later == first && System.nanoTime() < deadline) {
      Thread.sleep(5);
      later = Ticker.cached().read();
    }
    assertThat(later).isGreaterThan(first);
    assertThat(Ticker.cached().read()).isLessThanOrEqualTo(Ticker.system().read());
  }

  @Test
  void manualTickerNeverGoesBack() {
    ManualTicker ticker = new ManualTicker();
    long start = ticker.read();
    ticker.advanceNanos(5);
    assertThat(ticker.read()).isEqualTo(start + 5);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> ticker.advanceNanos(-1))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
