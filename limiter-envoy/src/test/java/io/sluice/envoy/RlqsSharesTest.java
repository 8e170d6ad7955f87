package io.sluice.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The assignment arithmetic ({@link RlqsShares}) and the leases behind it ({@link RlqsBudget}), over
 * random limits, demands and orders: the shares of a period never sum over the limit, a lone stream
 * gets the whole limit, and shares follow demand.
 */
class RlqsSharesTest {
  private static final long SEED = Long.getLong("sluice.rlqs.seed", System.nanoTime());

  @Test
  void asksOfStreamsWhoseWeightsMakeTheTotalNeverSumOverTheLimit() {
    Random r = new Random(SEED);
    for (int round = 0; round < 20_000; round++) {
      long limit = r.nextInt(4) == 0 ? 1 + r.nextInt(10) : 1 + r.nextInt(Integer.MAX_VALUE);
      int n = 1 + r.nextInt(50);
      long[] weights = new long[n];
      long total = 0;
      for (int i = 0; i < n; i++) {
        weights[i] = RlqsShares.weight(r.nextDouble() * 3 * limit, limit);
        total += weights[i];
      }
      long sum = 0;
      for (long w : weights) {
        long want = RlqsShares.want(limit, w, total);
        assertThat(want).as("seed %d round %d", SEED, round).isBetween(0L, limit);
        sum += want;
      }
      assertThat(sum).as("seed %d round %d: limit %d, weights %s", SEED, round, limit, weights).isLessThanOrEqualTo(limit);
      // and the rounding leaves at most one permit per stream unasked
      assertThat(limit - sum).as("seed %d round %d", SEED, round).isLessThan(n);
    }
  }

  @Test
  void aLoneStreamAsksForTheWholeLimitWhateverItsDemand() {
    Random r = new Random(SEED);
    for (int round = 0; round < 10_000; round++) {
      long limit = 1 + r.nextInt(Integer.MAX_VALUE);
      long w = RlqsShares.weight(r.nextBoolean() ? Double.NaN : r.nextDouble() * 2 * limit, limit);
      assertThat(RlqsShares.want(limit, w, w)).isEqualTo(limit);
      // a total the store had not seen it in yet counts as its own weight
      assertThat(RlqsShares.want(limit, w, 0)).isEqualTo(limit);
    }
  }

  @Test
  void weightsFollowDemandBetweenTheFloorAndTheWholeLimit() {
    assertThat(RlqsShares.weight(Double.NaN, 100)).isEqualTo(RlqsShares.FULL_WEIGHT);
    assertThat(RlqsShares.weight(0, 100)).isEqualTo(RlqsShares.MIN_WEIGHT);
    assertThat(RlqsShares.weight(50, 100)).isEqualTo(500);
    assertThat(RlqsShares.weight(100, 100)).isEqualTo(RlqsShares.FULL_WEIGHT);
    assertThat(RlqsShares.weight(1e12, 100)).isEqualTo(RlqsShares.FULL_WEIGHT);
    // three times the demand, three times the share
    long busy = RlqsShares.weight(75, 100);
    long quiet = RlqsShares.weight(25, 100);
    assertThat(RlqsShares.want(100, busy, busy + quiet)).isEqualTo(75);
    assertThat(RlqsShares.want(100, quiet, busy + quiet)).isEqualTo(25);
  }

  @Test
  void demandIsRequestsPerUnitOverTheTimeReported() {
    // 30 allowed and 30 denied in 2 s is 30 a second, 1800 a minute
    assertThat(RlqsShares.demandPerUnit(30, 30, 2_000_000_000L, 60_000_000_000L)).isEqualTo(1800.0);
    // uint64 counts past 2^63 are read unsigned
    assertThat(RlqsShares.demandPerUnit(-1, 0, 1_000_000_000L, 1_000_000_000L)).isGreaterThan(1e19);
    assertThat(RlqsShares.smooth(Double.NaN, 10)).isEqualTo(10);
    assertThat(RlqsShares.smooth(10, 30)).isEqualTo(20);
  }

  @Test
  void aSpanningAssignmentIsTheSmallerShare() {
    Random r = new Random(SEED);
    for (int i = 0; i < 1000; i++) {
      long a = r.nextInt(1000);
      long b = r.nextInt(1000);
      long s = RlqsShares.spanning(a, b);
      assertThat(s).isLessThanOrEqualTo(a).isLessThanOrEqualTo(b).isIn(a, b);
    }
  }

