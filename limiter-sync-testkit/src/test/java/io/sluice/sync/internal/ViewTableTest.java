package io.sluice.sync.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.ManualTicker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The view table's sweeps: the flusher's regular sweep drops views whose windows are over, but not one
 * that holds claims ahead of a window to come (the store counts them against the limit whether or not
 * this node uses them, and only the view knows it holds them: a key asked every few seconds lost them
 * at every sweep and asked the store at its next request); a full table drops it all the same.
 */
class ViewTableTest {
  private static final long WINDOW = Duration.ofSeconds(1).toNanos();
  private static final KeyView.OrphanSink NO_ORPHANS = (key, window, amount) -> { };

  /**
   * A sweep looks at each view of a small table once, and the next sweep starts the next pass: it went
   * round and round a table of a few keys until it had looked at 4,096 views, each under the view's
   * monitor and taking its credit back, ten times a second per limiter.
   */
  @Test
  void aSweepLooksAtEachViewOfASmallTableOnce() {
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    AtomicInteger looks = new AtomicInteger();
    ViewTable table = new ViewTable(1_000, WINDOW, ticker, v -> looks.incrementAndGet(), false);
    for (String key : new String[] {"a", "b", "c"}) {
      table.viewFor(key).roll(Math.floorDiv(ticker.read(), WINDOW), NO_ORPHANS, false); // (in use: kept)
    }
    table.sweepSome();
    assertThat(looks.get()).isEqualTo(3);
    table.sweepSome();
    assertThat(looks.get()).as("the next pass").isEqualTo(6);
  }

  @Test
  void theRegularSweepKeepsAViewHoldingClaimsAheadAndAFullTableDropsIt() {
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    long w = Math.floorDiv(ticker.read(), WINDOW);
    ViewTable table = new ViewTable(2, WINDOW, ticker, v -> { }, false);
    KeyView ahead = table.viewFor("ahead");
    ahead.roll(w, NO_ORPHANS, false);
    ahead.claimedAhead(1, w + 8);
    KeyView plain = table.viewFor("plain");
    plain.roll(w, NO_ORPHANS, false);
    ticker.advance(Duration.ofSeconds(3));
    table.sweepSome();
    assertThat(table.get("plain")).as("its windows are over").isNull();
    assertThat(table.get("ahead")).as("it holds claims through window %d", w + 8).isSameAs(ahead);
    ticker.advance(Duration.ofSeconds(6));
    table.sweepSome();
    assertThat(table.get("ahead")).as("past the last window claimed ahead").isNull();

    ViewTable full = new ViewTable(1, WINDOW, ticker, v -> { }, false);
    KeyView held = full.viewFor("ahead");
    held.roll(Math.floorDiv(ticker.read(), WINDOW), NO_ORPHANS, false);
    held.claimedAhead(1, held.window() + 8);
    ticker.advance(Duration.ofSeconds(3));
    assertThat(full.viewFor("new").key()).as("a full table sweeps it for a new key").isEqualTo("new");
    assertThat(full.get("ahead")).isNull();
  }

  /**
   * A table that remembers keys: a key's view dropped after its window, made again for the key's next
   * request, knows when the key was last asked for (claims ahead are sized from it); a key never seen,
   * or one whose view was dropped before it was ever asked for, knows nothing. A table that does not
   * remember keeps nothing.
   */
  @Test
  void aViewMadeAgainKnowsWhenItsKeyWasLastAskedFor() {
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    ViewTable table = new ViewTable(1_000, WINDOW, ticker, v -> { }, true);
    ViewTable forgetful = new ViewTable(1_000, WINDOW, ticker, v -> { }, false);
    long askedAt = ticker.read() + 250_000_000L;
    for (ViewTable t : new ViewTable[] {table, forgetful}) {
      KeyView asked = t.viewFor("asked");
      asked.roll(Math.floorDiv(ticker.read(), WINDOW), NO_ORPHANS, false);
      asked.demandNoted(1, askedAt);
      KeyView never = t.viewFor("never");
      never.roll(asked.window(), NO_ORPHANS, false);
    }
    ticker.advance(Duration.ofSeconds(3));
    table.sweepSome();
    forgetful.sweepSome();
    assertThat(table.get("asked")).as("dropped").isNull();
    KeyView again = table.viewFor("asked");
    // (remembered to the millisecond)
    assertThat(again.seenBefore()).isBetween(askedAt - 1_000_000L, askedAt);
    assertThat(table.viewFor("never").seenBefore()).isEqualTo(Long.MIN_VALUE);
    assertThat(table.viewFor("unknown").seenBefore()).isEqualTo(Long.MIN_VALUE);
    assertThat(forgetful.viewFor("asked").seenBefore()).isEqualTo(Long.MIN_VALUE);
  }
}
