package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.sync.spi.state.CounterEntry;
import io.sluice.sync.spi.state.PermitLog;
import org.junit.jupiter.api.Test;

/** The Hazelcast store's entry: the scripts' window bookkeeping, and bounded per-node sequences. */
class CounterEntryTest {

  @Test
  void addsToWindowsAndDropsThoseBeforeThePreviousOne() {
    CounterEntry e = CounterEntry.EMPTY.addToWindow(100, 1).addToWindow(101, 2).addToWindow(100, 3);
    assertThat(e.count(100)).isEqualTo(4);
    assertThat(e.count(101)).isEqualTo(2);
    assertThat(e.dropBefore(101)).isSameAs(e);
    e = e.addToWindow(102, 5).dropBefore(102);
    assertThat(e.count(100)).as("dropped").isZero();
    assertThat(e.count(101)).isEqualTo(2);
    assertThat(e.count(102)).isEqualTo(5);
    // a late delta for an old window keeps the newer ones
    e = e.addToWindow(90, 7).dropBefore(90);
    assertThat(e.count(90)).isEqualTo(7);
    assertThat(e.count(101)).isEqualTo(2);
    assertThat(e.count(102)).isEqualTo(5);
    // and is dropped with the next current one
    e = e.addToWindow(103, 0).dropBefore(103);
    assertThat(e.count(90)).isZero();
    assertThat(e.count(101)).isZero();
    assertThat(e.count(102)).isEqualTo(5);
    assertThat(e.count(103)).isZero();
    assertThat(CounterEntry.EMPTY.addToWindow(5, Long.MAX_VALUE).addToWindow(5, 1).count(5)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void remembersEachNodesLastSequenceForAWhileAndForAFewNodes() {
    long day = 86_400_000L;
    CounterEntry e = CounterEntry.EMPTY.withSequence("a", 5, 1_000, day, 3).withSequence("b", 9, 2_000, day, 3);
    assertThat(e.sequenceOf("a")).isEqualTo(5);
    assertThat(e.sequenceOf("b")).isEqualTo(9);
    assertThat(e.sequenceOf("c")).isEqualTo(-1);
    e = e.withSequence("a", 6, 3_000, day, 3);
    assertThat(e.sequenceOf("a")).isEqualTo(6);
    assertThat(e.nodeCount()).isEqualTo(2);
    // c and d arrive: at most 3 nodes, the least recently seen (b) goes
    e = e.withSequence("c", 1, 4_000, day, 3).withSequence("d", 1, 5_000, day, 3);
    assertThat(e.nodeCount()).isEqualTo(3);
    assertThat(e.sequenceOf("b")).isEqualTo(-1);
    assertThat(e.sequenceOf("a")).isEqualTo(6);
    // a node silent for the retention time is forgotten
    e = e.withSequence("d", 2, 3_000 + day, day, 3);
    assertThat(e.sequenceOf("a")).isEqualTo(-1);
    assertThat(e.sequenceOf("c")).isEqualTo(1);
    assertThat(e.sequenceOf("d")).isEqualTo(2);
    // the window counts are untouched by all this
    assertThat(CounterEntry.EMPTY.addToWindow(1, 4).withSequence("a", 1, 0, day, 1).count(1)).isEqualTo(4);
  }

  /** What the exact scripts ask of a window hash: a field of 0 exists, a fixed window drops the one before. */
  @Test
  void aWindowOfZeroExistsAndAFixedWindowKeepsNothingOlder() {
    CounterEntry e = CounterEntry.EMPTY.addToWindow(7, 3).addToWindow(8, 0);
    assertThat(e.hasWindow(8)).as("HINCRBY by 0 writes the field").isTrue();
    assertThat(e.hasWindow(9)).isFalse();
    assertThat(e.count(8)).isZero();
    CounterEntry fixed = e.addToWindow(9, 1).dropOlderThan(9);
    assertThat(fixed.hasWindow(7)).isFalse();
    assertThat(fixed.hasWindow(8)).isFalse();
    assertThat(fixed.count(9)).isEqualTo(1);
    assertThat(e.count(7)).as("the entry it came from is unchanged").isEqualTo(3);
    assertThat(CounterEntry.EMPTY.withLog(PermitLog.EMPTY.append(1, 2)).log().size()).isEqualTo(2);
  }
}
