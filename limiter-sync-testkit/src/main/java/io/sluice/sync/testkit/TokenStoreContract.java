package io.sluice.sync.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Algorithm;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.node.RateLimiter;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.ExactResult;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.StoreKeys;
import io.sluice.sync.spi.TokenGrant;
import io.sluice.sync.spi.TokenStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The token claims' contract ({@link TokenStore}), run by the integration test of every store against
 * a real server or cluster (the shared test kit) and on the in-memory store: behaviours one by one,
 * each with its numbers worked out by hand; random traces of claims, give-backs and exact acquires on
 * one key, through the nodes' stores in turn, compared step by step with a reference model written
 * here (a GCRA on the theoretical arrival time, in units of 1 / refill of a microsecond: another
 * formulation than the stores' rebased backlog, with no gcd taken), so that the Lua script and the
 * Java processor are held to the same vectors to the unit; and several nodes claiming one key at once.
 * Subclasses hand out the nodes' stores (each both a token and an exact store, open for the whole
 * class; keys are not cleaned up: every test uses limits of its own) and say how to look at a key.
 */
public abstract class TokenStoreContract {
  protected static final long T0 = ExactStoreContract.EPOCH_2026_MICROS + 3_600_000_000L;
  protected static final int NODES = ExactStoreContract.NODES;
  private static final long SECOND = 1_000_000L;
  private static final int TRACES = 150;
  private static final int MAX_STEPS = 60;
  private static final long BASE_SEED = 0x70C3L;

  /** The token store of node {@code n} (0 to {@link #NODES} - 1). */
  protected abstract TokenStore tokens(int n);

  /** The exact store of node {@code n}: the same store as {@link #tokens}. */
  protected abstract ExactStore exact(int n);

  /** Time left before the key of this limit expires, in ms; negative when it does not exist. */
  protected abstract long ttlMillis(String limitName, String key);

  /** Whether the store holds the key of this limit. */
  protected abstract boolean exists(String limitName, String key);

  static TokenGrant claim(TokenStore store, Limit limit, String key, long want, long need, long giveBack,
      long horizonMicros, long nowMicros) {
    try {
      return store.claimTokens(limit, key, want, need, giveBack, horizonMicros, nowMicros).toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("claim " + limit + " key " + key + " want " + want + " need " + need + " giveBack "
          + giveBack + " horizon " + horizonMicros + " at " + nowMicros, e);
    }
  }

  protected TokenGrant claim(Limit limit, String key, long want, long need, long giveBack, long horizonMicros, long now) {
    return claim(tokens(0), limit, key, want, need, giveBack, horizonMicros, now);
  }

  protected ExactResult acquire(Limit limit, String key, long cost, long nowMicros) {
    return ExactStoreContract.acquire(exact(1), limit, key, cost, nowMicros);
  }

  private static Limit bucket(Algorithm a, String name, long capacity, long tokens, long periodMicros) {
    return Limit.builder(name, a).capacity(capacity).refill(tokens, Duration.ofNanos(periodMicros * 1_000)).build();
  }

  private static final List<Algorithm> BUCKETS = List.of(Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET);

  // ---- behaviours, one by one ----

  @Test
  void aFullBucketGrantsUpToItsCapacityAtOnce() {
    for (Algorithm a : BUCKETS) {
      Limit limit = bucket(a, "full-" + a.name().toLowerCase(), 5, 1, SECOND);
      Counter c = Counter.of(limit);
      TokenGrant g = claim(limit, "k", 5, 1, 0, 0, T0);
      assertThat(g).as(a.toString()).isEqualTo(new TokenGrant(5, 0, 0, 0));
      for (long i = 1; i <= 5; i++) {
        assertThat(g.dueMicros(c, T0, i)).as("token " + i + " is due at once").isEqualTo(T0);
      }
      // nothing left without a horizon: one token in a second
      assertThat(claim(limit, "k", 1, 1, 0, 0, T0)).isEqualTo(new TokenGrant(0, 5 * SECOND, 0, SECOND));
      assertThat(claim(limit, "k2", 3, 3, 0, 0, T0)).isEqualTo(new TokenGrant(3, 0, 2, 0));
      // lives until the backlog has drained (5 s), plus the exact scripts' margin of 5 s
      assertThat(ttlMillis(StoreKeys.storeName(limit), "k")).isBetween(5_000L, 10_000L);
    }
  }

