package io.sluice.sync.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.FlushResult;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The sliding window part of the claims contract ({@link WindowClaimContract} extends it): a claim on a
 * sliding window counts the previous window as it fades, and each claimant holds a part of what fades,
 * from when the store says; the parts never add up to more than the whole, and a claim without a part
 * leaves what fades to the others.
 */
public abstract class SlidingClaimContract extends StoreContractBase {
  /**
   * A sliding window's previous count weighs in what is free as it fades, at the node's time; what
   * fades after a claim is the claimants' (an even part each, from the time of their claim), so it is
   * not granted to anyone else, and a claimant keeps its part as committed.
   */
  @Test
  void aSlidingWindowsClaimCountsThePreviousWindowAsItFades() {
    long windowMicros = 60_000_000L;
    long w = NOW_MICROS / windowMicros;
    long halfWay = w * windowMicros + windowMicros / 2;
    long threeQuarters = halfWay + windowMicros / 4;
    try (CounterStore store = store(0)) {
      flush(store, new Batch("n1", 0, 1, halfWay, List.of(new Delta(window, "s", w - 1, 800))));
      // half of the previous 800 still weighs: 1,000 - 400 = 600 free; ahead of demand half of it, n1's
      // part of two: 150
      FlushResult a = flush(store, new Batch("n1", 0, 2, halfWay, List.of(new Delta(window, "s", w, 0).claiming(5_000, 2))));
      assertThat(a.previous(0)).isEqualTo(800);
      assertThat(a.claim(0)).isEqualTo(150);
      // three quarters in: 200 weighs, n1 holds 150 and its half of the 200 that faded since (100):
      // 550 free, 150 of it claims, half of the rest split in two
      FlushResult b = flush(store, new Batch("n2", 0, 1, threeQuarters, List.of(new Delta(window, "s", w, 0).claiming(5_000, 2))));
      assertThat(b.claim(0)).isEqualTo(100);
      // n1 again: its 150 and the 100 that faded for it are committed; 200 weighs, n2 holds 100: 450
      // free, 350 of it claims: 25 more
      FlushResult c = flush(store, new Batch("n1", 0, 3, threeQuarters, List.of(new Delta(window, "s", w, 0).claiming(5_000, 2))));
      assertThat(c.claim(0)).isEqualTo(275);
      // giving claims up ends the shares of what fades: n3 alone then has half of all that is free ahead
      // of demand, and the rest when it needs it
      flush(store, new Batch("n1", 0, 4, threeQuarters, List.of(new Delta(window, "s", w, 0))));
      flush(store, new Batch("n2", 0, 2, threeQuarters, List.of(new Delta(window, "s", w, 0))));
      FlushResult d = flush(store, new Batch("n3", 0, 1, threeQuarters, List.of(new Delta(window, "s", w, 0).claiming(5_000, 1))));
      assertThat(d.claim(0)).isEqualTo(400);
      FlushResult e = flush(store, new Batch("n3", 0, Batch.CLAIM_ONLY, threeQuarters,
          List.of(new Delta(window, "s", w, 0).claiming(800, 800, 1))));
      assertThat(e.claim(0)).isEqualTo(800);
    }
  }

