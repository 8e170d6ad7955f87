package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.sync.spi.state.CounterEntry;
import io.sluice.sync.spi.state.PermitLog;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The Hazelcast store's sliding window log against the plainest model (a sorted list with one time
 * per permit, what Redis keeps in a sorted set), over random appends and trims that cross chunk
 * boundaries; and the property the entry relies on: a change never alters the log it came from.
 */
class PermitLogTest {

  @Test
  void matchesASortedListOfTimesOverRandomAppendsAndTrims() {
    for (long seed = 0; seed < 40; seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      PermitLog log = PermitLog.EMPTY;
      List<Long> model = new ArrayList<>();
      long now = 1_000;
      for (int step = 0; step < 3_000; step++) {
        now += r.nextInt(4) == 0 ? 0 : r.nextLong(1, 20);
        if (r.nextInt(5) == 0) {
          long cutoff = now - r.nextLong(0, 2_000);
          PermitLog before = log;
          long sizeBefore = before.size();
          log = log.trimThrough(cutoff);
          model.removeIf(t -> t <= cutoff);
          assertThat(before.size()).as("the old log is unchanged").isEqualTo(sizeBefore);
        } else {
          long time = model.isEmpty() ? now : Math.max(now, model.get(model.size() - 1));
          long count = r.nextInt(6) == 0 ? r.nextLong(1, 50) : 1;
          log = log.append(time, count);
          for (long i = 0; i < count; i++) {
            model.add(time);
          }
        }
        String where = "seed " + seed + " step " + step;
        assertThat(log.size()).as(where).isEqualTo(model.size());
        if (!model.isEmpty()) {
          assertThat(log.newest()).as(where).isEqualTo(model.get(model.size() - 1));
          int i = r.nextInt(model.size());
          assertThat(log.timeAt(i)).as(where + " index " + i).isEqualTo(model.get(i));
          assertThat(log.timeAt(0)).as(where).isEqualTo(model.get(0));
          assertThat(log.runs()).as(where).isLessThanOrEqualTo(model.size());
        }
      }
    }
  }

  @Test
  void changesLeaveTheOriginalUntouchedAndSurviveSerialization() throws Exception {
    PermitLog log = PermitLog.EMPTY;
    for (long t = 1; t <= 3 * PermitLog.CHUNK_RUNS; t++) {
      log = log.append(t, t % 3 + 1);
    }
    long size = log.size();
    PermitLog merged = log.append(3 * PermitLog.CHUNK_RUNS, 5); // the newest run grows
    PermitLog trimmed = log.trimThrough(PermitLog.CHUNK_RUNS + 10); // inside the second chunk
    assertThat(log.size()).isEqualTo(size);
    assertThat(log.timeAt(0)).isEqualTo(1);
    assertThat(log.timeAt(size - 1)).isEqualTo(3 * PermitLog.CHUNK_RUNS);
    assertThat(merged.size()).isEqualTo(size + 5);
    assertThat(merged.runs()).isEqualTo(log.runs());
    assertThat(trimmed.timeAt(0)).isEqualTo(PermitLog.CHUNK_RUNS + 11);
    assertThat(log.trimThrough(0)).isSameAs(log);
    assertThat(log.trimThrough(Long.MAX_VALUE).size()).isZero();

    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(CounterEntry.EMPTY.withLog(trimmed));
    }
    CounterEntry copy;
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      copy = (CounterEntry) in.readObject();
    }
    assertThat(copy.log().size()).isEqualTo(trimmed.size());
    assertThat(copy.log().timeAt(trimmed.size() - 1)).isEqualTo(trimmed.newest());
  }

  @Test
  void aPermitBeforeTheNewestIsRefused() {
    PermitLog log = PermitLog.EMPTY.append(10, 1);
    assertThatThrownBy(() -> log.append(9, 1)).hasMessageStartingWith("time:");
    assertThatThrownBy(() -> log.append(10, 0)).hasMessageStartingWith("count:");
    assertThatThrownBy(() -> log.timeAt(1)).isInstanceOf(IndexOutOfBoundsException.class);
  }
}
