package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.sluice.node.Limit;
import io.sluice.node.Ticker;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.StoreUnavailableException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ways into Redis that the URI carries, each against a real server: an ACL user with a password
 * (and a wrong password, and a user without script rights, which fail at connect with the reason),
 * TLS with a private CA (and without trusting it), and Sentinel naming the master.
 */
class RedisAccessIT {
  private static final Limit LIMIT = Limit.fixedWindow("access").limit(1_000).window(Duration.ofMinutes(1)).build();
  private static final Duration QUICK = Duration.ofSeconds(15);

  @TempDir
  Path dir;

  /** Flushes 5 permits of key k through the store and returns the count the script answered. */
  private static long flushFive(RedisCounterStore store) throws Exception {
    long now = System.currentTimeMillis() * 1_000;
    long window = Math.floorDiv(now * 1_000, LIMIT.periodNanos());
    Batch batch = new Batch("access-node", 0, 1, now, List.of(new Delta(Counter.of(LIMIT), "k", window, 5)));
    return store.flush(batch).toCompletableFuture().get(10, TimeUnit.SECONDS).current(0);
  }

  @Test
  void anAclUserWithItsPasswordGetsIn() throws Exception {
    try (RedisServer server = RedisServer.start(List.of(), List.of(
        "--user", "default", "off",
        "--user", "sluice", "on", ">s3cret", "~*", "&*", "+@all",
        "--user", "reader", "on", ">r3ad", "~*", "+@read"))) {
      String hostPort = "127.0.0.1:" + server.port();
      try (RedisCounterStore store = RedisCounterStore.connect(RedisStoreConfig.builder("redis://sluice:s3cret@" + hostPort).build())) {
        assertThat(flushFive(store)).isEqualTo(5);
      }
      assertTimeoutPreemptively(QUICK, () -> assertThatThrownBy(() ->
          RedisCounterStore.connect(RedisStoreConfig.builder("redis://sluice:wrong@" + hostPort).build()))
          .isInstanceOf(StoreUnavailableException.class)
          .hasMessageContaining("cannot connect to Redis at " + hostPort)
          .hasMessageNotContaining("wrong"));
      // a user that may not run scripts is refused when the scripts load, with Redis's reason
      assertTimeoutPreemptively(QUICK, () -> assertThatThrownBy(() ->
          RedisCounterStore.connect(RedisStoreConfig.builder("redis://reader:r3ad@" + hostPort).build()))
          .isInstanceOf(StoreUnavailableException.class)
          .hasMessageContaining("NOPERM"));
    }
  }

  /**
   * A user that may run the scripts but not {@code TIME}: the store stops telling time at its first
   * refusal, and the limiter keeps its own clock without a failed call every ten seconds.
   */
  @Test
  void aUserRefusedTimeLeavesTheNodesOnTheirOwnClocks() throws Exception {
    try (RedisServer server = RedisServer.start(List.of(), List.of(
        "--user", "default", "off",
        "--user", "notime", "on", ">n0t1me", "~*", "&*", "+@all", "-time"))) {
      try (RedisCounterStore store = RedisCounterStore.connect(
          RedisStoreConfig.builder("redis://notime:n0t1me@127.0.0.1:" + server.port()).build())) {
        assertThat(flushFive(store)).isEqualTo(5);
        assertThat(store.tellsTime()).isTrue();
        // (a clock of its own: the process's wall clock may have been set already, by other tests' stores)
        try (SyncedLimiter node = SyncedLimiter.builder(LIMIT, store).nodeId("no-time")
            .ticker(() -> Ticker.system().read()).alignClockToStore(true).build()) {
          assertThat(store.tellsTime()).as("after the first refusal").isFalse();
          assertThat(node.clockOffset()).isZero();
          assertThat(node.tryAcquire("k")).isTrue();
        }
      }
    }
  }

  @Test
  void tlsWithAPrivateCertificateAuthority() throws Exception {
    Assumptions.assumeTrue(run(dir, "openssl", "version") == 0, "openssl is needed to make test certificates");
    assertThat(run(dir, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
        "ca.crt", "-days", "2", "-subj", "/CN=sluice-test-ca")).isZero();
    assertThat(run(dir, "openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
        "server.csr", "-subj", "/CN=127.0.0.1")).isZero();
    Files.writeString(dir.resolve("san.ext"), "subjectAltName=IP:127.0.0.1\n");
    assertThat(run(dir, "openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "san.ext")).isZero();
    int tlsPort = RedisServer.freePort();
    try (RedisServer server = RedisServer.start(List.of(), List.of(
        "--tls-port", Integer.toString(tlsPort),
        "--tls-cert-file", dir.resolve("server.crt").toString(),
        "--tls-key-file", dir.resolve("server.key").toString(),
        "--tls-ca-cert-file", dir.resolve("ca.crt").toString(),
        "--tls-auth-clients", "no"))) {
      String uri = "rediss://127.0.0.1:" + tlsPort;
      try (RedisCounterStore store = RedisCounterStore.connect(RedisStoreConfig.builder(uri)
          .trustedCertificates(dir.resolve("ca.crt")).connectTimeout(Duration.ofSeconds(5))
          .commandTimeout(Duration.ofSeconds(5)).build())) {
        assertThat(flushFive(store)).isEqualTo(5);
      }
      // (the TLS handshake counts against the command timeout, which 500 ms can miss on a busy machine)
      // the JVM's own trust store does not know the private CA: refused at connect, not hung
      assertTimeoutPreemptively(QUICK, () -> assertThatThrownBy(() ->
          RedisCounterStore.connect(RedisStoreConfig.builder(uri).build()))
          .isInstanceOf(StoreUnavailableException.class)
          .hasMessageContaining("cannot connect to Redis at 127.0.0.1:" + tlsPort));
    }
    assertThatThrownBy(() -> RedisStoreConfig.builder("rediss://127.0.0.1:1").trustedCertificates(dir.resolve("none.pem")))
        .hasMessageStartingWith("trustedCertificates:");
  }

  @Test
  void sentinelNamesTheMaster() throws Exception {
    try (RedisServer master = RedisServer.start()) {
      Path conf = dir.resolve("sentinel.conf");
      Files.writeString(conf, "sentinel monitor sluice-master 127.0.0.1 " + master.port() + " 1\n");
      try (RedisServer sentinel = RedisServer.start(List.of(conf.toString(), "--sentinel"), List.of())) {
        String uri = "redis-sentinel://127.0.0.1:" + sentinel.port() + "#sluice-master";
        try (RedisCounterStore store = RedisCounterStore.connect(RedisStoreConfig.builder(uri)
            .connectTimeout(Duration.ofSeconds(5)).build())) {
          assertThat(flushFive(store)).isEqualTo(5);
        }
        // the count went to the master the sentinel named
        RedisClient client = RedisClient.create(master.uri());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
          assertThat(c.sync().keys(RedisFixture.counterKey("access", "k"))).hasSize(1);
        } finally {
          client.shutdown();
        }
      }
    }
  }

  private static int run(Path dir, String... command) throws IOException, InterruptedException {
    Process p;
    try {
      p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
          .redirectOutput(dir.resolve("openssl.log").toFile()).start();
    } catch (IOException notInstalled) {
      return -1;
    }
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return -1;
    }
    return p.exitValue();
  }
}
