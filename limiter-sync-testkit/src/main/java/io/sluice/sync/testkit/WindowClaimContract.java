package io.sluice.sync.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
 * The window claims part of the contract every {@link CounterStore} keeps ({@link CounterStoreContract}
 * extends it, and a store's test extends that): what a flush asking for a claim is granted, claims
 * ahead, a decision's need, takes and their settling, demand met under claims, a claim trimmed by the
 * node that holds it, and a sliding window's parts of the fading; counts plus claims never pass the
 * capacity. Subclasses hand out stores and start each test from an empty store. The sliding window's
 * part is {@link SlidingClaimContract}'s.
 */
public abstract class WindowClaimContract extends SlidingClaimContract {
  /**
   * A store that keeps claims says so ({@link CounterStore#keepsClaims}): limiters read it once, when
   * they are built, and on a store that does not say it their nodes take shares instead of claims.
   */
  @Test
  void aStoreThatKeepsClaimsSaysSo() {
    try (CounterStore store = store(0)) {
      assertThat(store.keepsClaims()).isTrue();
    }
  }

  /**
   * Claims: a flush asking for one is granted the free part of the window (capacity less the count,
   * the other nodes' claims and what the node may still admit under its old claim) split between the
   * nodes, at most what it asked for; counts plus claims never pass the capacity; giving a claim up
   * frees it; a replay answers the claim held.
   */
  @Test
  void claimsSplitWhatIsFreeAndNeverPassTheCapacityWithTheCounts() {
    Counter fixed = Counter.of(Limit.fixedWindow("claims").limit(100).window(Duration.ofMinutes(1)).build());
    try (CounterStore store = store(0)) {
      // claims ahead of demand take at most half of what is free, an even part each: 100 free, 50, two nodes
      FlushResult a = flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(fixed, "k", 100, 0).claiming(100, 2))));
      assertThat(a.claim(0)).isEqualTo(25);
      // 75 free, of which n1's 25 are claims: half of the other 50, split in two
      FlushResult b = flush(store, new Batch("n2", 0, 1, NOW_MICROS, List.of(new Delta(fixed, "k", 100, 0).claiming(100, 2))));
      assertThat(b.claim(0)).isEqualTo(12);
      // n1 counted 20 of its 25: 5 it may still admit stay its own (committed); 100 - 20 counted - 12 (n2)
      // - 5 = 63 free, less the claims 46, halved 23, split 11
      FlushResult c = flush(store, new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(fixed, "k", 100, 20).claiming(100, 2))));
      assertThat(c.current(0)).isEqualTo(20);
      assertThat(c.claim(0)).isEqualTo(16);
      // at most what was asked for, but what was committed stays
      FlushResult d = flush(store, new Batch("n2", 0, 2, NOW_MICROS, List.of(new Delta(fixed, "k", 100, 5).claiming(5, 2))));
      assertThat(d.claim(0)).isEqualTo(7);
      FlushResult e = flush(store, new Batch("n3", 0, 1, NOW_MICROS, List.of(new Delta(fixed, "k", 100, 0).claiming(1_000, 1))));
      assertThat(e.current(0)).isEqualTo(25);
      assertThat(e.claim(0)).isEqualTo(14); // 52 free, 23 of it claims: half of 29
      // a node that needs 60 for a request gets nothing more when less is free (38 here, of which the
      // even part is nothing): what is free, held for a request the node denies anyway, would deny
      // every other node's requests until this node gave it up
      FlushResult f = flush(store, new Batch("n4", 0, 1, NOW_MICROS, List.of(new Delta(fixed, "k", 100, 0).claiming(60, 60, 2))));
      assertThat(f.claim(0)).isZero();
      assertThat(f.current(0) + 16 + 7 + 14).isEqualTo(62);
      // a claim-only batch (sequence 0) leaves the node's sequence alone and is applied every time:
      // n2, holding 7, needs 17 for a request, and 38 are free
      FlushResult g = flush(store, new Batch("n2", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 100, 0).claiming(17, 17, 2))));
      assertThat(g.applied()).isTrue();
      assertThat(g.claim(0)).isEqualTo(17);
      assertThatThrownBy(() -> new Batch("n2", 0, Batch.CLAIM_ONLY, NOW_MICROS, List.of(new Delta(fixed, "k", 100, 1))))
          .hasMessageStartingWith("deltas:");
      // a replay answers the claim held, and changes nothing
      FlushResult replay = flush(store, new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(fixed, "k", 100, 20).claiming(100, 2))));
      assertThat(replay.applied()).isFalse();
      assertThat(replay.claim(0)).isEqualTo(16);
      assertThat(replay.current(0)).isEqualTo(25);
      // n1 counts 6 more and gives its claim up: 100 - 31 - 17 - 14 = 38 are free, and n4 needs all of
      // them: counts and claims then fill the capacity exactly
      FlushResult up = flush(store, new Batch("n1", 0, 3, NOW_MICROS, List.of(new Delta(fixed, "k", 100, 6))));
      assertThat(up.claim(0)).isZero();
      FlushResult more = flush(store, new Batch("n4", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 100, 0).claiming(38, 38, 1))));
      assertThat(more.current(0)).isEqualTo(31);
      assertThat(more.claim(0)).isEqualTo(38);
      assertThat(more.current(0) + 17 + 14 + more.claim(0)).isEqualTo(100);
      // asked again for more, it is applied again, nothing is free, and it keeps what it holds
      FlushResult again = flush(store, new Batch("n4", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 100, 0).claiming(60, 60, 1))));
      assertThat(again.claim(0)).isEqualTo(38);
      assertThat(again.current(0)).isEqualTo(31);
      // a counter that keeps no claims answers -1
      assertThat(flush(store, new Batch("n1", 0, 4, NOW_MICROS, List.of(new Delta(bucket, "k", 0, 1)))).claim(0)).isEqualTo(-1);
    }
  }

  /**
   * Claims ahead (fixed windows): a node asking for its claim on a window may also ask for a claim on
   * each of the windows after it, granted where every one of them has room for it (all nodes' claims
   * ahead within an eighth of the capacity, an even part per node of what the others left of it), the
   * same on each, never lowering what the node holds there; counts and claims still never pass the
   * capacity, and the key lives through the last of them.
   */
  @Test
  void claimsAheadHoldBudgetInTheWindowsAfterAndNeverPassTheCapacity() {
    Counter fixed = Counter.of(Limit.fixedWindow("ahead").limit(100).window(Duration.ofMinutes(1)).build());
    try (CounterStore store = store(0)) {
      FlushResult a = flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 100, 0).claiming(10, 2).claimingAhead(4, 5))));
      assertThat(a.claim(0)).isEqualTo(10);
      assertThat(a.ahead(0)).as("5 asked; 12 / 2 = 6 would fit in each window after").isEqualTo(5);
      // n2 asks for 30 on each: an eighth of 100 less n1's 5, split in two: 3
      FlushResult b = flush(store, new Batch("n2", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 100, 0).claiming(1, 2).claimingAhead(4, 30))));
      assertThat(b.ahead(0)).isEqualTo(3);
      // asked again for less, in window 101: granted 1 (window 105 gets it), and what n1 holds on
      // windows 102-104 stays 5 (seen below)
      FlushResult f = flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 101, 0).claiming(1, 2).claimingAhead(4, 1))));
      assertThat(f.ahead(0)).isEqualTo(1);
      // in window 102, n3 finds 8 claimed ahead: 92 free, 84 not claimed, halved, split: 21
      FlushResult c = flush(store, new Batch("n3", 0, 1, NOW_MICROS, List.of(new Delta(fixed, "k", 102, 0).claiming(100, 2))));
      assertThat(c.claim(0)).isEqualTo(21);
      // n1 reports 3 permits admitted within its claim ahead: counted, 2 of it still its own
      FlushResult d = flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(fixed, "k", 102, 3).claiming(2, 2))));
      assertThat(d.current(0)).isEqualTo(3);
      assertThat(d.claim(0)).isEqualTo(2);
      // n2 holds its 3 there without having asked in window 102: 71 are free, and counts and claims
      // then fill the capacity exactly
      FlushResult e = flush(store, new Batch("n4", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 102, 0).claiming(71, 71, 1))));
      assertThat(e.claim(0)).isEqualTo(71);
      assertThat(e.current(0) + 2 + 3 + 21 + e.claim(0)).isEqualTo(100);
      // none where a window after has no room: window 102 is full
      FlushResult h = flush(store, new Batch("n5", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 101, 0).claiming(1, 2).claimingAhead(2, 1))));
      assertThat(h.ahead(0)).isZero();
      // the key lives through window 105, the last claimed ahead: the first writes of windows 101 and
      // 102 did not shorten its TTL to their two windows
      long ttl = counterTtlMillis("ahead", "k");
      assertThat(ttl < 0 || ttl > 4 * 60_000L).as("TTL %d ms", ttl).isTrue();
      // (later, in window 104)
      FlushResult g = flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 104, 0).claiming(1, 1, 2))));
      assertThat(g.claim(0)).as("n1's claim on window 104, asked for 1 beyond none counted").isEqualTo(5);
      // a sliding window takes no claims ahead
      FlushResult s = flush(store, new Batch("n1", 0, 1, NOW_MICROS,
          List.of(new Delta(window, "k", 100, 0).claiming(10, 2).claimingAhead(4, 5))));
      assertThat(s.ahead(0)).isZero();
    }
  }

  /**
   * Allowances ({@link Delta#allowing}; a fixed window here, a sliding window below): claims and takes are granted out of the capacity
   * less what is left of the reserve the nodes' allowances hold; each node's allowance spent (used, or
   * given up) comes off the reserve once (a replay spends nothing again); permits admitted under an
   * allowance are counted but not charged to the node's claim; a call without a reserve (the nodes no
   * longer use their allowances, near the window's end) grants the rest. Counts, claims and the reserve
   * left never pass the capacity.
   */
  @Test
  void theAllowancesReserveIsKeptFromClaimsUntilSpentAndAllowedPermitsAreNotChargedToAClaim() {
    Counter fixed = Counter.of(Limit.fixedWindow("allow").limit(100).window(Duration.ofMinutes(1)).build());
    try (CounterStore store = store(0)) {
      // a reserve of 4 (four nodes): a need of 97 does not fit (the even part of half of the 96 is granted)
      FlushResult a = flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 100, 0).claiming(97, 97, 4).allowing(0, 0, 4))));
      assertThat(a.claim(0)).isEqualTo(12);
      // one of 96 does: counts, claims and the reserve then fill the capacity
      FlushResult b = flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k2", 100, 0).claiming(96, 96, 4).allowing(0, 0, 4))));
      assertThat(b.claim(0)).isEqualTo(96);
      // n2 admitted a permit under its allowance: counted, and its allowance spent
      FlushResult c = flush(store, new Batch("n2", 0, 1, NOW_MICROS,
          List.of(new Delta(fixed, "k2", 100, 1).allowing(1, 1, 4))));
      assertThat(c.current(0)).isEqualTo(1);
      // 1 counted, 96 claimed, 3 reserved: nothing for n3's need of 1
      FlushResult d = flush(store, new Batch("n3", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k2", 100, 0).claiming(1, 1, 4).allowing(0, 0, 4))));
      assertThat(d.claim(0)).isZero();
      // until n3 gives its own allowance up with its flush: 2 reserved, 1 free
      FlushResult e = flush(store, new Batch("n3", 0, 1, NOW_MICROS,
          List.of(new Delta(fixed, "k2", 100, 0).claiming(1, 1, 4).allowing(0, 1, 4))));
      assertThat(e.claim(0)).isEqualTo(1);
      // the same batch again (a replay) spends nothing: still nothing free for n4
      assertThat(flush(store, new Batch("n3", 0, 1, NOW_MICROS,
          List.of(new Delta(fixed, "k2", 100, 0).claiming(1, 1, 4).allowing(0, 1, 4)))).applied()).isFalse();
      FlushResult f = flush(store, new Batch("n4", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k2", 100, 0).claiming(1, 1, 4).allowing(0, 0, 4))));
      assertThat(f.claim(0)).isZero();
      // near the window's end the nodes call without a reserve: what is left of it is granted
      FlushResult g = flush(store, new Batch("n4", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k2", 100, 0).claiming(2, 2, 4))));
      assertThat(g.claim(0)).isEqualTo(2);
      assertThat(g.current(0) + 96 + 1 + g.claim(0)).isEqualTo(100);
      // a claim of 10, then 3 permits, 1 of them under the allowance: 2 charged to the claim, 8 kept
      // (asked for 7: what is committed stays); charged all 3, 7 would be kept
      flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, NOW_MICROS, List.of(new Delta(fixed, "k3", 100, 0).claiming(10, 1))));
      FlushResult h = flush(store, new Batch("n1", 0, 1, NOW_MICROS,
          List.of(new Delta(fixed, "k3", 100, 3).claiming(7, 1).allowing(1, 1, 4))));
      assertThat(h.current(0)).isEqualTo(3);
      assertThat(h.claim(0)).isEqualTo(8);
      // a claim-only batch (applied as often as it arrives) may spend an allowance given up unused: the
      // delta carries what its node has spent in all, so a second copy spends nothing more. n1's claim of
      // 1 and the 3 allowances left keep 96 free: a need of 97 does not fit, one of 96 does
      Batch giveUp = new Batch("n1", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k4", 100, 0).claiming(1, 1, 4).allowing(0, 1, 4)));
      flush(store, giveUp);
      assertThat(flush(store, giveUp).claim(0)).isEqualTo(1);
      assertThat(flush(store, new Batch("n2", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k4", 100, 0).claiming(97, 97, 4).allowing(0, 0, 4)))).claim(0)).isLessThan(97);
      assertThat(flush(store, new Batch("n3", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k5", 100, 0).claiming(96, 96, 4).allowing(0, 1, 4)))).claim(0)).isEqualTo(96);
    }
  }

  /**
   * Permits admitted under an allowance are counts: never in a claim-only batch, nor in a regional
   * quota's or a count sent after its window; more than the delta's amount, a negative spend or
   * reserve are refused, naming the field.
   */
  @Test
  void allowedPermitsGoOnlyWithAnOrdinaryWindowsCounts() {
    Counter fixed = Counter.of(Limit.fixedWindow("allow").limit(100).window(Duration.ofMinutes(1)).build());
    assertThatThrownBy(() -> new Batch("n1", 0, Batch.CLAIM_ONLY, NOW_MICROS,
        List.of(new Delta(fixed, "k", 100, 1).claiming(1, 1, 4).taking(5).allowing(1, 0, 4))))
        .hasMessageStartingWith("deltas:");
    assertThatThrownBy(() -> new Delta(fixed, "k", 100, 1).allowing(2, 2, 4)).hasMessageStartingWith("allowed:");
    assertThatThrownBy(() -> new Delta(fixed, "k", 100, 1).allowing(0, -1, 4)).hasMessageStartingWith("spent:");
    assertThatThrownBy(() -> new Delta(fixed, "k", 100, 1).allowing(0, 0, -1)).hasMessageStartingWith("reserve:");
    Counter regional = Counter.regional(Limit.fixedWindow("allow-r").limit(100).window(Duration.ofMinutes(1)).build(), 3);
    assertThatThrownBy(() -> new Delta(regional, "k", 100, 1).allowing(0, 0, 1)).hasMessageStartingWith("allowing:");
    assertThatThrownBy(() -> new Delta(fixed, "k", 100, 1).afterItsWindow().allowing(0, 0, 1))
        .hasMessageStartingWith("allowing:");
  }

  /**
   * A need that does not fit what is free gets only the even part of the claims ahead when the node
   * counts other nodes (what is free, held for a request denied anyway, would deny theirs), and all
   * that is free only when it counts itself alone on a sliding window (the fading then adds to it): a
   * fixed window frees nothing before it ends, and a node counts itself alone at start-up until the
   * registry has heard the others (found by WindowProbe: such a node held every free permit).
   */
  @Test
  void aNeedThatDoesNotFitGetsAllThatIsFreeOnlyWhenTheNodeIsAloneOnASlidingWindow() {
    Counter fixed = Counter.of(Limit.fixedWindow("need").limit(10).window(Duration.ofMinutes(1)).build());
    Counter sliding = Counter.of(Limit.slidingWindowCounter("need-s").limit(10).window(Duration.ofMinutes(1)).build());
    try (CounterStore store = store(0)) {
      flush(store, new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(fixed, "k", 100, 5))));
      // 5 free; two nodes: half of it, 2, split in two
      FlushResult shared = flush(store, new Batch("n2", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 100, 0).claiming(8, 8, 2))));
      assertThat(shared.claim(0)).isEqualTo(1);
      // alone on a fixed window: the part ahead of demand only (half of the 4 free less the other
      // node's claim, rounded down: 1), not the 4 free
      FlushResult alone = flush(store, new Batch("n3", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 100, 0).claiming(8, 8, 1))));
      assertThat(alone.claim(0)).isEqualTo(1);
      flush(store, new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(sliding, "k", 100, 5))));
      FlushResult slidingAlone = flush(store, new Batch("n3", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(sliding, "k", 100, 0).claiming(8, 8, 1))));
      assertThat(slidingAlone.claim(0)).isEqualTo(5); // all that is free: 10 - 5 counted
    }
  }

  /**
   * Takes: a claim-only delta's permits are counted with the claim only when the claim covers the
   * need (and come out of it), once per token: the same token again, or an older one, is not counted.
   */
  @Test
  void aTakeIsCountedWithItsClaimOnlyWhenItFitsAndOncePerToken() {
    Counter fixed = Counter.of(Limit.fixedWindow("fw").limit(10).window(Duration.ofMinutes(1)).build());
    try (CounterStore store = store(0)) {
      FlushResult a = flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 100, 3).claiming(3, 3, 2).taking(1_000))));
      assertThat(a.taken(0)).isTrue();
      assertThat(a.current(0)).isEqualTo(3);
      assertThat(a.claim(0)).as("the take came out of the claim").isZero();
      // the same token again (a late or repeated call): not counted twice
      FlushResult again = flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 100, 3).claiming(3, 3, 2).taking(1_000))));
      assertThat(again.taken(0)).isFalse();
      assertThat(again.current(0)).isEqualTo(3);
      // a take with a claim ahead: the claim left is what was granted less the take
      FlushResult b = flush(store, new Batch("n2", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 100, 2).claiming(4, 2, 2).taking(7))));
      assertThat(b.taken(0)).isTrue();
      assertThat(b.current(0)).isEqualTo(5);
      assertThat(b.current(0) + b.claim(0)).isLessThanOrEqualTo(10);
      // more than is free: neither counted nor claimed beyond what is free
      long free = 10 - b.current(0) - b.claim(0);
      FlushResult c = flush(store, new Batch("n3", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "k", 100, free + 1).claiming(free + 1, free + 1, 2).taking(9))));
      assertThat(c.taken(0)).isFalse();
      assertThat(c.current(0)).isEqualTo(5);
      assertThat(readWindow(store, fixed, "k", 100)).isEqualTo(5);
    }
  }

  /**
   * What a node says it admitted under its claim and has not counted (a take's need less the take:
   * demand met) sizes the claims granted as if it were counted, its own and, until their flushes count
   * it, the other nodes'. Counted as claims held ahead of demand, a hot key's used claims left nothing to
   * grant near its limit, and every request there became a take of its own until the next regular sync.
   * (A sliding window's first window, where nothing fades yet, answers as a fixed one.)
   */
  @Test
  void demandMetUnderClaimsSizesClaimsAsIfCounted() {
    Counter fixed = Counter.of(Limit.fixedWindow("met").limit(100).window(Duration.ofMinutes(1)).build());
    Counter sliding = Counter.of(Limit.slidingWindowCounter("metsw").limit(100).window(Duration.ofMinutes(1)).build());
    try (CounterStore store = store(0)) {
      for (Counter counter : List.of(fixed, sliding)) {
        long w = NOW_MICROS / 60_000_000L;
        String algorithm = counter.limit().algorithm().toString();
        String n1 = "n1" + algorithm;
        String n2 = "n2" + algorithm; // (a node's batch sequence is its own across keys)
        assertThat(flush(store, new Batch(n1, 0, 1, NOW_MICROS, List.of(new Delta(counter, "k", w, 0).claiming(100, 2))))
            .claim(0)).as(algorithm).isEqualTo(25);
        assertThat(flush(store, new Batch(n2, 0, 1, NOW_MICROS, List.of(new Delta(counter, "k", w, 0).claiming(100, 2))))
            .claim(0)).as(algorithm).isEqualTo(12);
        // n1 admitted its 25 and takes 1 more: 63 free, 12 of them n2's claim, n1's 25 met: half of
        // 51, split in two: 12 more (6 if its 25 were held ahead of demand), the take out of it
        FlushResult a = flush(store, new Batch(n1, 0, Batch.CLAIM_ONLY, NOW_MICROS,
            List.of(new Delta(counter, "k", w, 1).claiming(126, 26, 2).taking(1))));
        assertThat(a.taken(0)).isTrue();
        assertThat(a.current(0)).isEqualTo(1);
        assertThat(a.claim(0)).as(algorithm).isEqualTo(36);
        // n2 admitted its 12: 51 free, n1's 36 claimed of which 25 met, n2's 12 met: half of 40, split
        // in two (3 with only its own met demand, 1 with none)
        FlushResult b = flush(store, new Batch(n2, 0, Batch.CLAIM_ONLY, NOW_MICROS,
            List.of(new Delta(counter, "k", w, 1).claiming(113, 13, 2).taking(1))));
        assertThat(b.taken(0)).isTrue();
        assertThat(b.current(0)).isEqualTo(2);
        assertThat(b.claim(0)).as(algorithm).isEqualTo(21);
        // n1 counts 20: 5 of its met demand are left uncounted, 16 of its claim committed; 41 free,
        // 21 of n2's claim of which 12 met: half of 21, split in two, on top of what it committed
        FlushResult c = flush(store, new Batch(n1, 0, 2, NOW_MICROS, List.of(new Delta(counter, "k", w, 20).claiming(100, 2))));
        assertThat(c.current(0)).isEqualTo(22);
        assertThat(c.claim(0)).as(algorithm).isEqualTo(21);
        assertThat(c.current(0) + c.claim(0) + b.claim(0)).isLessThanOrEqualTo(100);
      }
    }
  }

  /**
   * A flush that keeps only part of its node's claim (Delta#keeping) has the rest granted anew as what
   * is free is: near the limit an even part per node, so that a claim granted far from the limit does
   * not stay whole with one node while the others' requests are denied. Without it, or keeping more
   * than the node left unused, the store keeps all of the claim the flush's amount did not use. The
   * same on a sliding window (here with nothing counted in the window before, so nothing fades).
   */
  @Test
  void aFlushKeepingPartOfItsClaimHasTheRestGrantedAnew() {
    Counter fixed = Counter.of(Limit.fixedWindow("keep").limit(100).window(Duration.ofMinutes(1)).build());
    Counter sliding = Counter.of(Limit.slidingWindowCounter("keep-s").limit(100).window(Duration.ofMinutes(1)).build());
    long w = NOW_MICROS / 60_000_000L;
    for (Counter counter : List.of(fixed, sliding)) {
      keepingPartOfAClaim(counter, w);
    }
  }

  private void keepingPartOfAClaim(Counter counter, long w) {
    try (CounterStore store = store(0)) {
      long[] claims = new long[3];
      long[] keeps = {-1, 2, 30};
      for (int i = 0; i < keeps.length; i++) {
        String key = "k" + i;
        // (nodes of their own per counter: a node's sequence numbers are its own)
        String a = counter.limit().name() + "-a" + i;
        // a holds a claim of 25 (an even part of half of all), b then counts 60
        assertThat(flush(store, new Batch(a, 0, 1, NOW_MICROS, List.of(new Delta(counter, key, w, 0).claiming(40, 2))))
            .claim(0)).isEqualTo(25);
        flush(store, new Batch(counter.limit().name() + "-b" + i, 0, 1, NOW_MICROS, List.of(new Delta(counter, key, w, 60))));
        // a counts 5 of its claim: 20 unused
        Delta d = new Delta(counter, key, w, 5).claiming(40, 2);
        FlushResult r = flush(store, new Batch(a, 0, 2, NOW_MICROS, List.of(keeps[i] < 0 ? d : d.keeping(keeps[i]))));
        assertThat(r.current(0)).isEqualTo(65);
        assertThat(r.current(0) + r.claim(0)).isLessThanOrEqualTo(100);
        claims[i] = r.claim(0);
      }
      // all kept: 15 free, less its 20 committed: nothing more. Two kept: 33 free, half of 31 split in
      // two on top of them. Thirty kept: more than the 20 unused, so all 20 kept, as without keeping
      assertThat(claims).as(counter.limit().name()).containsExactly(20, 9, 20);
    }
  }

  /**
   * A take whose answer never reached the node is settled by a numbered flush: counted if the
   * failure policy admitted the request and the take was not counted, taken back if it denied it and
   * the take was counted, and the take, arriving after its settle, is ignored. The settle is applied
   * once, with its batch.
   */
  @Test
  void aTakeWithoutAnAnswerIsSettledOnceByTheNextFlush() {
    Counter fixed = Counter.of(Limit.fixedWindow("fs").limit(100).window(Duration.ofMinutes(1)).build());
    try (CounterStore store = store(0)) {
      // counted, then the policy denied the request: taken back
      flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "a", 100, 4).claiming(4, 4, 1).taking(10))));
      assertThat(readWindow(store, fixed, "a", 100)).isEqualTo(4);
      Batch deny = new Batch("n1", 0, 1, NOW_MICROS, List.of(new Delta(fixed, "a", 100, 1).settling(10, 4, false)));
      assertThat(flush(store, deny).current(0)).isEqualTo(1);
      assertThat(flush(store, deny).applied()).as("a retry of the settle").isFalse();
      assertThat(readWindow(store, fixed, "a", 100)).isEqualTo(1);
      // counted, and the policy admitted it: nothing more
      flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "b", 100, 2).claiming(2, 2, 1).taking(11))));
      flush(store, new Batch("n1", 0, 2, NOW_MICROS, List.of(new Delta(fixed, "b", 100, 0).settling(11, 2, true))));
      assertThat(readWindow(store, fixed, "b", 100)).isEqualTo(2);
      // never arrived, and the policy admitted it: counted by the settle; the take, arriving late, is ignored
      flush(store, new Batch("n1", 0, 3, NOW_MICROS, List.of(new Delta(fixed, "c", 100, 0).settling(12, 3, true))));
      assertThat(readWindow(store, fixed, "c", 100)).isEqualTo(3);
      FlushResult late = flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "c", 100, 3).claiming(3, 3, 1).taking(12))));
      assertThat(late.taken(0)).isFalse();
      assertThat(readWindow(store, fixed, "c", 100)).isEqualTo(3);
      // never arrived, and the policy denied it: nothing, and the late take is ignored too
      flush(store, new Batch("n1", 0, 4, NOW_MICROS, List.of(new Delta(fixed, "d", 100, 0).settling(13, 5, false))));
      flush(store, new Batch("n1", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "d", 100, 5).claiming(5, 5, 1).taking(13))));
      assertThat(readWindow(store, fixed, "d", 100)).isZero();
      // tokens are the node's: another node's take with the same token is its own
      FlushResult other = flush(store, new Batch("n2", 0, Batch.CLAIM_ONLY, NOW_MICROS,
          List.of(new Delta(fixed, "d", 100, 5).claiming(5, 5, 1).taking(13))));
      assertThat(other.taken(0)).isTrue();
      assertThat(readWindow(store, fixed, "d", 100)).isEqualTo(5);
      assertThatThrownBy(() -> new Batch("n1", 0, 5, NOW_MICROS, List.of(new Delta(fixed, "d", 100, 1).taking(14))))
          .hasMessageStartingWith("deltas:");
    }
  }
}
