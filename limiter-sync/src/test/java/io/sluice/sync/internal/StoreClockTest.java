package io.sluice.sync.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.ManualTicker;
import io.sluice.node.Ticker;
import io.sluice.sync.StoreBreakerConfig;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.FlushResult;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

class StoreClockTest {
  private static final long MS = 1_000_000L;
  private static final long START = 1_700_000_000_000L * MS;

  @Test
  void aProcesssLimitersOnTheWallClockShareOneClockAndATickerOfOnesOwnHasItsOwn() {
    assertThat(StoreClock.of(Ticker.cached())).isSameAs(StoreClock.of(Ticker.cached()));
    assertThat(StoreClock.of(Ticker.system())).isSameAs(StoreClock.of(Ticker.system()));
    ManualTicker own = new ManualTicker(START);
    assertThat(StoreClock.of(own)).isNotSameAs(StoreClock.of(own));
  }

  @Test
  void aFirstReadingSetsTheClockBackAtOnceOnlyWhereNoOtherLimiterHasIt() {
    StoreCalls calls = StoreCalls.create("clock-first", StoreBreakerConfig.ofDefaults(), Duration.ofSeconds(1), null,
        System::nanoTime, null);
    ManualTicker alone = new ManualTicker(START);
    StoreClock own = new StoreClock(alone);
    own.given();
    own.first(calls, new TimeStore(alone, -10 * MS), Duration.ofSeconds(1));
    assertThat(own.read()).as("set back at once: nothing read it").isEqualTo(START - 10 * MS);
    ManualTicker shared = new ManualTicker(START);
    StoreClock both = new StoreClock(shared);
    both.given();
    both.given(); // (a limiter built while the store did not answer, which may have read the clock)
    both.first(calls, new TimeStore(shared, -10 * MS), Duration.ofSeconds(1));
    assertThat(both.read()).as("never below what it read before").isEqualTo(START);
    shared.advance(Duration.ofMillis(30));
    assertThat(both.read()).as("slewed down by then").isEqualTo(START + 20 * MS);
  }

  @Test
  void aSampleSetsTheClockToTheStoresAtTheMiddleOfItsRoundTrip() {
    ManualTicker local = new ManualTicker(START);
    StoreClock clock = new StoreClock(local);
    assertThat(clock.read()).as("before any sample: the node's own clock").isEqualTo(START);
    // the store's clock is 7 ms ahead; the call took 2 ms, the store read its clock 1 ms in
    long sent = local.read();
    long storeMicros = (sent + 1 * MS + 7 * MS) / 1_000;
    local.advance(Duration.ofMillis(2));
    clock.sample(sent, local.read(), storeMicros);
    assertThat(clock.offsetNanos()).isBetween(7 * MS, 7 * MS + 1_000);
    assertThat(clock.read() - local.read()).isBetween(7 * MS, 7 * MS + 1_000);
  }

  @Test
  void theSampleWithTheShortestRoundTripWinsAndALongerOneLaterDoesNotMoveTheClock() {
    ManualTicker local = new ManualTicker(START);
    StoreClock clock = new StoreClock(local);
    long trueOffset = -3 * MS; // the store's clock is 3 ms behind
    clock.sample(local.read(), local.read() + 100_000, (local.read() + 50_000 + trueOffset) / 1_000);
    local.advance(Duration.ofMillis(10)); // (a clock set back sheds it at half speed: 6 ms here)
    long good = clock.offsetNanos();
    assertThat(good).isBetween(trueOffset - 1_000, trueOffset + 1_000);
    // a slow call: the store answered at once, the answer took 20 ms to come back (asymmetric)
    local.advance(Duration.ofMillis(5));
    long sent = local.read();
    local.advance(Duration.ofMillis(20));
    clock.sample(sent, local.read(), (sent + trueOffset) / 1_000);
    assertThat(clock.offsetNanos()).as("a sample with a longer round trip is not trusted over a shorter one")
        .isEqualTo(good);
  }

  @Test
  void slowCallsWhoseAnswersAreDelayedOneWayDoNotMoveTheClockByHalfTheirDelay() {
    ManualTicker local = new ManualTicker(START);
    StoreClock clock = new StoreClock(local);
    long sent = local.read();
    local.advance(Duration.ofNanos(200_000)); // 0.2 ms, the store's clock the same as the node's
    clock.sample(sent, local.read(), (sent + 100_000) / 1_000);
    // then, for ten minutes, every answer comes 100 ms late (a congested or shaped link one way): the
    // store read its clock at once, so the middle of the round trip is 50 ms after it
    for (int i = 0; i < 60; i++) {
      local.advance(Duration.ofSeconds(10));
      long at = local.read();
      local.advance(Duration.ofMillis(100));
      clock.sample(at, local.read(), at / 1_000);
      assertThat(clock.offsetNanos()).as("after slow sample %d", i).isBetween(-200_000L, 200_000L);
    }
  }