  /**
   * Beyond the bucket's level, the horizon grants the refill to come, each token due when the bucket
   * has drained enough for it: checked against the in-process bucket of limiter-node, which admits each
   * token at its due time and not a microsecond before.
   */
  @Test
  void theHorizonGrantsTheRefillToComeAndEachTokenIsDueWhenTheBucketHasIt() {
    Limit limit = bucket(Algorithm.TOKEN_BUCKET, "horizon", 5, 1, SECOND);
    Counter c = Counter.of(limit);
    TokenGrant g = claim(limit, "k", 8, 8, 0, 3 * SECOND, T0);
    assertThat(g).isEqualTo(new TokenGrant(8, 0, 0, 0));
    assertThat(g.dueMicros(c, T0, 5)).isEqualTo(T0);
    assertThat(g.dueMicros(c, T0, 6)).isEqualTo(T0 + SECOND);
    assertThat(g.dueMicros(c, T0, 8)).isEqualTo(T0 + 3 * SECOND);
    // in debt: 3 tokens owed; one more is 4 s away, or 1 s with a horizon of 3 s
    assertThat(claim(limit, "k", 1, 1, 0, 0, T0)).isEqualTo(new TokenGrant(0, 8 * SECOND, 0, 4 * SECOND));
    assertThat(claim(limit, "k", 2, 1, 0, 3 * SECOND, T0)).isEqualTo(new TokenGrant(0, 8 * SECOND, 0, SECOND));
    // the exact callers of the bucket see the debt: no permit left (not fewer than none), one in 4 s
    ExactResult r = acquire(limit, "k", 1, T0);
    assertThat(r.remaining()).isZero();
    assertThat(r.retryAfterMicros()).isEqualTo(4 * SECOND);
    r = acquire(limit, "k", 1, T0 + 3 * SECOND);
    assertThat(r.allowed()).isFalse();
    assertThat(r.retryAfterMicros()).isEqualTo(SECOND);
    assertThat(acquire(limit, "k", 1, T0 + 4 * SECOND).allowed()).isTrue();

    // an awkward rate (3 tokens per 1,000,007 us: due times are rounded up), against the in-process bucket
    Limit odd = bucket(Algorithm.TOKEN_BUCKET, "horizon-odd", 4, 3, 1_000_007);
    Counter oc = Counter.of(odd);
    assertThat(acquire(odd, "k", 1, T0).allowed()).isTrue();
    TokenGrant og = claim(odd, "k", 6, 2, 0, SECOND, T0 + 10); // at most 4 + 3 * 1 s / 1.000007 s
    // backlog 1000007 - 30 (10 us drained); room 4 * 1000007 + 3 * 1 s - 999977 = 6000051 units: 6 tokens
    assertThat(og).isEqualTo(new TokenGrant(6, 1_000_007 - 30, 0, 0));
    ManualTicker ticker = new ManualTicker(T0 * 1_000);
    RateLimiter inProcess = RateLimiter.builder(odd).ticker(ticker).build();
    assertThat(inProcess.tryAcquire("k")).isTrue();
    ticker.advanceNanos(10_000);
    long at = T0 + 10;
    for (long i = 1; i <= og.granted(); i++) {
      long due = og.dueMicros(oc, T0 + 10, i);
      assertThat(due).isGreaterThanOrEqualTo(at);
      if (due > T0 + 10) {
        ticker.advanceNanos((due - 1 - at) * 1_000);
        assertThat(inProcess.tryAcquire("k")).as("token " + i + " a microsecond before it is due").isFalse();
        at = due - 1;
      }
      ticker.advanceNanos((due - at) * 1_000);
      at = due;
      assertThat(inProcess.tryAcquire("k")).as("token " + i + " at its due time " + due).isTrue();
    }
    assertThat(og.dueMicros(oc, T0 + 10, 4)).isEqualTo(T0 + 10 + 333_326); // ceil((1000007 - 30) / 3)
    assertThat(og.dueMicros(oc, T0 + 10, 6)).isEqualTo(T0 + 10 + 999_997); // (3 * 1000007 - 30) / 3, exact
  }

