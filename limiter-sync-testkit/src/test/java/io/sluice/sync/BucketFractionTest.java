package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.function.LongToDoubleFunction;
import org.junit.jupiter.api.Test;

/**
 * One node on a batched token bucket decides as the exact bucket does. Its claimed tokens expire as the
 * store's bucket refills past them; what they charged stayed in the store's backlog (the whole tokens
 * expired and the part of one left), and once the key reached its limit the node's next tokens came due
 * that much later than the exact bucket's: after a step from half to three times the bucket's rate,
 * 160-403 requests of about 3,500 admitted in another order than the exact algorithm's (the node's next
 * token 0.69 ms after the exact bucket's). The node now gives back, with its next claim, what the store
 * holds beyond its own admissions, where nothing else wrote the bucket since its last grant.
 */
class BucketFractionTest {

  /** Requests the node decided otherwise than the exact bucket: {denied where it admitted, admitted where it denied}. */
  private static int[] disagreements(long seed) {
    Limit limit = Limit.tokenBucket("b").capacity(500).refill(500, Duration.ofSeconds(1)).build();
    // 250 a second for 2 s (below the refill: the bucket stays full), then 1,500 a second
    return disagreements(limit, seed, 4_000_000_000L, t -> t < 2_000_000_000L ? 250 : 1_500, 1);
  }

