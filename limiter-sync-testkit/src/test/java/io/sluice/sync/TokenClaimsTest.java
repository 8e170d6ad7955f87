package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.node.RateLimiter;
import io.sluice.sync.testkit.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Token claims ({@link TokenClaims}): a batched token bucket takes tokens ahead from the store's
 * bucket, each no earlier than its due time, gives back what it does not use, and never lets the
 * nodes pass the bucket. (The accuracy kit measures it over every traffic profile against the exact
 * algorithm; these are the mechanics, on the in-memory store that runs the stores' processor.)
 */
class TokenClaimsTest {
  private final ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
  private final Limit bucket = Limit.tokenBucket("tb").capacity(100).refill(100, Duration.ofSeconds(1)).build();

  private SyncedLimiter node(MemoryStore store, String id) {
    return SyncedLimiter.builder(bucket, store).nodeId(id).ticker(ticker).autoSync(false).activeNodes(() -> 1)
        .batchSize(50).build();
  }

  @Test
  void aBusyKeyIsDecidedLocallyAndNeverPassesTheBucket() {
    try (MemoryStore store = new MemoryStore(); SyncedLimiter node = node(store, "a")) {
      RateLimiter exact = RateLimiter.builder(bucket).ticker(ticker).build();
      int admitted = 0;
      int exactAdmitted = 0;
      for (int i = 0; i < 3_000; i++) { // 1,000 per second for 3 s: ten times the refill
        ticker.advance(Duration.ofMillis(1));
        admitted += node.tryAcquire("k") ? 1 : 0;
        exactAdmitted += exact.tryAcquire("k") ? 1 : 0;
        if (i % 100 == 99) {
          node.syncNow();
        }
      }
      // the burst and then the refill, as the exact bucket: never more
      assertThat(admitted).isLessThanOrEqualTo(exactAdmitted).isGreaterThanOrEqualTo(exactAdmitted - 5);
      assertThat(node.storeCalls()).as("store calls for 3,000 decisions").isLessThan(300);
    }
  }

  @Test
  void tokensANodeDoesNotUseGoBackToTheBucketAtTheNextSync() {
    try (MemoryStore store = new MemoryStore(); SyncedLimiter a = node(store, "a"); SyncedLimiter b = node(store, "b")) {
      for (int i = 0; i < 30; i++) { // a key in use: claims ahead of its demand
        ticker.advance(Duration.ofMillis(2));
        assertThat(a.tryAcquire("k")).isTrue();
      }
      long callsBefore = a.storeCalls();
      ticker.advance(Duration.ofMillis(150)); // idle for more than a sync interval
      a.syncNow();
      assertThat(a.storeCalls()).as("the give-back").isEqualTo(callsBefore + 1);
      // b finds the whole bucket but what a used (30, less the refill since): 70 + 18 refilled
      int got = 0;
      while (b.tryAcquire("k")) {
        got++;
      }
      assertThat(got).isBetween(85, 90);
    }
  }

  /**
   * Tokens held while the store's bucket refills past them expire: used after the refill, they would
   * come on top of a full bucket. Node a claims ahead from a full bucket, then uses its holding slowly
   * (never idle for a sync interval, so nothing goes back); a second later node b drains the refilled
   * bucket and a spends what it still holds: together no more than the bucket allows.
   */
  @Test
  void aHoldingDrawnFromAFullBucketDoesNotOutliveItsRefill() {
    try (MemoryStore store = new MemoryStore(); SyncedLimiter a = node(store, "a"); SyncedLimiter b = node(store, "b")) {
      double[] backlog = {0};
      long[] last = {ticker.read()};
      double[] worst = {0};
      java.util.function.LongConsumer admitted = cost -> {
        long now = ticker.read() / 1_000 * 1_000;
        backlog[0] = Math.max(0, backlog[0] - (now - last[0]) * 100 / 1e9) + cost;
        last[0] = now;
        worst[0] = Math.max(worst[0], backlog[0] - 100);
      };
      for (int i = 0; i < 40; i++) { // busy: a's claims go ahead of its demand
        ticker.advance(Duration.ofMillis(1));
        if (a.tryAcquire("k")) {
          admitted.accept(1);
        }
      }
      for (int i = 0; i < 15; i++) { // then slow, never idle for a sync interval
        ticker.advance(Duration.ofMillis(90));
        if (a.tryAcquire("k")) {
          admitted.accept(1);
        }
        a.syncNow();
      }
      for (SyncedLimiter n : List.of(b, a)) { // the bucket refilled: b drains it, then a spends its holding
        while (n.tryAcquire("k")) {
          admitted.accept(1);
        }
      }
      assertThat(worst[0]).as("tokens past the bucket's capacity").isLessThanOrEqualTo(1e-6);
    }
  }

  @Test
  void aReleasedPermitPaysForTheNextRequest() {
    try (MemoryStore store = new MemoryStore(); SyncedLimiter node = node(store, "a")) {
      Decision first = node.acquire("k", 100); // the whole bucket
      assertThat(first.allowed()).isTrue();
      assertThat(node.tryAcquire("k")).isFalse();
      node.release("k", 40, first); // another limit of the request denied it
      assertThat(node.tryAcquire("k", 40)).isTrue();
      assertThat(node.tryAcquire("k")).isFalse();
    }
  }

  @Test
  void nodesTogetherNeverPassTheBucket() {
    try (MemoryStore store = new MemoryStore()) {
      List<SyncedLimiter> nodes = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        nodes.add(SyncedLimiter.builder(bucket, store).nodeId("n" + i).ticker(ticker).autoSync(false)
            .activeNodes(() -> 4).batchSize(50).build());
      }
      SplittableRandom random = new SplittableRandom(7);
      // the nodes' admissions replayed through the bucket with debt allowed: never past its capacity
      double[] backlog = new double[2];
      long[] last = {ticker.read(), ticker.read()};
      double worst = 0;
      for (int i = 0; i < 20_000; i++) {
        ticker.advance(Duration.ofNanos(random.nextLong(1_000_000)));
        long cost = 1 + random.nextInt(3);
        int k = random.nextInt(2);
        if (nodes.get(random.nextInt(4)).tryAcquire("k" + k, cost)) {
          long now = ticker.read() / 1_000 * 1_000;
          backlog[k] = Math.max(0, backlog[k] - (now - last[k]) * 100 / 1e9) + cost;
          last[k] = now;
          worst = Math.max(worst, backlog[k] - 100);
        }
        if (i % 200 == 199) {
          nodes.forEach(SyncedLimiter::syncNow);
        }
      }
      assertThat(worst).as("tokens past the bucket's capacity").isLessThanOrEqualTo(1e-6);
      nodes.forEach(SyncedLimiter::close);
    }
  }
}
