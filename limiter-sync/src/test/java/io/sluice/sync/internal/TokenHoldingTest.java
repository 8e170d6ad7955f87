package io.sluice.sync.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A holding's tokens are used only while the store's bucket still covers them. A bucket of 10 tokens
 * refilled 10 a second: a token is 100,000 units, the bucket drains a unit a microsecond.
 */
class TokenHoldingTest {
  private static final TokenHolding.Bucket BUCKET = new TokenHolding.Bucket(10, 100_000, 1);

  /** A grant of 3 tokens at 0 us that left 9.3 tokens in the store, 1 of them used. */
  private static TokenHolding twoTokensHeldOfAGrantThatLeft9Point3() {
    TokenHolding h = new TokenHolding();
    h.grantedAt = 0;
    h.backlogBefore = 630_000;
    h.granted = 3;
    h.used = 1;
    h.backlogAfter = 930_000;
    return h;
  }

  /**
   * The last grant left 9.3 tokens in the store, and the node holds 2 of them unused; a claim gave back
   * 0.3 (what expired of the grant), so the store holds 9.0 below its next grant. The 2 tokens kept are
   * covered by those 9.0 from now on, not by the 9.3: compared in whole tokens (9 and 9) the tie kept the
   * higher, and the tokens stayed usable for 0.3 of a token's time after the store's bucket had refilled
   * past them.
   */
  @Test
  void tokensKeptAfterAGiveBackAreCoveredByWhatTheStoreHoldsBelowTheNextGrant() {
    TokenHolding h = twoTokensHeldOfAGrantThatLeft9Point3();
    h.heldBelow(BUCKET, 900_000, 0, 0);
    assertThat(h.extra).isEqualTo(2);
    assertThat(h.granted).isEqualTo(h.used);
    // 705 ms on, 9.0 tokens have drained to 1.95 (9.3 to 2.25): one of the two is no longer covered
    h.expire(BUCKET, 705_000);
    assertThat(h.extra).as("tokens still covered at 705 ms").isEqualTo(1);
  }

  /** Where the store answered with a backlog above the grant's (another node claimed since), the grant's own coverage stays. */
  @Test
  void aHigherBacklogBelowTheNextGrantLeavesTheTokensCoverageAsItWas() {
    TokenHolding h = twoTokensHeldOfAGrantThatLeft9Point3();
    h.heldBelow(BUCKET, 990_000, 0, 0);
    assertThat(h.extraAfter).isEqualTo(930_000);
    h.expire(BUCKET, 705_000);
    assertThat(h.extra).isEqualTo(2);
  }
}