  /**
   * One node on {@code limit}, Poisson requests of {@code cost} for {@code runNanos} at {@code
   * perSecondAt} (a rate for each time from the start): {denied where the exact bucket admitted,
   * admitted where it denied}.
   */
  private static int[] disagreements(Limit limit, long seed, long runNanos, LongToDoubleFunction perSecondAt,
      long cost) {
    int[] out = new int[2];
    try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), false)) {
      sim.batchSize = 100;
      sim.startNode();
      SplittableRandom random = new SplittableRandom(seed);
      for (long t = 0; t < runNanos; ) {
        t += (long) (-Math.log(1 - random.nextDouble()) / perSecondAt.applyAsDouble(t) * 1e9);
        t = t / 1_000 * 1_000;
        sim.at(t);
        boolean node = sim.acquire(0, "k", cost);
        if (node != sim.lastExact.allowed()) {
          out[node ? 1 : 0]++;
        }
      }
    }
    return out;
  }

  /**
   * One node, a bucket of 10 refilled 10 a second, requests of 8 tokens (a key of the accuracy kit's
   * small-limits profile, seed 1,013, its request times as the kit drew them). A request the node's
   * usable tokens cannot pay asks the store, and the tokens it still holds pay first, then the new
   * grant's. The node's own bucket (what its admissions alone leave in the store's, which bounds what
   * goes back with its next claim) was charged the whole cost, though the held tokens had been charged
   * before the grant, in the backlog the own bucket starts from: what the node gave back fell short by
   * them, the store's bucket lagged the exact one, and from 2.78 s on the node decided 10 of the 54
   * requests otherwise (0.105% of the kit's requests denied against the exact algorithm on that profile,
   * 0.052% now). Now the same as the exact bucket, request by request.
   */
  @Test
  void tokensHeldFromAnEarlierGrantAreNotChargedTwice() {
    long[] micros = {
        1310026, 1409317, 1468011, 1473636, 1562023, 1582119, 1921562, 1922961, 2007958, 2066796, 2779783,
        2888008, 2951616, 3092183, 3294110, 3363244, 3446564, 3446643, 3506531, 3630259, 3696018, 3721912,
        3797219, 3849805, 4175316, 4247793, 4283804, 4350686, 4488162, 4503050, 4513326, 4620060, 4625316,
        4735401, 4783181, 4793714, 4893076, 4936953, 5209703, 5684816, 5689694, 5759526, 5816701, 5978425,
        6128519, 6159988, 6260020, 6279552, 6315736, 6375877, 6408964, 6462580, 6868786, 7265897};
    Limit limit = Limit.tokenBucket("b").capacity(10).refill(10, Duration.ofSeconds(1)).build();
    try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), false)) {
      sim.batchSize = 100;
      sim.startNode();
      for (long us : micros) {
        sim.at((us - 1_300_000) * 1_000);
        sim.acquire(0, "k", 8);
      }
      assertThat(sim.nodeLetters.toString()).isEqualTo(sim.exactLetters.toString());
    }
  }

  /**
   * One node, a leaky bucket meter of 5 leaking 5 a second, requests of one token (a key of the accuracy
   * kit's small-limits profile on a seed it does not run, 27013, its request times as the kit drew
   * them). The node held a token ahead that expired unused 443 ms before its next request; the sync
   * dropped its holding as idle, and with it the grant it would have given that token's part back with
   * (70 ms of the bucket's backlog): the store's bucket then lagged the exact one while the key stayed
   * at its limit, and the node denied 8 of these 64 requests that the exact bucket admitted (admitting
   * 8 others instead). A holding whose grant still charges the store more than its admissions is now
   * kept until the bucket has drained past it.
   */
  @Test
  void aHoldingIsKeptWhileItsGrantStillChargesTheStoreMoreThanItsAdmissions() {
    long[] micros = {
        0, 86513, 529273, 607864, 747152, 855587, 955658, 1014595, 1126385, 1132371, 1145341, 1201323, 1203558,
        1205499, 1205680, 1374187, 1447841, 1496556, 1651411, 1664140, 1724398, 1725968, 1782091, 1834311,
        1873961, 2122395, 2200046, 2416443, 2453540, 2644435, 2839311, 2926587, 2936560, 2938723, 2959132,
        2973068, 2984496, 3062092, 3121996, 3134042, 3407712, 3451350, 3518607, 3820396, 3841552, 3847403,
        3897640, 4151901, 4317350, 4330363, 4367440, 4418492, 4439998, 4491723, 4685894, 4792970, 4882651,
        5148730, 5205650, 5303610, 5311915, 5365055, 5369197, 5414537};
    Limit limit = Limit.leakyBucket("m").capacity(5).leakRate(5, Duration.ofSeconds(1)).build();
    int differences = 0;
    for (long phaseMillis = 0; phaseMillis < 100; phaseMillis += 10) {
      try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), false)) {
        sim.batchSize = 100;
        sim.startNode();
        for (long us : micros) {
          sim.at((us + 1_000 * phaseMillis) * 1_000);
          sim.acquire(0, "k", 1);
        }
        String node = sim.nodeLetters.toString();
        String exact = sim.exactLetters.toString();
        for (int i = 0; i < node.length(); i++) {
          differences += node.charAt(i) != exact.charAt(i) ? 1 : 0;
        }
      }
    }
    assertThat(differences).as("requests decided otherwise than the exact meter, ten sync phases").isZero();
  }

  /**
   * One node, a bucket of 10 refilled 10 a second, requests of 3 tokens at 5 a second (half again the
   * bucket's rate), 8 s, seeds 1-20. A request its due tokens cannot pay, while tokens of its last grant
   * are still to come, drops those; they went back with the next claim only where the node held no
   * token, so with due tokens held they stayed charged and the store's bucket lagged the exact one: 38
   * requests denied where the exact bucket admitted (32 the other way). Alone, the node now lets its due
   * tokens go too and asks for the whole cost: 15 (12); 7 since a key's first decision claims nothing ahead.
   */
  @Test
  void aLoneNodeGivesBackWhatItHoldsWhenItsRequestWaitsForTokensStillToCome() {
    Limit limit = Limit.tokenBucket("b").capacity(10).refill(10, Duration.ofSeconds(1)).build();
    int denied = 0;
    for (long seed = 1; seed <= 20; seed++) {
      denied += disagreements(limit, seed, 8_000_000_000L, t -> 5, 3)[0];
    }
    assertThat(denied).as("requests denied where the exact bucket admitted them").isLessThanOrEqualTo(20);
  }

  /**
   * One node, a bucket of 10,000 refilled 10,000 a second, requests of 25 tokens at twice its rate (the
   * accuracy kit's large-many profile's hot key; the kit on seeds it does not run, 51043 and 59022, found
   * 0.39-0.41% of its requests denied that the exact bucket admitted, with one node). While the bucket is
   * still full, the tokens a grant holds expire as it refills past them, in whole tokens: the part of one
   * left stays charged in the store. The give-back that returns it went only with a claim made while the
   * node held no token of its last grant, which a key asked that often rarely is at a claim, so up to a
   * token stayed charged while the key was at its limit, and each request of 25 that found between 25
   * and 26 tokens in the exact bucket was denied.
   */
  @Test
  void whatExpiredOfAGrantGoesBackWhileTheNodeStillHoldsSomeOfIt() {
    Limit limit = Limit.tokenBucket("b").capacity(10_000).refill(10_000, Duration.ofSeconds(1)).build();
    int[] total = new int[2];
    for (long seed = 1; seed <= 6; seed++) {
      int[] d = disagreements(limit, seed, 3_000_000_000L, t -> 800, 25);
      total[0] += d[0];
      total[1] += d[1];
    }
    assertThat(total[0]).as("denied where the exact bucket admitted, seeds 1-6").isZero();
    assertThat(total[1]).as("admitted where the exact bucket denied, seeds 1-6").isZero();
  }

  @Test
  void aSingleNodeAtTheLimitDecidesAsTheExactBucket() {
    for (long seed = 5; seed < 8; seed++) {
      int[] d = disagreements(seed);
      assertThat(d[0]).as("denied where the exact bucket admitted, seed %d", seed).isZero();
      assertThat(d[1]).as("admitted where the exact bucket denied, seed %d", seed).isZero();
    }
  }

  /**
   * What is given back never lets the node pass the bucket: a small bucket (20, refilled 20 a second),
   * a rate that changes now and then between 2 and 62 a second, the node's admissions replayed through
   * the bucket with debt allowed, 60 seeds of 8 s.
   */
  @Test
  void whatIsGivenBackNeverTakesTheNodePastTheBucket() {
    Limit limit = Limit.tokenBucket("b").capacity(20).refill(20, Duration.ofSeconds(1)).build();
    for (long seed = 1; seed <= 60; seed++) {
      try (ProbeSim sim = new ProbeSim(limit, Duration.ofMillis(100), false)) {
        sim.batchSize = 100;
        sim.startNode();
        SplittableRandom random = new SplittableRandom(seed);
        double debt = 0;
        long last = 0;
        double rate = 5 + random.nextDouble() * 40;
        for (long t = 0; t < 8_000_000_000L; ) {
          if (random.nextInt(200) == 0) {
            rate = 2 + random.nextDouble() * 60;
          }
          t += (long) (-Math.log(1 - random.nextDouble()) / rate * 1e9);
          t = t / 1_000 * 1_000;
          sim.at(t);
          if (sim.acquire(0, "k", 1)) {
            debt = Math.max(0, debt - (t - last) * 20e-9) + 1;
            last = t;
            assertThat(debt).as("the bucket's debt after an admission at %d ns, seed %d", t, seed).isLessThanOrEqualTo(20 + 1e-6);
          }
        }
      }
    }
  }
}
