package io.sluice.sync;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.StoreKeys;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real redis-server for a test class, with a plain client to look at what the store wrote:
 * {@code @RegisterExtension static final RedisFixture redis = new RedisFixture();}. The server starts
 * before the class's {@code @BeforeAll} methods and stops after its {@code @AfterAll} ones.
 */
public final class RedisFixture implements BeforeAllCallback, AfterAllCallback {
  private RedisServer server;
  private RedisClient client;
  private StatefulRedisConnection<String, String> connection;

  @Override
  public void beforeAll(ExtensionContext context) {
    server = RedisServer.start();
    client = RedisClient.create(server.uri());
    connection = client.connect();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (connection != null) {
      connection.close();
    }
    if (client != null) {
      client.shutdown();
    }
    if (server != null) {
      server.close();
    }
  }

  public String uri() {
    return server.uri();
  }

  /** Synchronous commands on a connection of its own, for reading back and setting up. */
  public RedisCommands<String, String> cli() {
    return connection.sync();
  }

  /**
   * The counter key of a limit's key under the default prefix ({@link StoreKeys#counterKey}), as text
   * for a String client: right for well-formed text keys, which is what the tests look up this way.
   */
  public static String counterKey(String limitName, String key) {
    return new String(StoreKeys.counterKey(RedisStoreConfig.DEFAULT_KEY_PREFIX, limitName, key), StandardCharsets.UTF_8);
  }

  /** A store on a connection of its own, as a node would have. */
  public RedisCounterStore newStore() {
    return RedisCounterStore.connect(RedisStoreConfig.builder(uri()).build());
  }
}
