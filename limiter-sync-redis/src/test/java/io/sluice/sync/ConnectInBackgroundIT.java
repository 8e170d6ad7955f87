package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.sluice.node.Limit;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.StoreKeys;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A service that starts while its Redis is down: {@link RedisCounterStore#connectInBackground} returns at
 * once, the limiter decides by its failure policy meanwhile, and once Redis is up the store connects on
 * its own and the limiter's counts reach Redis.
 */
class ConnectInBackgroundIT {

  @Test
  void aStoreStartedBeforeItsRedisConnectsOnceRedisIsUp() throws Exception {
    int port = RedisServer.freePort();
    Limit limit = Limit.fixedWindow("late-redis").limit(1_000).window(Duration.ofMinutes(10)).build();
    RedisStoreConfig config = RedisStoreConfig.builder("redis://127.0.0.1:" + port).build();
    String key = new String(StoreKeys.counterKey(config.keyPrefix(), limit, "k"), StandardCharsets.UTF_8);
    try (RedisCounterStore store = RedisCounterStore.connectInBackground(config);
        SyncedLimiter limiter = SyncedLimiter.builder(limit, store).nodeId("early")
            .onStoreFailure(StoreFailurePolicy.LOCAL_SHARE).build()) {
      assertThat(store.connected()).as("no Redis yet").isFalse();
      assertThat(limiter.tryAcquire("k")).as("decided by LOCAL_SHARE while Redis is down").isTrue();
      Thread.sleep(3_000); // (the connecting thread fails a few times first: Lettuce's first connect loads Netty)
      assertThat(store.connected()).isFalse();

      try (RedisServer server = RedisServer.start(port)) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!store.connected() && System.nanoTime() < deadline) {
          Thread.sleep(50);
        }
        assertThat(store.connected()).as("connected within 20 s of Redis starting").isTrue();
        // the breaker opened on the calls that failed: admissions reach Redis once it lets calls through
        long admitted = 1;
        long stored = 0;
        deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        RedisClient client = RedisClient.create(server.uri());
        try (StatefulRedisConnection<String, String> redis = client.connect()) {
          while (System.nanoTime() < deadline) {
            admitted += limiter.tryAcquire("k") ? 1 : 0;
            // (everything, the permits a claim pays for included: a regular sync lets those wait for
            // the claim to run low or the batch to fill, and this loop then ran out its 30 s with the
            // last one or two of them unsent in about one run of three)
            limiter.flushAll();
            stored = count(redis, key, limit);
            if (stored == admitted && limiter.pending() == 0) {
              break;
            }
            Thread.sleep(100);
          }
        } finally {
          client.shutdown();
        }
        assertThat(stored).as("every admitted permit counted in Redis, those of the outage included")
            .isEqualTo(admitted);
      }
    }
  }

  /** The current window's count in the counter hash (field: the window index). */
  private static long count(StatefulRedisConnection<String, String> redis, String key, Limit limit) {
    long window = Math.floorDiv(System.currentTimeMillis() * 1_000_000L, limit.periodNanos());
    String value = redis.sync().hget(key, Long.toString(window));
    return value == null ? 0 : Long.parseLong(value);
  }
}