  /** A claim whose need does not fit grants nothing and leaves the state as it was (its base time too). */
  @Test
  void aNeedThatDoesNotFitGrantsNothingAndWritesNothing() {
    Limit limit = bucket(Algorithm.TOKEN_BUCKET, "need", 5, 1, SECOND);
    assertThat(acquire(limit, "k", 5, T0).remaining()).isZero();
    // 2 tokens refilled by T0 + 2 s: a need of 3 gets none, retry in 1 s
    assertThat(claim(limit, "k", 4, 3, 0, 0, T0 + 2 * SECOND)).isEqualTo(new TokenGrant(0, 3 * SECOND, 2, SECOND));
    // had the claim written, its base (T0 + 2 s) would count this caller 1 s behind it at T0 + 2 s
    ExactResult r = acquire(limit, "k", 2, T0 + SECOND);
    assertThat(r.allowed()).isFalse();
    assertThat(r.remaining()).isEqualTo(1);
    // a give-back to a key without state is a full bucket already: nothing is written
    claim(limit, "fresh", 0, 0, 3, 0, T0);
    assertThat(exists(StoreKeys.storeName(limit), "fresh")).isFalse();
    // need 0: whatever there is, none when there is none
    assertThat(claim(limit, "k", 3, 0, 0, 0, T0 + SECOND).granted()).isEqualTo(1);
    assertThat(claim(limit, "k", 3, 0, 0, 0, T0 + SECOND)).isEqualTo(new TokenGrant(0, 5 * SECOND, 0, SECOND));
  }

  /** A give-back restores unused tokens, never above a full bucket, and pays a debt down. */
  @Test
  void giveBackRestoresTokensNeverAboveFullAndReducesDebt() {
    Limit limit = bucket(Algorithm.TOKEN_BUCKET, "give", 5, 1, SECOND);
    assertThat(claim(limit, "k", 5, 5, 0, 0, T0).granted()).isEqualTo(5);
    assertThat(claim(tokens(2), limit, "k", 0, 0, 2, 0, T0)).isEqualTo(new TokenGrant(0, 3 * SECOND, 2, 0));
    assertThat(acquire(limit, "k", 3, T0).allowed()).isFalse();
    assertThat(acquire(limit, "k", 2, T0).allowed()).isTrue();
    assertThat(claim(tokens(3), limit, "k", 0, 0, 10, 0, T0)).isEqualTo(new TokenGrant(0, 0, 5, 0));
    assertThat(acquire(limit, "k", 5, T0).remaining()).isZero();

    // in debt: 8 tokens with 3 of the refill to come; 2 given back leave 1 owed
    assertThat(claim(limit, "debt", 8, 8, 0, 3 * SECOND, T0).granted()).isEqualTo(8);
    assertThat(claim(limit, "debt", 0, 0, 2, 0, T0)).isEqualTo(new TokenGrant(0, 6 * SECOND, 0, 0));
    assertThat(claim(limit, "debt", 1, 1, 0, 0, T0)).isEqualTo(new TokenGrant(0, 6 * SECOND, 0, 2 * SECOND));
    // a give-back and a claim in one call: 3 back pays the debt and leaves 2 in the bucket, both taken
    assertThat(claim(limit, "debt", 2, 2, 3, 0, T0)).isEqualTo(new TokenGrant(2, 3 * SECOND, 0, 0));
    assertThat(acquire(limit, "debt", 1, T0).allowed()).isFalse();
  }