  /**
   * The leases themselves: streams with random demands renewing each period in random order on one
   * store, some joining mid-period and some leaving: what a period grants never sums over the limit,
   * whatever the arithmetic asked.
   */
  @Test
  void leasedSharesOfAPeriodNeverSumOverTheLimit() {
    Random r = new Random(SEED);
    for (int round = 0; round < 200; round++) {
      MemoryStore store = new MemoryStore();
      RlqsBudget budget = new RlqsBudget(store, Duration.ofSeconds(1));
      long limit = r.nextInt(3) == 0 ? 1 + r.nextInt(5) : 1 + r.nextInt(10_000);
      String key = RlqsBudget.key("edge", Map.of("name", "api"));
      List<Double> demands = new ArrayList<>();
      for (int i = 1 + r.nextInt(8); i > 0; i--) {
        demands.add(r.nextDouble() * 2 * limit);
      }
      for (long period = 100; period < 110; period++) {
        long sum = 0;
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < demands.size(); i++) {
          order.add(i);
        }
        Collections.shuffle(order, r);
        for (int i : order) {
          long w = RlqsShares.weight(demands.get(i), limit);
          long g = r.nextInt(4) == 0
              ? budget.join(key, limit, RlsUnit.MINUTE, period, r.nextInt(1_000_000), w).toCompletableFuture().join()
              : budget.renew(key, limit, RlsUnit.MINUTE, period, w, r.nextBoolean() ? w : 0).toCompletableFuture().join();
          sum += g;
        }
        assertThat(sum).as("seed %d round %d period %d: limit %d, demands %s", SEED, round, period, limit, demands)
            .isLessThanOrEqualTo(limit);
        if (r.nextInt(3) == 0 && demands.size() > 1) {
          demands.remove(0); // a stream went away
        }
      }
    }
  }

  @Test
  void aLoneStreamLeasesTheWholeLimitAndSharesFollowDemandOnePeriodLater() {
    MemoryStore store = new MemoryStore();
    RlqsBudget budget = new RlqsBudget(store, Duration.ofSeconds(1));
    String key = RlqsBudget.key("edge", Map.of("name", "api"));
    long w = RlqsShares.weight(Double.NaN, 100);
    assertThat(budget.join(key, 100, RlsUnit.SECOND, 7, 0, w).toCompletableFuture().join()).isEqualTo(100);
    // a second stream joining the same period finds nothing free
    long busy = RlqsShares.weight(75, 100);
    long quiet = RlqsShares.weight(25, 100);
    assertThat(budget.join(key, 100, RlsUnit.SECOND, 7, 500_000, quiet).toCompletableFuture().join()).isZero();
    // the next period is split by the weights counted in this one (the first stream's counted full,
    // now its weight is 750; the second added 250)
    long a = budget.renew(key, 100, RlsUnit.SECOND, 8, busy, w).toCompletableFuture().join();
    long b = budget.renew(key, 100, RlsUnit.SECOND, 8, quiet, quiet).toCompletableFuture().join();
    assertThat(a + b).isLessThanOrEqualTo(100);
    assertThat(a).isEqualTo(100 * busy / (w + quiet - w + busy));
    assertThat(b).isEqualTo(100 * quiet / (w + quiet));
    // and the one after by the weights of the period before: 3 to 1
    assertThat(budget.renew(key, 100, RlsUnit.SECOND, 9, busy, busy).toCompletableFuture().join()).isEqualTo(75);
    assertThat(budget.renew(key, 100, RlsUnit.SECOND, 9, quiet, quiet).toCompletableFuture().join()).isEqualTo(25);
    // the quiet one went away: the busy one alone from the period after next
    assertThat(budget.renew(key, 100, RlsUnit.SECOND, 10, busy, busy).toCompletableFuture().join()).isEqualTo(75);
    assertThat(budget.renew(key, 100, RlsUnit.SECOND, 11, busy, busy).toCompletableFuture().join()).isEqualTo(100);
    // alone, its demand falling: still the whole limit
    assertThat(budget.renew(key, 100, RlsUnit.SECOND, 12, quiet, busy).toCompletableFuture().join()).isEqualTo(100);
  }

  @Test
  void keysOfDifferentBucketIdsAndDomainsNeverMeet() {
    assertThat(RlqsBudget.key("edge", Map.of("a", "b", "c", "d")))
        .isEqualTo(RlqsBudget.key("edge", Map.of("c", "d", "a", "b")));
    assertThat(RlqsBudget.key("edge", Map.of("a", "b|1:c=1:d")))
        .isNotEqualTo(RlqsBudget.key("edge", Map.of("a", "b", "c", "d")));
    assertThat(RlqsBudget.key("edge|1:a=1:b", Map.of("c", "d")))
        .isNotEqualTo(RlqsBudget.key("edge", Map.of("a", "b", "c", "d")));
  }
}
