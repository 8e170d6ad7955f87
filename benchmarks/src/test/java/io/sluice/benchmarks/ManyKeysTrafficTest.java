package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The many-key benchmark's traffic and its scoring against the exact algorithm. */
class ManyKeysTrafficTest {
  private static final long WINDOW = 1_000_000_000L;

  @Test
  void theSameSeedGivesTheSameRequestsSpreadOverEveryNode() {
    ManyKeysTraffic.Profile p = new ManyKeysTraffic.Profile("t", 50, 5, 0.5, 15);
    ManyKeysTraffic a = ManyKeysTraffic.of(p, 4, WINDOW, 3, 9);
    ManyKeysTraffic b = ManyKeysTraffic.of(p, 4, WINDOW, 3, 9);
    assertThat(a.requests).isEqualTo(b.requests).isNotEmpty();
    int total = 0;
    for (int n = 0; n < 4; n++) {
      assertThat(a.requestsOf(n)).isNotEmpty();
      total += a.requestsOf(n).length;
    }
    assertThat(total).isEqualTo(a.requests.size());
    assertThat(a.requests).allSatisfy(r -> assertThat(r.atNanos()).isBetween(0L, 3 * WINDOW - 1));
    // requests are in time order
    for (int i = 1; i < a.requests.size(); i++) {
      assertThat(a.requests.get(i).atNanos()).isGreaterThanOrEqualTo(a.requests.get(i - 1).atNanos());
    }
  }

  @Test
  void admittingEverythingIsOverByWhatPassesTheLimitAndDenyingEverythingDeniesWhatTheExactAlgorithmAdmits() {
    // one key, limit 2: four requests in window 0, one in window 1
    ManyKeysTraffic t = traffic(2, List.of(req(10, 0), req(20, 0), req(30, 0), req(40, 0), req(WINDOW + 5, 0)));
    int[] windows = {0, 0, 0, 0, 1};
    ManyKeysTraffic.Score all = t.score(new boolean[] {true, true, true, true, true}, windows);
    assertThat(all.exactAdmitted()).isEqualTo(3);
    assertThat(all.admitted()).isEqualTo(5);
    assertThat(all.worstOverPermits()).isEqualTo(2);
    assertThat(all.keyWindowsOver()).isEqualTo(1);
    assertThat(all.falseDenials()).isZero();
    ManyKeysTraffic.Score none = t.score(new boolean[5], windows);
    assertThat(none.falseDenials()).isEqualTo(3);
    // window 1 has one request, within half the limit: its denial is one no limiter should make
    assertThat(none.falseDenialsBelowHalf()).isEqualTo(1);
    assertThat(none.admittedVsExactPercent()).isZero();
    // the exact algorithm's own decisions score clean
    ManyKeysTraffic.Score exact = t.score(new boolean[] {true, true, false, false, true}, windows);
    assertThat(exact.falseDenials()).isZero();
    assertThat(exact.worstOverPermits()).isZero();
    assertThat(exact.admittedVsExactPercent()).isEqualTo(100);
  }

  @Test
  void aBucketIsScoredAgainstTheExactBucketAtTheMomentsTheNodesDecided() {
    // one key, a bucket of 2 refilled at 2 per window (a token every half window): three requests at
    // once (the third has no token), one a quarter window later (none yet), one half a window later
    long half = WINDOW / 2;
    List<ManyKeysTraffic.Request> rs = List.of(req(10, 0), req(10, 0), req(10, 0), req(10 + half / 2, 0),
        req(10 + half, 0));
    ManyKeysTraffic t = traffic(2, rs);
    int[] windows = {0, 0, 0, 0, 0};
    long[] at = {10, 10, 10, 10 + half / 2, 10 + half};
    ManyKeysTraffic.Score exact = t.scoreBucket(new boolean[] {true, true, false, false, true}, windows, at);
    assertThat(exact.exactAdmitted()).isEqualTo(3);
    assertThat(exact.falseDenials()).isZero();
    assertThat(exact.worstOverPermits()).isZero();
    // admitting everything: the third and fourth spend tokens the bucket never had (2 deep at the fourth),
    // and the fifth keeps the debt at 2 (one refill paid for one of them)
    ManyKeysTraffic.Score all = t.scoreBucket(new boolean[] {true, true, true, true, true}, windows, at);
    assertThat(all.worstOverPermits()).isEqualTo(2);
    assertThat(all.keyWindowsOver()).isEqualTo(1);
    // denying the first two (the exact bucket admitted both): false denials, none below half (five
    // requests in the window, limit 2)
    ManyKeysTraffic.Score lazy = t.scoreBucket(new boolean[] {false, false, true, false, true}, windows, at);
    assertThat(lazy.falseDenials()).isEqualTo(2);
    assertThat(lazy.falseDenialsBelowHalf()).isZero();
    assertThat(lazy.worstOverPermits()).isZero();
    // decided late: what counts is when the node decided, not when the request was scheduled
    ManyKeysTraffic.Score late = t.scoreBucket(new boolean[] {true, true, true, false, false}, windows,
        new long[] {10, 10, 10 + half, 10 + half, 10 + half});
    assertThat(late.worstOverPermits()).isZero();
    assertThat(late.exactAdmitted()).isEqualTo(3);
  }

  @Test
  void aRequestCountsInTheWindowItWasDecidedIn() {
    // scheduled just before a window's edge, decided just after it: window 1 for both the node and the reference
    ManyKeysTraffic t = traffic(1, List.of(req(10, 0), req(WINDOW - 1, 0)));
    ManyKeysTraffic.Score s = t.score(new boolean[] {true, true}, new int[] {0, 1});
    assertThat(s.worstOverPermits()).isZero();
    assertThat(s.exactAdmitted()).isEqualTo(2);
  }

  private static ManyKeysTraffic traffic(long limit, List<ManyKeysTraffic.Request> requests) {
    return ManyKeysTraffic.of(new ManyKeysTraffic.Profile("t", 1, limit, 1, 1), 1, WINDOW, 2, 1).with(requests);
  }

  private static ManyKeysTraffic.Request req(long at, int key) {
    return new ManyKeysTraffic.Request(at, key, 0);
  }
}