  /**
   * What a caller's last grant charged and the caller will not use comes back only where the bucket is
   * still as that grant left it: after any other write (a claim, an exact decision), another caller's
   * tokens may rest on it.
   */
  @Test
  void unusedUnitsComeBackOnlyWhereTheBucketIsAsTheLastGrantLeftIt() {
    Limit limit = bucket(Algorithm.TOKEN_BUCKET, "unused", 5, 1, SECOND); // a token is SECOND units
    TokenGrant first = claim(limit, "k", 3, 3, 0, 0, T0);
    assertThat(first.granted()).isEqualTo(3);
    long left = 3 * SECOND; // the backlog the grant wrote, at its counted time
    TokenGrant second = claimUnused(tokens(0), limit, "k", 1, 1, T0, SECOND + SECOND / 2, first.countedAtMicros(), left);
    assertThat(second.granted()).isEqualTo(1);
    assertThat(second.backlogBefore()).as("a token and a half back, then one granted").isEqualTo(SECOND + SECOND / 2);
    // the bucket is no longer as the first grant left it: nothing comes back
    TokenGrant third = claimUnused(tokens(1), limit, "k", 1, 1, T0, SECOND, first.countedAtMicros(), left);
    assertThat(third.backlogBefore()).isEqualTo(2 * SECOND + SECOND / 2);
    // nor after an exact decision on the key since the caller's grant
    TokenGrant fourth = claim(limit, "e", 2, 2, 0, 0, T0);
    assertThat(acquire(limit, "e", 1, T0).allowed()).isTrue();
    assertThat(claimUnused(tokens(0), limit, "e", 1, 1, T0, SECOND, fourth.countedAtMicros(), 2 * SECOND).backlogBefore())
        .isEqualTo(3 * SECOND);
    // never below a full bucket
    TokenGrant fifth = claim(limit, "f", 1, 1, 0, 0, T0);
    assertThat(claimUnused(tokens(0), limit, "f", 1, 1, T0, 4 * SECOND, fifth.countedAtMicros(), SECOND).backlogBefore())
        .isZero();
    assertThatThrownBy(() -> tokens(0).claimTokens(limit, "k", 1, 1, 0, 0, T0, -1, 0, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("unused:");
    assertThatThrownBy(() -> tokens(0).claimTokens(limit, "k", 1, 1, 0, 0, T0, 1, -1, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("ifAt:");
  }

  static TokenGrant claimUnused(TokenStore store, Limit limit, String key, long want, long need, long nowMicros,
      long unused, long ifAt, long ifBacklog) {
    try {
      return store.claimTokens(limit, key, want, need, 0, 0, nowMicros, unused, ifAt, ifBacklog).toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("claim " + limit + " key " + key + " unused " + unused, e);
    }
  }

  /**
   * An exact node's give-back (a release: another limit of the request denied it) never takes the
   * backlog below the highest point token claims took it to, drained to the give-back's time: claimed
   * tokens rest on what is under them, and given back from under them, their holders' tokens would look
   * covered after the bucket had refilled past them while the room went to another claim.
   */
  @Test
  void anExactGiveBackStopsWhereClaimsTookTheBacklog() {
    Limit limit = bucket(Algorithm.TOKEN_BUCKET, "give-under", 5, 1, SECOND); // a token is SECOND units
    assertThat(acquire(limit, "k", 2, T0).allowed()).isTrue(); // backlog 2 tokens
    assertThat(claim(limit, "k", 2, 2, 0, 0, T0).granted()).isEqualTo(2); // 4: the claims' mark
    assertThat(acquire(limit, "k", 1, T0).allowed()).isTrue(); // 5
    ExactStoreContract.giveBack(exact(2), limit, "k", 3, T0, 0);
    assertThat(acquire(limit, "k", 2, T0).allowed()).as("only the token above the mark came back").isFalse();
    assertThat(acquire(limit, "k", 1, T0).remaining()).isZero();
    // the mark drains with the bucket: 2.5 tokens later the backlog is 2.5 and the floor 1.5
    ExactStoreContract.giveBack(exact(3), limit, "k", 5, T0 + 2 * SECOND + SECOND / 2, 0);
    assertThat(acquire(limit, "k", 3, T0 + 2 * SECOND + SECOND / 2).remaining()).isZero();
    // 1.5 tokens later the backlog is 3 (the first mark has drained to 0); a claim raises the mark to 4,
    // and of an exact take of 1 above it and a give-back of 2, only that 1 comes back
    assertThat(claim(tokens(1), limit, "k", 1, 1, 0, 0, T0 + 4 * SECOND).granted()).isEqualTo(1);
    assertThat(acquire(limit, "k", 1, T0 + 4 * SECOND).remaining()).isZero();
    ExactStoreContract.giveBack(exact(0), limit, "k", 2, T0 + 4 * SECOND, 0);
    assertThat(acquire(limit, "k", 2, T0 + 4 * SECOND).allowed()).as("the second mark holds").isFalse();
    assertThat(acquire(limit, "k", 1, T0 + 4 * SECOND).remaining()).isZero();
    // a claim's own give-back lowers the mark with the backlog: an exact take after it comes back whole
    assertThat(claim(limit, "own", 3, 3, 0, 0, T0).granted()).isEqualTo(3);
    assertThat(claim(limit, "own", 0, 0, 3, 0, T0).backlogBefore()).isZero();
    assertThat(acquire(limit, "own", 2, T0).allowed()).isTrue();
    ExactStoreContract.giveBack(exact(1), limit, "own", 2, T0, 0);
    assertThat(acquire(limit, "own", 5, T0).allowed()).as("a full bucket again").isTrue();
    // a bucket no claim wrote gives back down to full
    assertThat(acquire(limit, "e", 5, T0).allowed()).isTrue();
    ExactStoreContract.giveBack(exact(2), limit, "e", 5, T0, 0);
    assertThat(acquire(limit, "e", 5, T0).allowed()).isTrue();
  }

  /** Claims and exact acquires of one limit and key take from one bucket, both ways round. */
  @Test
  void claimsAndExactAcquiresShareOneBucket() {
    for (Algorithm a : BUCKETS) {
      Limit limit = bucket(a, "shared-" + a.name().toLowerCase(), 5, 1, SECOND);
      assertThat(claim(tokens(0), limit, "k", 4, 4, 0, 0, T0).granted()).isEqualTo(4);
      assertThat(acquire(limit, "k", 2, T0).allowed()).as(a.toString()).isFalse();
      assertThat(acquire(limit, "k", 1, T0).remaining()).as(a.toString()).isZero();
      assertThat(claim(tokens(2), limit, "k", 1, 1, 0, 0, T0).granted()).isZero();

      assertThat(ExactStoreContract.acquire(exact(3), limit, "k2", 3, T0).remaining()).isEqualTo(2);
      assertThat(claim(tokens(1), limit, "k2", 5, 1, 0, 0, T0)).as(a.toString())
          .isEqualTo(new TokenGrant(2, 3 * SECOND, 0, 0));
      // a second later the bucket has refilled one token, for either kind of caller
      assertThat(acquire(limit, "k2", 1, T0 + SECOND).remaining()).isZero();
    }
  }

  /** A caller behind the newest time the store has seen counts at that time, as in gcra.lua. */
  @Test
  void aCallerBehindTheBaseCountsAtTheBase() {
    Limit limit = bucket(Algorithm.TOKEN_BUCKET, "behind", 10, 1, SECOND);
    Counter c = Counter.of(limit);
    assertThat(acquire(limit, "k", 10, T0).remaining()).isZero();
    assertThat(claim(limit, "k", 2, 2, 0, 0, T0 + 2 * SECOND)).isEqualTo(new TokenGrant(2, 8 * SECOND, 0, 0));
    // 1.5 s behind: not refilled backwards, nor drained again
    assertThat(claim(limit, "k", 1, 1, 0, 0, T0 + SECOND / 2)).isEqualTo(new TokenGrant(0, 10 * SECOND, 0, SECOND));
    TokenGrant g = claim(limit, "k", 1, 1, 0, SECOND, T0 + SECOND / 2);
    assertThat(g).isEqualTo(new TokenGrant(1, 10 * SECOND, 0, 0));
    // due one second after the base, which the caller's own clock reads as a second after its now
    assertThat(g.dueMicros(c, T0 + SECOND / 2, 1)).isEqualTo(T0 + SECOND / 2 + SECOND);
  }

  @Test
  void badClaimsAreRejectedWithTheField() {
    Limit bucket = bucket(Algorithm.TOKEN_BUCKET, "bad", 5, 1, SECOND);
    TokenStore s = tokens(0);
    long now = T0;
    assertThatThrownBy(() -> s.claimTokens(null, "k", 1, 1, 0, 0, now)).hasMessageStartingWith("limit:");
    for (Limit other : List.of(Limit.leakyBucketShaper("bad").capacity(5).refill(1, Duration.ofSeconds(1)).build(),
        Limit.fixedWindow("bad").limit(5).window(Duration.ofSeconds(1)).build())) {
      assertThatThrownBy(() -> s.claimTokens(other, "k", 1, 1, 0, 0, now)).hasMessageStartingWith("limit:");
    }
    assertThatThrownBy(() -> s.claimTokens(bucket, "", 1, 1, 0, 0, now)).hasMessageStartingWith("key:");
    assertThatThrownBy(() -> s.claimTokens(bucket, null, 1, 1, 0, 0, now)).hasMessageStartingWith("key:");
    assertThatThrownBy(() -> s.claimTokens(bucket, "k", 0, 0, 0, 0, now)).hasMessageStartingWith("want:");
    assertThatThrownBy(() -> s.claimTokens(bucket, "k", 6, 1, 0, 0, now)).hasMessageStartingWith("want:");
    assertThatThrownBy(() -> s.claimTokens(bucket, "k", 9, 1, 0, 3 * SECOND, now)).hasMessageStartingWith("want:");
    assertThatThrownBy(() -> s.claimTokens(bucket, "k", 2, 3, 0, 0, now)).hasMessageStartingWith("need:");
    assertThatThrownBy(() -> s.claimTokens(bucket, "k", 2, -1, 0, 0, now)).hasMessageStartingWith("need:");
    assertThatThrownBy(() -> s.claimTokens(bucket, "k", 1, 1, -1, 0, now)).hasMessageStartingWith("giveBack:");
    assertThatThrownBy(() -> s.claimTokens(bucket, "k", 1, 1, 1L << 40, 0, now)).hasMessageStartingWith("giveBack:");
    assertThatThrownBy(() -> s.claimTokens(bucket, "k", 1, 1, 0, -1, now)).hasMessageStartingWith("horizonMicros:");
    assertThatThrownBy(() -> s.claimTokens(bucket, "k", 1, 1, 0, TokenStore.MAX_HORIZON_MICROS + 1, now))
        .hasMessageStartingWith("horizonMicros:");
    assertThatThrownBy(() -> s.claimTokens(bucket, "k", 1, 1, 0, 0, -1)).hasMessageStartingWith("nowMicros:");
    assertThatThrownBy(() -> s.claimTokens(bucket, "k", 1, 1, 0, 0, (1L << 52) + 1))
        .hasMessageStartingWith("nowMicros:");
    // a million tokens a microsecond: the burst (4 * 10^15 units) fills most of 2^52, and the horizon
    // in scaled units must fit beside it (at most 503 s here)
    Limit fast = Limit.tokenBucket("bad-fast").capacity(4_000_000_000_000_000L)
        .refill(1_000_000, Duration.ofNanos(1_000)).build();
    assertThatThrownBy(() -> s.claimTokens(fast, "k", 1, 1, 0, 550_000_000, now))
        .hasMessageStartingWith("horizonMicros:");
    assertThat(claim(s, fast, "k", 1, 1, 0, 500_000_000, now).granted()).isEqualTo(1);
    Limit nanoPeriod = Limit.tokenBucket("bad").capacity(5).refill(1, Duration.ofNanos(1_500)).build();
    assertThatThrownBy(() -> s.claimTokens(nanoPeriod, "k", 1, 1, 0, 0, now)).hasMessageStartingWith("refill.period:");
    Limit huge = Limit.tokenBucket("bad").capacity(100_000_000_000_000_000L)
        .refill(1_000_000_000, Duration.ofSeconds(1)).build();
    assertThatThrownBy(() -> s.claimTokens(huge, "k", 1, 1, 0, 0, now)).hasMessageStartingWith("capacity:");
    // a give-back alone may want nothing
    assertThat(claim(s, bucket, "k", 0, 0, 1, 0, now).granted()).isZero();
  }

  // ---- several nodes at once ----

  /** Nodes claiming one key at one frozen instant: the capacity is granted exactly, never more. */
  @Test
  void concurrentClaimsGrantTheCapacityExactly() throws Exception {
    Limit limit = bucket(Algorithm.TOKEN_BUCKET, "hammer-claims", 300, 1, 60 * SECOND);
    ExecutorService pool = Executors.newFixedThreadPool(NODES);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<long[]>> nodes = new ArrayList<>();
      for (int n = 0; n < NODES; n++) {
        TokenStore store = tokens(n);
        SplittableRandom random = new SplittableRandom(n);
        nodes.add(pool.submit(() -> {
          go.await();
          long[] sums = new long[2]; // granted, wanted
          for (int i = 0; i < 60; i++) {
            long want = random.nextLong(1, 6);
            sums[0] += claim(store, limit, "k", want, 1, 0, 0, T0).granted();
            sums[1] += want;
          }
          return sums;
        }));
      }
      go.countDown();
      long granted = 0;
      for (Future<long[]> f : nodes) {
        granted += f.get(60, TimeUnit.SECONDS)[0];
      }
      assertThat(granted).isEqualTo(300);
    } finally {
      pool.shutdownNow();
    }
  }

  // ---- random traces against a reference model ----

  /**
   * The reference: a GCRA on the theoretical arrival time {@code tat} (when the bucket would be full
   * again; backlog = tat - time), times in units of 1 / refill of a microsecond, a token being
   * {@code period} units; the base time moves only when the store would write.
   */
  private static final class Model {
    final long capacity;
    final long refill;
    final long period;
    /** What one of the store's scaled units is here: gcd(refill, period). */
    final long unit;
    boolean exists;
    long base;
    long tat;
    /** The tat the last claim that wrote the bucket left (the claims' mark), or MIN_VALUE: none. */
    long markTat = Long.MIN_VALUE;

    Model(long capacity, long refill, long period) {
      this.capacity = capacity;
      this.refill = refill;
      this.period = period;
      this.unit = gcd(refill, period);
    }

    static long gcd(long a, long b) {
      return b == 0 ? a : gcd(b, a % b);
    }

    /** {granted, backlogBefore (store units), level, retry, due of the first token, due of the last}. */
    long[] claim(long now, long want, long need, long giveBack, long horizon) {
      long at = exists ? Math.max(now, base) : now;
      long t = Math.multiplyExact(at, refill);
      long tatNow = exists ? Math.max(tat, t) : t;
      tatNow = Math.max(t, tatNow - giveBack * period);
      long reach = t + horizon * refill + capacity * period; // the latest tat a grant may leave
      long granted = Math.min(want, Math.max(0, Math.floorDiv(reach - tatNow, period)));
      granted = granted < need ? 0 : granted;
      long after = tatNow + granted * period;
      if (granted > 0 || (giveBack > 0 && exists)) {
        exists = true;
        base = at;
        tat = after;
        // a grant marks what it leaves; a give-back alone lowers a mark above it
        markTat = granted > 0 ? after : Math.min(markTat, after);
      }
      long level = Math.max(0, Math.floorDiv(t + capacity * period - after, period));
      long retry = granted == 0 && want > 0
          ? Math.max(1, -Math.floorDiv(reach - tatNow - Math.max(need, 1) * period, refill)) : 0;
      assertThat((tatNow - t) % unit).isZero();
      return new long[] {granted, (tatNow - t) / unit, level, retry, due(now, t, tatNow + period),
          due(now, t, tatNow + granted * period)};
    }

    /** The caller's time at which the token that brings tat to {@code tatWith} conforms (rounded up). */
    private long due(long now, long t, long tatWith) {
      long over = tatWith - capacity * period - t;
      return now + (over <= 0 ? 0 : -Math.floorDiv(-over, refill));
    }

    /**
     * An exact give-back (a release): the tat less {@code cost} permits, never below now (a full
     * bucket) nor below the claims' mark; nothing without a bucket.
     */
    void giveBack(long now, long cost) {
      if (!exists) {
        return;
      }
      long at = Math.max(now, base);
      long t = Math.multiplyExact(at, refill);
      long tatNow = Math.max(tat, t);
      tat = Math.max(tatNow - cost * period, Math.min(tatNow, Math.max(t, markTat)));
      base = at;
    }

    /** {allowed, remaining} of an exact acquire. */
    long[] acquire(long now, long cost) {
      long at = exists ? Math.max(now, base) : now;
      long t = Math.multiplyExact(at, refill);
      long tatNow = exists ? Math.max(tat, t) : t;
      boolean allowed = tatNow + cost * period - capacity * period <= t;
      if (allowed) {
        exists = true;
        base = at;
        tat = tatNow + cost * period;
      }
      long left = allowed ? tat : tatNow;
      return new long[] {allowed ? 1 : 0, Math.max(0, Math.floorDiv(t + capacity * period - left, period))};
    }
  }

  @Test
  void tracesOfClaimsGiveBacksAndAcquiresMatchTheModel() {
    long[] tally = new long[4]; // claims, claims granting nothing, exact denials, exact give-backs
    for (int trace = 0; trace < TRACES; trace++) {
      long seed = BASE_SEED + trace;
      SplittableRandom r = new SplittableRandom(seed);
      long period = r.nextInt(3) == 0
          ? new long[] {SECOND, 60 * SECOND, 7_000L}[r.nextInt(3)]
          : r.nextLong(1, SECOND + 1);
      long capacity = r.nextInt(10) == 0 ? r.nextLong(41, 1_001) : r.nextLong(1, 41);
      long refill = r.nextLong(1, 26);
      Limit limit = bucket(BUCKETS.get(r.nextInt(2)), "trace-" + trace, capacity, refill, period);
      Counter c = Counter.of(limit);
      Model model = new Model(capacity, refill, period);
      long now = T0 + r.nextLong(0, 3_600_000_000L);
      int steps = r.nextInt(1, MAX_STEPS + 1);
      for (int i = 0; i < steps; i++) {
        int kind = r.nextInt(10);
        // the time: the same instant, a little later, a part of the period, or behind the base
        long gap = new long[] {0, 0, r.nextLong(50_000), period / r.nextInt(1, 5), r.nextLong(3 * period)}
            [r.nextInt(5)];
        long at = kind == 9 && model.exists ? model.base - r.nextLong(0, 2 * period) : now + gap;
        now = Math.max(now, at);
        String where = "seed " + seed + " " + limit + " step " + i + " at " + at;
        if (kind == 2 && r.nextInt(3) == 0) { // an exact give-back (its effect shows in the steps after it)
          long cost = r.nextLong(1, capacity + 1);
          ExactStoreContract.giveBack(exact(i % NODES), limit, "k", cost, at, 0);
          model.giveBack(at, cost);
          tally[3]++;
          continue;
        }
        if (kind < 3) { // an exact acquire
          long cost = r.nextInt(4) == 0 ? r.nextLong(1, capacity + 1) : 1;
          ExactResult actual = ExactStoreContract.acquire(exact(i % NODES), limit, "k", cost, at);
          long[] expected = model.acquire(at, cost);
          assertThat(new long[] {actual.allowed() ? 1 : 0, actual.remaining()}).as(where + " acquire " + cost + ": "
              + actual).containsExactly(expected);
          tally[2] += actual.allowed() ? 0 : 1;
          continue;
        }
        long horizon = new long[] {0, 0, r.nextLong(period + 1), r.nextLong(5 * period + 1)}[r.nextInt(4)];
        horizon = Math.min(horizon, TokenStore.MAX_HORIZON_MICROS);
        long most = capacity + horizon * c.scale() / c.interval();
        long giveBack = kind >= 7 ? r.nextLong(1, capacity + 2) : 0;
        long want = kind == 8 ? 0 : r.nextLong(1, most + 1);
        long need = want == 0 ? 0 : new long[] {0, 1, want, r.nextLong(want + 1)}[r.nextInt(4)];
        TokenGrant g = claim(tokens(i % NODES), limit, "k", want, need, giveBack, horizon, at);
        long[] expected = model.claim(at, want, need, giveBack, horizon);
        String what = where + " claim want " + want + " need " + need + " giveBack " + giveBack + " horizon " + horizon
            + ": " + g;
        assertThat(new long[] {g.granted(), g.backlogBefore(), g.level(), g.retryAfterMicros()}).as(what)
            .containsExactly(expected[0], expected[1], expected[2], expected[3]);
        if (g.granted() > 0) {
          assertThat(g.dueMicros(c, at, 1)).as(what).isEqualTo(expected[4]);
          assertThat(g.dueMicros(c, at, g.granted())).as(what).isEqualTo(expected[5]);
          assertThat(g.dueMicros(c, at, g.granted())).as(what + ": within the horizon").isLessThanOrEqualTo(
              at + horizon);
        }
        tally[0] += want > 0 ? 1 : 0;
        tally[1] += want > 0 && g.granted() == 0 ? 1 : 0;
      }
    }
    System.out.println(getClass().getSimpleName() + ": " + tally[0] + " claims, " + tally[1] + " granting nothing, "
        + tally[2] + " exact denials, " + tally[3] + " exact give-backs");
    // both answers must occur often, or matching the model would prove little
    assertThat(tally[1]).isBetween(tally[0] / 20, tally[0] * 19 / 20);
    assertThat(tally[2]).isPositive();
    assertThat(tally[3]).isPositive();
  }
}
