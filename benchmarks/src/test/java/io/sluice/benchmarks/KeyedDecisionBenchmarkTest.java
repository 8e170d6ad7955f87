package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Decision;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Keeps the benchmark code honest: setups succeed and every benchmark method is allowed. */
class KeyedDecisionBenchmarkTest {
  private final KeyedDecisionBenchmark bench = new KeyedDecisionBenchmark();

  @ParameterizedTest
  @ValueSource(ints = {1, 100_000})
  void everyImplementationAllowsAfterSetup(int keyCount) {
    KeyedDecisionBenchmark.Keys keys = new KeyedDecisionBenchmark.Keys();
    keys.keys = keyCount;
    keys.setup();
    assertThat(keys.names).hasSize(keyCount).doesNotHaveDuplicates();

    KeyedDecisionBenchmark.Cursor cursor = new KeyedDecisionBenchmark.Cursor();
    cursor.setup();

    KeyedDecisionBenchmark.SluiceState sluice = new KeyedDecisionBenchmark.SluiceState();
    sluice.setup(keys);
    KeyedDecisionBenchmark.Bucket4jState bucket4j = new KeyedDecisionBenchmark.Bucket4jState();
    bucket4j.setup(keys);
    KeyedDecisionBenchmark.Resilience4jState resilience4j = new KeyedDecisionBenchmark.Resilience4jState();
    resilience4j.setup(keys);
    KeyedDecisionBenchmark.GuavaState guava = new KeyedDecisionBenchmark.GuavaState();
    guava.setup(keys);

    for (int i = 0; i < 1_000; i++) {
      assertThat(bench.sluice(sluice, keys, cursor)).isTrue();
      Decision d = bench.sluiceDecision(sluice, keys, cursor);
      assertThat(d.allowed()).isTrue();
      assertThat(bench.bucket4j(bucket4j, keys, cursor)).isTrue();
      assertThat(bench.resilience4j(resilience4j, keys, cursor)).isTrue();
      assertThat(bench.guava(guava, keys, cursor)).isTrue();
    }
    assertThat(cursor.denied).isZero();
    // the measured keys stay known: nothing inserted, evicted or overflowed during the calls
    assertThat(sluice.limiter.size()).isEqualTo(keyCount);
    assertThat(bucket4j.buckets).hasSize(keyCount);
    assertThat(resilience4j.limiters).hasSize(keyCount);
    assertThat(guava.limiters).hasSize(keyCount);
    sluice.tearDown();
    cursor.tearDown();
  }

  @Test
  void cursorCoversTheKeysUniformlyWithoutLeavingTheArray() {
    KeyedDecisionBenchmark.Keys keys = new KeyedDecisionBenchmark.Keys();
    keys.keys = 1_000;
    keys.setup();
    KeyedDecisionBenchmark.Cursor cursor = new KeyedDecisionBenchmark.Cursor();
    cursor.setup();
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 100_000; i++) {
      seen.add(cursor.next(keys.names));
    }
    assertThat(seen).hasSize(1_000);
    assertThat(KeyedDecisionBenchmark.keyName(123)).isEqualTo("user-000123");
  }

  @Test
  void idleKeyFootprintRunsOnAFewKeys() {
    String report = IdleKeyFootprint.run(20_000);
    assertThat(report).contains("| Sluice RateLimiter", "| Bucket4j", "| Resilience4j", "| Guava");
  }
}
