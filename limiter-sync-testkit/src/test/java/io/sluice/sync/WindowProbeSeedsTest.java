package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Cases {@link WindowProbe} found (2026-12-06, seeds from 900,000 and 910,000), replayed whole. Each
 * failed before its fix:
 * <ul>
 *   <li>910225 (keys at and above their limits): a fixed window of 37 an hour on three nodes, syncs 6
 *       minutes apart, on which the nodes' beats rode. Two nodes whose last registry answer, a minute
 *       old, counted two each spent their allowance at a window's start; a node started 11 s before
 *       the window counted three, so its calls carried no reserve for allowances, and it was granted all
 *       37: 39 admitted. A node now spends its allowance only on a count the registry answered within
 *       two beat intervals ({@code Allowances#countShared});
 *   <li>902654: a sliding window of 100 a second on three nodes, costs up to the limit. A node whose one
 *       request of 54 permits was the whole count of the window before took itself for the key's only
 *       node, and its request of 78, denied, left it a claim of all 55 that was free; another node's
 *       request of 8, which the exact algorithm admits at 39 of 100, was denied. A node now counts itself
 *       alone on a key by its requests in the window before, not its permits ({@code ClaimSizing#keyNodes}).
 * </ul>
 */
class WindowProbeSeedsTest {

  @ParameterizedTest(name = "seed {0}")
  @CsvSource({"910225, true, over-admission", "902654, false, false denial below half (after a large cost denied)"})
  void aFoundCaseNoLongerShowsWhatWasFound(long seed, boolean hot, String found) {
    WindowProbe.Case c = WindowProbe.Case.draw(seed, hot, false);
    WindowProbe.Result r = WindowProbe.run(c);
    assertThat(r.counts()).as("%s: %s", c, r.violations()).doesNotContainKeys("over-admission", found);
    assertThat(r.worstOver()).as("permits over the limit in a key-window, %s", c).isZero();
  }
}
