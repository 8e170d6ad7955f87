package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;
import io.sluice.node.Limit;
import io.sluice.sync.redis.LuaScript;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.TokenStore;
import io.sluice.sync.testkit.TokenStoreContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code token_claim.lua} against a real redis-server: the token claims' contract
 * ({@link TokenStoreContract}: the same vectors and traces as the Java processor), each node on its own
 * connection, then what only the script has (its own argument checks, reloading after Redis forgets it).
 */
class TokenClaimScriptIT extends TokenStoreContract {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();
  private static final List<RedisCounterStore> stores = new ArrayList<>();

  @BeforeAll
  static void connect() {
    for (int n = 0; n < NODES; n++) {
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
  protected TokenStore tokens(int n) {
    return stores.get(n);
  }

  @Override
  protected ExactStore exact(int n) {
    return stores.get(n);
  }

  @Override
  protected long ttlMillis(String limitName, String key) {
    return redis.cli().pttl(RedisFixture.counterKey(limitName, key));
  }

  @Override
  protected boolean exists(String limitName, String key) {
    return redis.cli().exists(RedisFixture.counterKey(limitName, key)) == 1;
  }

  /** The script called with bad arguments answers an error naming itself and the argument, and writes nothing. */
  @Test
  void theScriptRejectsBadArguments() {
    String[] key = {RedisFixture.counterKey("bad-claim", "k")};
    assertThatThrownBy(() -> eval(key, "1", "1", "1"))
        .isInstanceOf(RedisCommandExecutionException.class).hasMessageContaining("token_claim: expected 11 arguments");
    assertThatThrownBy(() -> eval(new String[0], "1", "1", "1", "0", "0", "5", "1", "1000000", "0", "0", "0"))
        .hasMessageContaining("token_claim: expected 1 key");
    // want above capacity + horizon * scale / interval = 5 + 2
    assertThatThrownBy(() -> eval(key, "1", "8", "1", "0", "2000000", "5", "1", "1000000", "0", "0", "0"))
        .hasMessageContaining("token_claim: want must be an integer between 0 and 7");
    assertThatThrownBy(() -> eval(key, "1", "2", "3", "0", "0", "5", "1", "1000000", "0", "0", "0"))
        .hasMessageContaining("token_claim: need must be an integer between 0 and 2");
    assertThatThrownBy(() -> eval(key, "1.5", "1", "1", "0", "0", "5", "1", "1000000", "0", "0", "0"))
        .hasMessageContaining("token_claim: now must be an integer");
    assertThatThrownBy(() -> eval(key, "1", "1", "1", "-1", "0", "5", "1", "1000000", "0", "0", "0"))
        .hasMessageContaining("token_claim: giveBack must be an integer");
    assertThatThrownBy(() -> eval(key, "1", "1", "1", "0", "4000000000", "4500000000", "1000", "1000000", "0", "0", "0"))
        .hasMessageContaining("token_claim: capacity * interval + horizon * scale must be at most 2^52");
    assertThatThrownBy(() -> eval(key, "1", "1", "1", "0", "0", "5", "1", "1000000", "-1", "0", "0"))
        .hasMessageContaining("token_claim: unused must be an integer");
    assertThatThrownBy(() -> eval(key, "1", "1", "1", "0", "0", "5", "1", "1000000", "0", "x", "0"))
        .hasMessageContaining("token_claim: ifAt must be an integer");
    assertThatThrownBy(() -> eval(key, "1", "1", "1", "0", "0", "5", "1", "1000000", "0", "0", "-5"))
        .hasMessageContaining("token_claim: ifBacklog must be an integer");
    assertThat(redis.cli().exists(key)).isZero(); // nothing written
  }

  private static Object eval(String[] keys, String... args) {
    return redis.cli().eval(LuaScript.load("token_claim").body(), ScriptOutputType.MULTI, keys, args);
  }

  @Test
  void theScriptIsReloadedAfterRedisForgetsIt() {
    Limit limit = Limit.tokenBucket("claim-reload").capacity(10).refill(1, Duration.ofSeconds(1)).build();
    assertThat(claim(limit, "k", 3, 3, 0, 0, T0).level()).isEqualTo(7);
    redis.cli().scriptFlush();
    assertThat(claim(limit, "k", 3, 3, 0, 0, T0).level()).isEqualTo(4);
  }
}
