package io.sluice.sidecar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Limit;
import io.sluice.sync.StoreFailurePolicy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ServeArgsTest {
  @Test
  void optionsMapOntoTheConfig() {
    ServeConfig c = ServeArgs.parse(new String[] {"--limit", "api=100/1m", "--limit=login=5/15m,fixed-window",
        "--port", "0", "--host=::1", "--redis", "redis://127.0.0.1:7000", "--batch-size", "1",
        "--sync-interval", "50ms", "--on-store-failure", "fail-open", "--max-body", "1024", "--node-id", "side-1",
        "--key-prefix", "app", "--max-key-length", "64", "--max-threads", "32", "--redis-timeout", "2s",
        "--body-timeout", "3s", "--redis-eviction-check", "warn",
        "--max-keys", "5000"});
    assertThat(c.limits()).extracting(Limit::name).containsExactly("api", "login");
    assertThat(c.port()).isZero();
    assertThat(c.host()).isEqualTo("::1");
    assertThat(c.redisUri()).isEqualTo("redis://127.0.0.1:7000");
    assertThat(c.batchSize()).isEqualTo(1);
    assertThat(c.syncInterval()).isEqualTo(Duration.ofMillis(50));
    assertThat(c.onStoreFailure()).isEqualTo(StoreFailurePolicy.FAIL_OPEN);
    assertThat(c.maxBodyBytes()).isEqualTo(1024);
    assertThat(c.nodeId()).isEqualTo("side-1");
    assertThat(c.keyPrefix()).isEqualTo("app");
    assertThat(c.maxKeyLength()).isEqualTo(64);
    assertThat(c.maxThreads()).isEqualTo(32);
    assertThat(c.redisTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.bodyTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.maxKeys()).isEqualTo(5000);
    assertThat(c.redisEvictionCheck()).isEqualTo(io.sluice.sync.RedisStoreConfig.EvictionCheck.WARN);
    assertThat(ServeArgs.parse(new String[] {"--limit", "api=1/1m"}).bodyTimeout()).isEqualTo(Duration.ofSeconds(10));
    // exact checking on the embedded Hazelcast store too
    assertThat(ServeArgs.parse(new String[] {"--limit", "api=1/1m", "--batch-size", "1"}).batchSize()).isEqualTo(1);
  }

  @Test
  void badOptionsAreNamed() {
    // every message names the option the user typed, never a Java field
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {})).hasMessageStartingWith("--limit: at least one");
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {"--limit", "api=1/1m", "--port", "http"}))
        .hasMessageStartingWith("--port: must be an integer");
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {"--limit", "api=1/1m", "--port", "70000"}))
        .hasMessageStartingWith("--port: must be 0 to 65535, got 70000");
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {"--limit", "api=1/1m", "--bogus", "1"}))
        .hasMessage("unknown option --bogus");
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {"--limit", "api=1/1m", "--bogus"}))
        .as("an unknown option last: not 'needs a value'").hasMessage("unknown option --bogus");
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {"--limit", "api=1/1m", "8080"}))
        .hasMessage("unexpected argument 8080 (options start with --)");
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {"--limit"})).hasMessageStartingWith("--limit: needs a value");
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {"--limit", "api=1/1m", "--batch-size", "0"}))
        .hasMessageStartingWith("--batch-size: must be at least 1");
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {"--limit", "api=1/1m", "--limit", "api=2/1m"}))
        .hasMessage("--limit: \"api\" is defined twice");
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {"--limit", "api=1/1m", "--redis", "http://x"}))
        .hasMessageStartingWith("--redis: must be a redis://");
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {"--limit", "api=1/1m", "--on-store-failure", "panic"}))
        .hasMessageStartingWith("--on-store-failure:");
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {"--limit", "api=1/1m", "--body-timeout", "0s"}))
        .hasMessageStartingWith("--body-timeout: must be 1 ms to 10 minutes");
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {"--limit", "api=1/1m", "--redis-eviction-check", "maybe"}))
        .hasMessageStartingWith("--redis-eviction-check: refuse, warn or off");
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {"--help"})).isInstanceOf(ServeArgs.HelpRequested.class);
    assertThat(ServeArgs.usage()).contains("--redis URI").contains("--limit SPEC");
  }

  @Test
  void aLimitsFileBringsRulesAndBuckets(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    java.nio.file.Path file = dir.resolve("rules.conf");
    java.nio.file.Files.writeString(file, "per-ip=1000/1m\nfree=1/1s,token-bucket,burst=60\nalways per-ip by ip\n"
        + "plan free default free by api-key\n");
    ServeConfig c = ServeArgs.parse(new String[] {"--limits-file", file.toString()});
    assertThat(c.limits()).extracting(Limit::name).containsExactly("per-ip", "free");
    assertThat(c.rules()).isPresent();
    assertThat(ServeArgs.parse(new String[] {"--limit", "api=1/1m"}).rules()).isEmpty();
    java.nio.file.Files.writeString(file, "api=1/1m\nplan p apx by ip\n");
    assertThatThrownBy(() -> ServeArgs.parse(new String[] {"--limits-file", file.toString()}))
        .hasMessageStartingWith("--limits-file: " + file + ":2: rule: unknown limit \"apx\"");
    org.assertj.core.api.Assertions.assertThatCode(() -> ServeArgs.parse(new String[] {"--limit", "q=5/1s,leaky-bucket", "--limit",
        "s=1/1s,token-bucket", "--limit", "w=1/1m"})).doesNotThrowAnyException();
  }

  @Test
  void redisClusterIsAFlagThatMayBeSpeltOut() {
    String[] base = {"--limit", "api=1/1m", "--redis", "redis://127.0.0.1:7000"};
    assertThat(ServeArgs.parse(concat(base, "--redis-cluster")).redisCluster()).isTrue();
    assertThat(ServeArgs.parse(concat(base, "--redis-cluster=true")).redisCluster()).isTrue();
    assertThat(ServeArgs.parse(concat(base, "--redis-cluster=false")).redisCluster()).isFalse();
    assertThatThrownBy(() -> ServeArgs.parse(concat(base, "--redis-cluster=yes")))
        .hasMessageStartingWith("--redis-cluster: a flag, true or false");
  }

  private static String[] concat(String[] a, String b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + 1);
    out[a.length] = b;
    return out;
  }
}