  /**
   * Allowances on a sliding window ({@link Delta#allowing}): the reserve is kept from claims as on a fixed
   * window, and the previous window's count weighs whole at the window's start. A claim that finds the
   * counts past what the capacity less the reserve leaves holds its part of the fading only from when the
   * previous window has faded by what is left of the reserve (reserve / capacity of the window, {@link
   * Delta#partStartMicros}), which its answer says ({@link FlushResult#fadingPartFrom}); one that finds
   * room, or a reserve all spent, holds it from its own time.
   */
  @Test
  void aSlidingWindowsPartOfTheFadingStartsOnceThePreviousWindowHasFadedByWhatIsLeftOfTheReserve() {
    Counter sliding = Counter.of(Limit.slidingWindowCounter("allow-s").limit(100).window(Duration.ofMinutes(1)).build());
    long windowMicros = 60_000_000L;
    long w = NOW_MICROS / windowMicros;
    long start = w * windowMicros;
    try (CounterStore store = store(0)) {
      // the window before filled the limit
      flush(store, new Batch("n1", 0, 1, start - 1, List.of(new Delta(sliding, "s", w - 1, 100))));
      // 1 us in, a reserve of 4: nothing free, and n2's part starts 4 / 100 of the window in
      FlushResult a = flush(store, new Batch("n2", 0, Batch.CLAIM_ONLY, start + 1,
          List.of(new Delta(sliding, "s", w, 0).claiming(10, 1, 4).allowing(0, 0, 4))));
      assertThat(a.claim(0)).isZero();
      assertThat(a.split(0)).isEqualTo(4);
      assertThat(a.fadingPartFrom(0)).isEqualTo(Delta.partStartMicros(windowMicros, 4, 100)).isEqualTo(2_400_000);
      // half way, with room: n3's part starts at once
      FlushResult b = flush(store, new Batch("n3", 0, Batch.CLAIM_ONLY, start + windowMicros / 2,
          List.of(new Delta(sliding, "s", w, 0).claiming(10, 1, 4).allowing(0, 0, 4))));
      assertThat(b.claim(0)).isPositive();
      assertThat(b.fadingPartFrom(0)).as("from the claim's time").isZero();
      // another key, each of the four nodes' allowances spent: 2 us in, nothing of the reserve is left,
      // and the part starts at once
      flush(store, new Batch("n1", 0, 2, start - 1, List.of(new Delta(sliding, "s2", w - 1, 100))));
      for (int n = 1; n <= 4; n++) {
        flush(store, new Batch("n" + n, 0, 3, start + 1, List.of(new Delta(sliding, "s2", w, 0).allowing(0, 1, 4))));
      }
      FlushResult c = flush(store, new Batch("n5", 0, Batch.CLAIM_ONLY, start + 2,
          List.of(new Delta(sliding, "s2", w, 0).claiming(10, 1, 4).allowing(0, 0, 4))));
      assertThat(c.split(0)).isEqualTo(4);
      assertThat(c.fadingPartFrom(0)).as("from the claim's time").isZero();
    }
  }

  /**
   * A sliding window's claim asked for without a part of the fading ({@link Delta#withoutFadingPart}) is
   * sized as any claim, and the answer's split says it holds no part: what fades after it stays free for
   * the next node that asks (beside {@link #aSlidingWindowsClaimCountsThePreviousWindowAsItFades}, where
   * n1's part of the 200 that fade from half way to three quarters leaves n2 100, not 125).
   */
  @Test
  void aSlidingWindowsClaimWithoutAPartOfTheFadingLeavesWhatFadesToTheOthers() {
    long windowMicros = 60_000_000L;
    long w = NOW_MICROS / windowMicros;
    long halfWay = w * windowMicros + windowMicros / 2;
    long threeQuarters = halfWay + windowMicros / 4;
    try (CounterStore store = store(0)) {
      flush(store, new Batch("n1", 0, 1, halfWay, List.of(new Delta(window, "np", w - 1, 800))));
      // 600 free, half of it ahead of demand, n1's part of two: 150, and no part of what fades
      FlushResult a = flush(store, new Batch("n1", 0, 2, halfWay,
          List.of(new Delta(window, "np", w, 0).claiming(5_000, 2).withoutFadingPart())));
      assertThat(a.claim(0)).isEqualTo(150);
      assertThat(a.split(0)).isZero();
      // three quarters in: 200 weighs, n1 holds its 150 and nothing of the 200 that faded since: 650
      // free, 150 of it claims, half of the rest split in two
      FlushResult b = flush(store, new Batch("n2", 0, 1, threeQuarters,
          List.of(new Delta(window, "np", w, 0).claiming(5_000, 2))));
      assertThat(b.claim(0)).isEqualTo(125);
      assertThat(b.split(0)).isEqualTo(2);
      // a take asked without a part that finds too little free holds none either
      FlushResult c = flush(store, new Batch("n3", 0, Batch.CLAIM_ONLY, threeQuarters,
          List.of(new Delta(window, "np", w, 1).claiming(1_000, 1_000, 2).taking(1).withoutFadingPart())));
      assertThat(c.taken(0)).isFalse();
      assertThat(c.split(0)).isZero();
    }
  }

