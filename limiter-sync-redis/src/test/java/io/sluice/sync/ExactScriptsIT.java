package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;
import io.sluice.node.Limit;
import io.sluice.sync.redis.LuaScript;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.testkit.CounterStoreContract;
import io.sluice.sync.testkit.ExactStoreContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The exact-mode scripts (batch size 1) against a real redis-server: the exact store contract
 * ({@link ExactStoreContract}), each node on its own connection, then what only the scripts have
 * (their own argument checks, and reloading after Redis forgets them).
 */
class ExactScriptsIT extends ExactStoreContract {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();
  private static final List<RedisCounterStore> stores = new ArrayList<>();

  @BeforeAll
  static void connect() {
    for (int n = 0; n < NODES; n++) {
      // the 100,000-permit log call runs for a while on a busy machine: wait longer than the default
      stores.add(RedisCounterStore.connect(RedisStoreConfig.builder(redis.uri()).commandTimeout(Duration.ofSeconds(10))
          .build()));
    }
  }

  @AfterAll
  static void disconnect() {
    stores.forEach(RedisCounterStore::close);
    stores.clear();
  }

  @Override
  protected ExactStore node(int n) {
    return stores.get(n);
  }

  private static String key(String limitName, String key) {
    return RedisFixture.counterKey(limitName, key);
  }

  @Override
  protected long ttlMillis(String limitName, String key) {
    return redis.cli().pttl(key(limitName, key));
  }

  @Override
  protected boolean exists(String limitName, String key) {
    return redis.cli().exists(key(limitName, key)) == 1;
  }

  @Override
  protected long logSize(String limitName, String key) {
    return redis.cli().zcard(key(limitName, key));
  }

  /** Scripts called with bad arguments answer an error naming the script and the argument. */
  @Test
  void scriptsRejectBadArguments() {
    String[] key = {key("bad", "k")};
    assertThatThrownBy(() -> eval("gcra", key, "meter", "1", "1"))
        .isInstanceOf(RedisCommandExecutionException.class).hasMessageContaining("gcra: expected 6 arguments");
    assertThatThrownBy(() -> eval("gcra", key, "queue", "1", "1", "5", "1", "1"))
        .hasMessageContaining("gcra: mode must be");
    assertThatThrownBy(() -> eval("gcra", key, "meter", "1", "6", "5", "1", "1"))
        .hasMessageContaining("gcra: cost must be an integer between 1 and 5");
    assertThatThrownBy(() -> eval("gcra", new String[0], "meter", "1", "1", "5", "1", "1"))
        .hasMessageContaining("gcra: expected 1 key");
    assertThatThrownBy(() -> eval("fixed_window", key, "1.5", "1", "5", "1000"))
        .hasMessageContaining("fixed_window: now must be an integer");
    assertThatThrownBy(() -> eval("fixed_window", key, "1", "1", "5"))
        .hasMessageContaining("fixed_window: expected 4 arguments");
    // (past the usual case's lines, which answer before the checks: what they let by is checked there)
    assertThatThrownBy(() -> eval("fixed_window", key, "1", "6", "5", "1000"))
        .hasMessageContaining("fixed_window: cost must be an integer between 1 and 5");
    assertThatThrownBy(() -> eval("fixed_window", key, "inf", "1", "5", "1000"))
        .hasMessageContaining("fixed_window: now must be an integer");
    assertThatThrownBy(() -> eval("fixed_window", key, "1", "1", "5", "0"))
        .hasMessageContaining("fixed_window: window must be an integer");
    assertThatThrownBy(() -> eval("fixed_window", new String[0], "1", "1", "5", "1000"))
        .hasMessageContaining("fixed_window: expected 1 key");
    assertThatThrownBy(() -> eval("sliding_window_counter", key, "1", "1", "5", "1000", "0"))
        .hasMessageContaining("sliding_window_counter: unit must be an integer");
    assertThatThrownBy(() -> eval("sliding_window_counter", key, "1", "1", "2147483647", "4000000000000", "1"))
        .hasMessageContaining("choose a coarser unit");
    assertThatThrownBy(() -> eval("sliding_window_log", key, "1", "1", "100001", "1000"))
        .hasMessageContaining("sliding_window_log: limit must be an integer between 1 and 100000");
    assertThatThrownBy(() -> eval("sliding_window_log", key, "nan", "1", "5", "1000"))
        .hasMessageContaining("sliding_window_log: now must be an integer");
    assertThat(redis.cli().exists(key)).isZero(); // nothing written
  }

  private static Object eval(String script, String[] keys, String... args) {
    return redis.cli().eval(LuaScript.load(script).body(), ScriptOutputType.MULTI, keys, args);
  }

  /**
   * An exact admission on a key that batched flushes write too never shortens the TTL they set for
   * their claims ahead (a node switching modes, or two nodes configured apart): the claims must stay
   * counted through the last window they were granted for.
   */
  @Test
  void exactAdmissionsKeepTheTtlOfBatchedClaimsAhead() {
    Limit limit = Limit.fixedWindow("mixed").limit(1_000).window(Duration.ofSeconds(1)).build();
    long w = EPOCH_2026_MICROS / 1_000_000;
    CounterStoreContract.flush(stores.get(0), new Batch("ttl-n1", 0, 1, EPOCH_2026_MICROS,
        List.of(new Delta(Counter.of(limit), "k", w, 1).claiming(10, 1).claimingAhead(8, 3))));
    assertThat(redis.cli().pttl(key("mixed", "k"))).isGreaterThan(10_000L);
    // the next window's first exact admission, whose own TTL reaches that window's end and a margin
    assertThat(acquire(limit, "k", 1, EPOCH_2026_MICROS + 1_000_000).allowed()).isTrue();
    assertThat(redis.cli().pttl(key("mixed", "k"))).isGreaterThan(10_000L);
  }

  @Test
  void exactScriptsAreReloadedAfterRedisForgetsThem() {
    Limit limit = Limit.slidingWindowCounter("reload").limit(10).window(Duration.ofSeconds(1)).build();
    assertThat(acquire(limit, "k", 1, EPOCH_2026_MICROS).remaining()).isEqualTo(9);
    redis.cli().scriptFlush();
    assertThat(acquire(limit, "k", 1, EPOCH_2026_MICROS).remaining()).isEqualTo(8);
  }
}
