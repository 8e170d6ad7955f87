package io.sluice.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The behaviours the seeds describe, as examples a reader can follow. */
class AlgorithmBehaviourTest {
  private final ManualTicker ticker = new ManualTicker(); // aligned to a minute boundary

  private long admit(RateLimiter limiter, int attempts) {
    long n = 0;
    for (int i = 0; i < attempts; i++) {
      if (limiter.tryAcquire("k")) {
        n++;
      }
    }
    return n;
  }

  /**
   * 100 per minute; 100 requests just before a window edge and 100 just after: the fixed window admits
   * all 200 within 200 ms, the sliding log keeps to 100 in any minute, and the sliding counter's
   * estimate stops the second burst too.
   */
  @Test
  void fixedWindowAdmitsDoubleAtTheEdgeAndSlidingWindowsDoNot() {
    Duration minute = Duration.ofMinutes(1);
    RateLimiter fixed = RateLimiter.builder(Limit.fixedWindow("f").limit(100).window(minute).build()).ticker(ticker).build();
    RateLimiter log = RateLimiter.builder(Limit.slidingWindowLog("l").limit(100).window(minute).build()).ticker(ticker).build();
    RateLimiter counter = RateLimiter.builder(Limit.slidingWindowCounter("c").limit(100).window(minute).build())
        .ticker(ticker).build();
    ticker.advance(minute.minusMillis(100));
    assertThat(admit(fixed, 100)).isEqualTo(100);
    assertThat(admit(log, 100)).isEqualTo(100);
    assertThat(admit(counter, 100)).isEqualTo(100);
    ticker.advance(Duration.ofMillis(200)); // 100 ms into the next window
    assertThat(admit(fixed, 100)).isEqualTo(100);
    assertThat(admit(log, 100)).isZero();
    assertThat(admit(counter, 100)).isZero(); // 100 * (1 - 0.1/60) = 99.8 estimated: no room for one more
  }

  @Test
  void tokenBucketAllowsABurstThenTheRefillRate() {
    RateLimiter limiter = RateLimiter.builder(Limit.tokenBucket("t").capacity(10).refill(2, Duration.ofSeconds(1)).build())
        .ticker(ticker).build();
    assertThat(admit(limiter, 20)).isEqualTo(10);
    Decision denied = limiter.acquire("k");
    assertThat(denied.allowed()).isFalse();
    assertThat(denied.retryAfterNanos()).isEqualTo(500_000_000L);
    assertThat(denied.resetNanos()).isEqualTo(5_000_000_000L);
    ticker.advance(Duration.ofSeconds(3));
    assertThat(admit(limiter, 20)).isEqualTo(6);
  }

  @Test
  void shaperDelaysInsteadOfRejecting() {
    Limit shaper = Limit.leakyBucketShaper("s").capacity(3).leakRate(10, Duration.ofSeconds(1)).build();
    RateLimiter limiter = RateLimiter.builder(shaper).ticker(ticker).build();
    assertThat(limiter.acquire("k").delayNanos()).isZero();
    assertThat(limiter.acquire("k").delayNanos()).isEqualTo(100_000_000L);
    assertThat(limiter.acquire("k").delayNanos()).isEqualTo(200_000_000L);
    Decision full = limiter.acquire("k");
    assertThat(full.allowed()).isFalse();
    assertThat(full.retryAfterNanos()).isEqualTo(100_000_000L);
    ticker.advance(Duration.ofMillis(100));
    assertThat(limiter.acquire("k").delayNanos()).isEqualTo(200_000_000L);
  }

  @Test
  void acquireAndWaitHoldsTheCallerForTheDelay() {
    Limit shaper = Limit.leakyBucketShaper("s").capacity(2).leakRate(20, Duration.ofSeconds(1)).build();
    RateLimiter limiter = RateLimiter.builder(shaper).build(); // real clock: this one waits for real
    limiter.acquireAndWait("k", 1);
    long start = System.nanoTime();
    Decision second = limiter.acquireAndWait("k", 1);
    assertThat(second.delayNanos()).isPositive();
    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(second.delayNanos());
  }

  @Test
  void fixedWindowDenialSaysWhenTheWindowEnds() {
    RateLimiter limiter = RateLimiter.builder(Limit.fixedWindow("f").limit(1).window(Duration.ofSeconds(10)).build())
        .ticker(ticker).build();
    ticker.advance(Duration.ofSeconds(4));
    assertThat(limiter.tryAcquire("k")).isTrue();
    Decision denied = limiter.acquire("k");
    assertThat(denied.retryAfterSeconds()).isEqualTo(6);
    assertThat(denied.resetSeconds()).isEqualTo(6);
  }
}
