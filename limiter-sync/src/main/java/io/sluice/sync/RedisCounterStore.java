package io.sluice.sync;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A {@link CounterStore} on Redis (standalone, or Sentinel through the URI) over one Lettuce
 * connection, asynchronous, with the Lua scripts of the {@code lua/} folder called by EVALSHA and
 * sent whole (which loads them again) when Redis answers NOSCRIPT after a restart or a
 * {@code SCRIPT FLUSH}. Keys always go to the scripts as KEYS, never into the script text.
 *
 * <p>Every batch goes in one script call, so the whole batch is one group.
 */
public final class RedisCounterStore implements CounterStore {
  private static final LuaScript FLUSH = LuaScript.load("flush");

  private final RedisStoreConfig config;
  private final RedisClient client;
  private final StatefulRedisConnection<byte[], byte[]> connection;
  private final RedisAsyncCommands<byte[], byte[]> commands;
  private final byte[] sequenceTtlSeconds;

  private RedisCounterStore(RedisStoreConfig config, RedisClient client, StatefulRedisConnection<byte[], byte[]> connection) {
    this.config = config;
    this.client = client;
    this.connection = connection;
    this.commands = connection.async();
    this.sequenceTtlSeconds = ascii(config.sequenceTtl().toSeconds());
  }

  /**
   * Connects and loads the scripts.
   *
   * @throws IllegalArgumentException if the URI cannot be parsed
   * @throws StoreUnavailableException if Redis cannot be reached or answer within the timeouts
   */
  public static RedisCounterStore connect(RedisStoreConfig config) {
    RedisURI uri;
    try {
      uri = RedisURI.create(config.uri());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("uri: cannot parse " + config.uri() + ": " + e.getMessage(), e);
    }
    uri.setTimeout(config.commandTimeout());
    RedisClient client = RedisClient.create(uri);
    client.setOptions(ClientOptions.builder()
        .timeoutOptions(TimeoutOptions.enabled(config.commandTimeout()))
        .requestQueueSize(config.requestQueueSize())
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .socketOptions(SocketOptions.builder()
            .connectTimeout(config.connectTimeout())
            .keepAlive(true)
            .build())
        .build());
    StatefulRedisConnection<byte[], byte[]> connection;
    try {
      connection = client.connect(ByteArrayCodec.INSTANCE);
    } catch (RedisConnectionException e) {
      client.shutdown(0, 0, TimeUnit.MILLISECONDS);
      throw new StoreUnavailableException("cannot connect to Redis at " + redacted(uri) + ": " + rootMessage(e), e);
    }
    RedisCounterStore store = new RedisCounterStore(config, client, connection);
    try {
      store.commands.scriptLoad(FLUSH.body().getBytes(StandardCharsets.UTF_8))
          .get(config.commandTimeout().toMillis() * 4, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      store.close();
      throw new StoreUnavailableException("interrupted while loading scripts into Redis at " + redacted(uri), e);
    } catch (ExecutionException | TimeoutException e) {
      store.close();
      throw new StoreUnavailableException("cannot load scripts into Redis at " + redacted(uri) + ": " + rootMessage(e), e);
    }
    return store;
  }

  @Override
  public int group(Counter counter, String key) {
    return 0;
  }

  @Override
  public int maxBatchSize() {
    return config.maxBatchSize();
  }

  @Override
  public CompletionStage<FlushResult> flush(Batch batch) {
    List<Delta> deltas = batch.deltas();
    if (deltas.size() > config.maxBatchSize()) {
      throw new IllegalArgumentException("batch: " + deltas.size() + " deltas, more than maxBatchSize "
          + config.maxBatchSize());
    }
    byte[][] keys = new byte[deltas.size() + 1][];
    byte[][] args = new byte[3 + 4 * deltas.size()][];
    keys[0] = StoreKeys.sequenceKey(config.keyPrefix(), batch.nodeId(), batch.group());
    args[0] = ascii(batch.sequence());
    args[1] = sequenceTtlSeconds;
    args[2] = ascii(batch.nowMicros());
    for (int i = 0; i < deltas.size(); i++) {
      Delta d = deltas.get(i);
      Counter c = d.counter();
      keys[i + 1] = StoreKeys.counterKey(config.keyPrefix(), c.limit().name(), d.key());
      int a = 3 + 4 * i;
      if (c.kind() == Counter.Kind.WINDOW) {
        args[a] = W;
        args[a + 1] = ascii(d.window());
        args[a + 2] = ascii(c.windowTtlMillis());
      } else {
        args[a] = G;
        args[a + 1] = ascii(c.scale());
        args[a + 2] = ascii(c.interval());
      }
      args[a + 3] = ascii(d.amount());
    }
    return evalsha(FLUSH, keys, args).thenApply(RedisCounterStore::toResult);
  }

  private static final byte[] W = {'w'};
  private static final byte[] G = {'g'};

  private CompletionStage<List<Object>> evalsha(LuaScript script, byte[][] keys, byte[][] args) {
    CompletableFuture<List<Object>> result = new CompletableFuture<>();
    commands.<List<Object>>evalsha(script.sha1(), ScriptOutputType.MULTI, keys, args).whenComplete((value, error) -> {
      if (error == null) {
        result.complete(value);
      } else if (unwrap(error) instanceof RedisNoScriptException) {
        // Redis lost its script cache (restart, SCRIPT FLUSH): EVAL sends the text and caches it again
        commands.<List<Object>>eval(script.body().getBytes(StandardCharsets.UTF_8), ScriptOutputType.MULTI, keys, args)
            .whenComplete((v, e) -> {
              if (e == null) {
                result.complete(v);
              } else {
                result.completeExceptionally(unwrap(e));
              }
            });
      } else {
        result.completeExceptionally(unwrap(error));
      }
    });
    return result;
  }

  private static FlushResult toResult(List<Object> reply) {
    long[] values = new long[reply.size() - 1];
    for (int i = 1; i < reply.size(); i++) {
      values[i - 1] = (Long) reply.get(i);
    }
    return new FlushResult(((Long) reply.get(0)) == 1L, values);
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  static boolean isTimeout(Throwable t) {
    return unwrap(t) instanceof RedisCommandTimeoutException;
  }

  private static byte[] ascii(long v) {
    return Long.toString(v).getBytes(StandardCharsets.US_ASCII);
  }

  private static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
  }

  /** Where we tried to connect, without the password. */
  private static String redacted(RedisURI uri) {
    if (!uri.getSentinels().isEmpty()) {
      return "sentinel master " + uri.getSentinelMasterId();
    }
    return uri.getHost() + ":" + uri.getPort();
  }

  @Override
  public void close() {
    connection.close();
    client.shutdown(0, config.commandTimeout().toMillis(), TimeUnit.MILLISECONDS);
  }
}