  @Test
  void aStoreClockThatDriftsAwayIsFollowedWithinARoundTrip() {
    ManualTicker local = new ManualTicker(START);
    StoreClock clock = new StoreClock(local);
    long origin = local.read();
    // the store's clock runs 40 ppm fast: 4 ms apart after 100 s; calls take 0.3 ms, the store reading
    // its clock at a third of them
    for (int i = 0; i < 20; i++) {
      long sent = local.read();
      long drift = (long) ((sent - origin) * 40e-6);
      local.advance(Duration.ofNanos(300_000));
      clock.sample(sent, local.read(), (sent + 100_000 + drift) / 1_000);
      long offset = clock.offsetNanos();
      local.advance(Duration.ofSeconds(5));
      long behind = (long) ((local.read() - origin) * 40e-6) - offset;
      if (i > 0) {
        // (what it drifted since the last sample, 0.2 ms in 5 s, and half a round trip)
        assertThat(behind).as("sample %d", i).isBetween(-400_000L, 400_000L);
      }
    }
  }

  @Test
  void aClockSetBackNeverRunsBackwardsButSlowsToHalfSpeedUntilItHasCaughtUp() {
    ManualTicker local = new ManualTicker(START);
    StoreClock clock = new StoreClock(local);
    clock.sample(local.read(), local.read(), (local.read() + 10 * MS) / 1_000); // 10 ms ahead
    long before = clock.read();
    // the next samples, each with a shorter round trip, find the store 10 ms behind the first reading
    for (int i = 0; i < 4; i++) {
      local.advance(Duration.ofMillis(1));
      long sent = local.read();
      clock.sample(sent, sent, sent / 1_000);
    }
    long last = before;
    long caughtUp = -1;
    for (int step = 0; step < 100; step++) {
      long now = clock.read();
      assertThat(now).as("step " + step).isGreaterThanOrEqualTo(last);
      last = now;
      if (caughtUp < 0 && Math.abs(clock.offsetNanos()) <= 1_000) {
        caughtUp = step;
      }
      local.advance(Duration.ofMillis(1));
    }
    // 10 ms shed at half speed: about 20 ms of the node's clock
    assertThat(caughtUp).isBetween(15L, 25L);
    assertThat(clock.offsetNanos()).isBetween(-1_000L, 1_000L);
  }

  @Test
  void readsAreMonotonicWhateverTheSamplesSay() {
    ManualTicker local = new ManualTicker(START);
    StoreClock clock = new StoreClock(local);
    SplittableRandom random = new SplittableRandom(7);
    long last = clock.read();
    for (int i = 0; i < 10_000; i++) {
      local.advance(Duration.ofNanos(random.nextLong(2 * MS)));
      if (random.nextInt(10) == 0) {
        long sent = local.read();
        long trip = random.nextLong(3 * MS);
        long storeAt = sent + random.nextLong(trip + 1) + random.nextLong(-50 * MS, 50 * MS);
        clock.sample(sent, sent + trip, storeAt / 1_000);
      }
      long now = clock.read();
      assertThat(now).isGreaterThanOrEqualTo(last);
      last = now;
    }
  }

  @Test
  void theRoundsAskTheStoreAtTheFirstFourThenEveryTenSeconds() {
    ManualTicker local = new ManualTicker(START);
    StoreClock clock = new StoreClock(local);
    TimeStore store = new TimeStore(local, 5 * MS);
    StoreCalls calls = StoreCalls.create("clock-test", StoreBreakerConfig.ofDefaults(), Duration.ofSeconds(1), null,
        local::read, null);
    for (int round = 0; round < 10; round++) {
      clock.round(calls, store, Duration.ofSeconds(1));
      local.advance(Duration.ofMillis(100));
    }
    assertThat(store.asked).isEqualTo(StoreClock.FIRST_SAMPLES);
    assertThat(clock.offsetNanos()).isBetween(5 * MS, 5 * MS + 1_000);
    local.advance(StoreClock.SAMPLE_EVERY);
    clock.round(calls, store, Duration.ofSeconds(1));
    clock.round(calls, store, Duration.ofSeconds(1));
    assertThat(store.asked).isEqualTo(StoreClock.FIRST_SAMPLES + 1);
    assertThat(clock.read() - local.read()).isBetween(5 * MS, 5 * MS + 1_000);
  }

  /** A store whose clock runs {@code ahead} of the node's and answers at once. */
  private static final class TimeStore implements CounterStore {
    private final ManualTicker local;
    private final long ahead;
    int asked;

    TimeStore(ManualTicker local, long ahead) {
      this.local = local;
      this.ahead = ahead;
    }

    @Override
    public boolean tellsTime() {
      return true;
    }

    @Override
    public CompletionStage<Long> timeMicros() {
      asked++;
      return CompletableFuture.completedFuture((local.read() + ahead) / 1_000);
    }

    @Override
    public int group(Counter counter, String key) {
      return 0;
    }

    @Override
    public int maxBatchSize() {
      return 1;
    }

    @Override
    public CompletionStage<FlushResult> flush(Batch batch) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {
    }
  }
}