  /**
   * What the previous window's claimants may have taken of their parts of the fading, counted against
   * the window after it, is none where their parts add up to under half a permit: a claimant takes a
   * permit only once its part is half-way to it. A limit of 1 a minute whose window two back counted
   * its permit, and a node that claimed an eighth of that fading for the last tenth of the window before
   * (an eightieth of a permit): the next window's first take is granted (a stranded fraction of a permit
   * counted as taken denied the key its one permit for a whole window).
   */
  @Test
  void aPreviousWindowsClaimantsPartsUnderHalfAPermitAreNotCountedAsTaken() {
    Counter one = Counter.of(Limit.slidingWindowCounter("strand").limit(1).window(Duration.ofMinutes(1)).build());
    long windowMicros = 60_000_000L;
    long w = NOW_MICROS / windowMicros;
    try (CounterStore store = store(0)) {
      flush(store, new Batch("n0", 0, 1, (w - 2) * windowMicros + 5, List.of(new Delta(one, "k", w - 2, 1))));
      long lastTenth = (w - 1) * windowMicros + windowMicros * 9 / 10;
      FlushResult part = flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, lastTenth,
          List.of(new Delta(one, "k", w - 1, 0).claiming(1, 0, 8))));
      assertThat(part.claim(0)).isZero();
      assertThat(part.split(0)).as("a claimant of the window before").isEqualTo(8);
      FlushResult take = flush(store, new Batch("n2", 0, Batch.CLAIM_ONLY, w * windowMicros + 1,
          List.of(new Delta(one, "k", w, 1).claiming(1, 1, 8).taking(1))));
      assertThat(take.taken(0)).isTrue();
    }
  }

  /**
   * A sliding window's claimants never hold more than the whole fading together, whatever number of
   * nodes each counts: a node that counted itself alone takes it all, and a node asking after it gets
   * no part (it learns so from the answer's split); when the first gives its claim up, parts are free again.
   */
  @Test
  void aSlidingWindowsPartsOfTheFadingNeverAddUpToMoreThanTheWhole() {
    long windowMicros = 60_000_000L;
    long w = NOW_MICROS / windowMicros;
    long quarter = w * windowMicros + windowMicros / 4;
    try (CounterStore store = store(0)) {
      flush(store, new Batch("n0", 0, 1, quarter, List.of(new Delta(window, "parts", w - 1, 600))));
      FlushResult alone = flush(store, new Batch("n1", 0, 1, quarter, List.of(new Delta(window, "parts", w, 0).claiming(10, 1))));
      assertThat(alone.split(0)).isEqualTo(1);
      FlushResult third = flush(store, new Batch("n2", 0, 1, quarter, List.of(new Delta(window, "parts", w, 0).claiming(10, 3))));
      assertThat(third.split(0)).isZero(); // n1 holds all of it
      FlushResult half = flush(store, new Batch("n3", 0, 1, quarter, List.of(new Delta(window, "parts", w, 0).claiming(10, 2))));
      assertThat(half.split(0)).isZero();
      flush(store, new Batch("n1", 0, 2, quarter, List.of(new Delta(window, "parts", w, 0)))); // n1 gives up
      FlushResult again = flush(store, new Batch("n2", 0, 2, quarter, List.of(new Delta(window, "parts", w, 0).claiming(10, 3))));
      assertThat(again.split(0)).isEqualTo(3);
      FlushResult more = flush(store, new Batch("n3", 0, 2, quarter, List.of(new Delta(window, "parts", w, 0).claiming(10, 1))));
      assertThat(more.split(0)).isEqualTo(2); // two thirds left: at most a half
      // a fixed window has no fading to split
      Counter fixed = Counter.of(Limit.fixedWindow("parts-fixed").limit(100).window(Duration.ofMinutes(1)).build());
      assertThat(flush(store, new Batch("n1", 0, 3, quarter, List.of(new Delta(fixed, "parts", w, 0).claiming(10, 1))))
          .split(0)).isZero();
    }
  }
  /**
   * A claim-only call that opens a window can trim the node's claim on the window gone by, which still
   * weighs as it fades, to the permits the node admitted under it and has not counted (a delta on that
   * window asking for them, {@link Delta#keeping} them, without a part): the rest is free for the claim
   * on the new window in the same call. The flush that counts those permits later gives the claim up.
   * On a window that is over the trim bounds the claim and the node's part of the fading together.
   */
  @Test
  void aClaimOnTheWindowGoneByTrimmedToWhatTheNodeKeepsFreesTheRestForTheNextWindow() {
    long windowMicros = 60_000_000L;
    long w = NOW_MICROS / windowMicros;
    long start = w * windowMicros;
    try (CounterStore store = store(0)) {
      // half way through the window before: 500 counted, a claim of half of what is free (250)
      FlushResult a = flush(store, new Batch("n1", 0, 1, start - windowMicros / 2,
          List.of(new Delta(window, "trim", w - 1, 500).claiming(5_000, 1))));
      assertThat(a.claim(0)).isEqualTo(250);
      // 1 us into the next window: the node admitted 20 under that claim, not counted yet; trimmed to
      // them, 520 weighs and 480 are free (without the trim 750 would weigh, and 250 be free)
      FlushResult b = flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, start + 1, List.of(
          new Delta(window, "trim", w - 1, 0).claiming(20, 1).keeping(20).withoutFadingPart(),
          new Delta(window, "trim", w, 0).claiming(480, 480, 1))));
      assertThat(b.claim(0)).as("the claim on the window gone by").isEqualTo(20);
      assertThat(b.claim(1)).as("the claim on the new window").isEqualTo(480);
      // the trim is a claim like any other: sent again, it changes nothing
      FlushResult c = flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, start + 2, List.of(
          new Delta(window, "trim", w - 1, 0).claiming(20, 1).keeping(20).withoutFadingPart())));
      assertThat(c.claim(0)).isEqualTo(20);
      // the flush that counts the 20 gives the claim up: counts and claims still fill the limit
      FlushResult d = flush(store, new Batch("n1", 0, 2, start + 3,
          List.of(new Delta(window, "trim", w - 1, 20), new Delta(window, "trim", w, 0).claiming(480, 1))));
      assertThat(d.claim(0)).isZero();
      assertThat(d.current(1)).isZero();
      assertThat(d.previous(1)).isEqualTo(520);
      assertThat(d.claim(1)).isEqualTo(480);

      // with a part of the fading: 600 in the window before that, n1's claim half way through the window
      // gone by (300 weigh: 350, and its part of the 300 that fade to that window's end); the trim keeps
      // 20 of the claim and the part together, on a window that is over
      flush(store, new Batch("n1", 0, 3, start - 3 * windowMicros / 2, List.of(new Delta(window, "part", w - 2, 600))));
      FlushResult e = flush(store, new Batch("n1", 0, 4, start - windowMicros / 2,
          List.of(new Delta(window, "part", w - 1, 0).claiming(5_000, 1))));
      assertThat(e.claim(0)).isEqualTo(350);
      assertThat(e.split(0)).isEqualTo(1);
      FlushResult f = flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, start + 1, List.of(
          new Delta(window, "part", w - 1, 0).claiming(20, 1).keeping(20).withoutFadingPart(),
          new Delta(window, "part", w, 0).claiming(900, 900, 1))));
      assertThat(f.claim(0)).as("the claim and the part on the window gone by, trimmed").isEqualTo(20);
      assertThat(f.claim(1)).isEqualTo(900);
    }
  }
}
