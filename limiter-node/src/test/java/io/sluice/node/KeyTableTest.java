package io.sluice.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The key table is bounded, evicts only keys at rest, and charges a flood to one overflow budget. */
class KeyTableTest {

  @Test
  void floodOfUniqueKeysIsBoundedAndSharesOneOverflowBudget() {
    ManualTicker ticker = new ManualTicker();
    // slow refill: no key comes to rest during the flood, so none can be evicted
    Limit limit = Limit.tokenBucket("flood").capacity(5).refill(1, Duration.ofHours(1)).build();
    RateLimiter limiter = RateLimiter.builder(limit).ticker(ticker).maxKeys(1_000).build();
    long admitted = 0;
    for (int i = 0; i < 200_000; i++) {
      if (limiter.tryAcquire("attacker-" + i)) {
        admitted++;
      }
    }
    assertThat(limiter.size()).isLessThanOrEqualTo(1_000);
    assertThat(limiter.overflowed()).isEqualTo(199_000);
    // the rich path counts an overflowed key once too
    assertThat(limiter.acquire("one-more").allowed()).isFalse();
    assertThat(limiter.overflowed()).isEqualTo(199_001);
    // 1,000 keys with their own budget, then 5 permits shared by every key that did not fit
    assertThat(admitted).isEqualTo(1_000 + 5);
    // a known key keeps its own budget
    assertThat(limiter.acquire("attacker-0").remaining()).isEqualTo(3);
  }

  @Test
  void keysAtRestAreEvictedAndComeBackWithTheSameBudget() {
    ManualTicker ticker = new ManualTicker();
    Limit limit = Limit.fixedWindow("fw").limit(3).window(Duration.ofSeconds(1)).build();
    RateLimiter limiter = RateLimiter.builder(limit).ticker(ticker).maxKeys(100).build();
    for (int i = 0; i < 100; i++) {
      limiter.tryAcquire("k" + i);
    }
    assertThat(limiter.size()).isEqualTo(100);
    // still inside the window: nobody is at rest, nothing is evicted
    assertThat(limiter.cleanUp()).isZero();
    ticker.advance(Duration.ofSeconds(1));
    // a new key finds the table full, sweeps it, and gets its own slot
    assertThat(limiter.acquire("newcomer").remaining()).isEqualTo(2);
    assertThat(limiter.size()).isEqualTo(1);
    assertThat(limiter.evicted()).isEqualTo(100);
    assertThat(limiter.overflowed()).isZero();
  }

  @Test
  void aBusyKeyIsNeverEvicted() {
    ManualTicker ticker = new ManualTicker();
    Limit limit = Limit.tokenBucket("tb").capacity(2).refill(1, Duration.ofSeconds(10)).build();
    RateLimiter limiter = RateLimiter.builder(limit).ticker(ticker).build();
    assertThat(limiter.tryAcquire("k", 2)).isTrue();
    ticker.advance(Duration.ofSeconds(15)); // 1.5 tokens back: not yet full, not at rest
    assertThat(limiter.cleanUp()).isZero();
    assertThat(limiter.tryAcquire("k")).isTrue();
    assertThat(limiter.tryAcquire("k")).isFalse();
  }

  @Test
  void hugeBinaryAndUnicodeKeysWork() {
    RateLimiter limiter = RateLimiter.builder(Limit.fixedWindow("k").limit(1).window(Duration.ofSeconds(1)).build())
        .ticker(new ManualTicker()).build();
    String huge = "x".repeat(100_000);
    String binary = "\u0000\u0001\uFFFF\r\n";
    String unicode = "用户-🚦-ключ";
    for (String key : new String[] {huge, binary, unicode}) {
      assertThat(limiter.tryAcquire(key)).isTrue();
      assertThat(limiter.tryAcquire(key)).isFalse();
    }
  }
}
