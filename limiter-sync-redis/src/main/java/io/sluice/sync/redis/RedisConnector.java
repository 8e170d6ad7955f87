package io.sluice.sync.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.sluice.sync.spi.StoreUnavailableException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How a {@link RedisCounterStore} connects: the URI and the client (standalone, Sentinel or cluster)
 * with their options and resources, the connection attempts, the scripts loaded into the server's
 * cache and its eviction policy checked ({@link RedisStoreConfig#evictionCheck()}).
 *
 * <p>Concurrency: no state of its own (static methods); each method runs on the thread that connects,
 * the caller of {@link RedisCounterStore#connect(RedisStoreConfig)} or the connecting thread of
 * {@link RedisCounterStore#connectInBackground}.
 */
final class RedisConnector {
  /** The store's logger: what it logs while connecting is configured with the rest of the store's. */
  private static final System.Logger LOG = System.getLogger(RedisCounterStore.class.getName());

  private RedisConnector() {
  }

  static RedisURI parse(RedisStoreConfig config) {
    RedisURI uri;
    try {
      uri = RedisURI.create(config.uri());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("uri: cannot parse " + config.uri() + ": " + e.getMessage(), e);
    }
    // the URI's timeout is Lettuce's handshake timeout (commands have their own): a busy host may take
    // longer to set a connection up than to answer a command
    uri.setTimeout(config.connectTimeout().compareTo(config.commandTimeout()) > 0 ? config.connectTimeout()
        : config.commandTimeout());
    return uri;
  }

  /**
   * The client's resources. Lettuce doubles its reconnect delay up to 30 s: a node would stay on its
   * fallback policy for that long after a partition heals. Retry at most a second apart instead.
   */
  static io.lettuce.core.resource.ClientResources resources() {
    return io.lettuce.core.resource.ClientResources.builder()
        .reconnectDelay(io.lettuce.core.resource.Delay.exponential(Duration.ofMillis(10), Duration.ofSeconds(1), 2,
            TimeUnit.MILLISECONDS))
        .build();
  }

  /** A cluster client when the URI names a Redis Cluster node, otherwise a standalone or Sentinel one. */
  static AbstractRedisClient client(RedisStoreConfig config, RedisURI uri,
      io.lettuce.core.resource.ClientResources resources) {
    return config.cluster() ? RedisClusterClient.create(resources, uri) : RedisClient.create(resources, uri);
  }

  static RedisScriptingAsyncCommands<byte[], byte[]> async(StatefulConnection<byte[], byte[]> connection) {
    return connection instanceof StatefulRedisClusterConnection
        ? ((StatefulRedisClusterConnection<byte[], byte[]>) connection).async()
        : ((StatefulRedisConnection<byte[], byte[]>) connection).async();
  }

  /** Command timeouts, a bounded request queue, commands refused while disconnected, TLS trust. */
  static ClientOptions clientOptions(RedisStoreConfig config) {
    ClientOptions.Builder optionsBuilder = ClientOptions.builder()
        .timeoutOptions(TimeoutOptions.enabled(config.commandTimeout()))
        .requestQueueSize(config.requestQueueSize())
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .socketOptions(SocketOptions.builder().connectTimeout(config.connectTimeout()).keepAlive(true).build());
    if (config.trustedCertificates() != null) {
      optionsBuilder.sslOptions(io.lettuce.core.SslOptions.builder().jdkSslProvider()
          .trustManager(config.trustedCertificates().toFile()).build());
    }
    return optionsBuilder.build();
  }

  /**
   * Connects, retrying for up to the connect timeout: a server that is starting (or a host busy
   * starting several JVMs) refuses or stalls the first attempts; unless the server answered and said
   * no. A failure shuts the client down and throws.
   */
  static StatefulConnection<byte[], byte[]> openRetrying(AbstractRedisClient client,
      io.lettuce.core.resource.ClientResources resources, ClientOptions options, RedisStoreConfig config,
      RedisURI uri) {
    long deadline = System.nanoTime() + config.connectTimeout().toNanos();
    while (true) {
      try {
        return open(client, options);
      } catch (RedisConnectionException e) {
        boolean retry = !answered(e) && System.nanoTime() + CONNECT_RETRY_NANOS <= deadline;
        if (retry) {
          try {
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(CONNECT_RETRY_NANOS));
            continue;
          } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
          }
        }
        client.shutdown(0, 0, TimeUnit.MILLISECONDS);
        resources.shutdown(0, 0, TimeUnit.MILLISECONDS);
        throw new StoreUnavailableException("cannot connect to Redis at " + redacted(uri) + ": " + rootMessage(e), e);
      }
    }
  }

  /** Loads every script into Redis's script cache, so that the first EVALSHA of each finds it. */
  static void loadScripts(List<LuaScript> scripts, RedisStoreConfig config,
      RedisScriptingAsyncCommands<byte[], byte[]> commands, String where) {
    try {
      for (LuaScript script : scripts) {
        commands.scriptLoad(script.body().getBytes(StandardCharsets.UTF_8))
            .get(config.commandTimeout().toMillis() * 4, TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("interrupted while loading scripts into Redis at " + where, e);
    } catch (ExecutionException | TimeoutException e) {
      throw new StoreUnavailableException("cannot load scripts into Redis at " + where + ": " + rootMessage(e), e);
    }
  }

  private static final long CONNECT_RETRY_NANOS = 100_000_000L;

  /** One connection attempt, standalone/Sentinel or cluster. */
  static StatefulConnection<byte[], byte[]> open(AbstractRedisClient client, ClientOptions options) {
    if (client instanceof RedisClusterClient) {
      RedisClusterClient cluster = (RedisClusterClient) client;
      cluster.setOptions(ClusterClientOptions.builder(options)
          // follow slot moves (MOVED/ASK answers, failovers) without waiting for a fixed period
          .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder().enableAllAdaptiveRefreshTriggers().build())
          .build());
      return cluster.connect(ByteArrayCodec.INSTANCE);
    }
    RedisClient single = (RedisClient) client;
    single.setOptions(options);
    return single.connect(ByteArrayCodec.INSTANCE);
  }

  /**
   * Whether a failed connection attempt got an answer from the server (a wrong password, missing
   * rights, a protocol error): retrying would only repeat it.
   */
  static boolean answered(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof io.lettuce.core.RedisCommandExecutionException) {
        return true;
      }
    }
    return false;
  }

  /**
   * Reads the server's {@code maxmemory} and {@code maxmemory-policy} and acts on
   * {@link RedisStoreConfig#evictionCheck()}: a policy other than {@code noeviction} may evict Sluice's
   * keys (all of them have TTLs, so {@code volatile-*} evicts them too) once {@code maxmemory} is
   * reached. Refused when memory is capped; a warning when it is not (yet).
   */
  static void checkEviction(RedisStoreConfig config, StatefulConnection<byte[], byte[]> connection,
      String where) {
    if (config.evictionCheck() == RedisStoreConfig.EvictionCheck.OFF) {
      return;
    }
    java.util.Map<String, String> settings;
    try {
      io.lettuce.core.RedisFuture<java.util.Map<String, String>> answer = connection instanceof StatefulRedisConnection
          ? ((StatefulRedisConnection<byte[], byte[]>) connection).async().configGet("maxmemory", "maxmemory-policy")
          : ((StatefulRedisClusterConnection<byte[], byte[]>) connection).async().configGet("maxmemory", "maxmemory-policy");
      settings = answer.get(config.commandTimeout().toMillis() * 4, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("interrupted while reading the configuration of Redis at " + where, e);
    } catch (ExecutionException | TimeoutException e) {
      LOG.log(System.Logger.Level.WARNING, "sluice: cannot read maxmemory-policy from Redis at {0} ({1}); Sluice needs"
          + " noeviction (an evicted key loses its counts)", where, rootMessage(e));
      return;
    }
    String policy = settings.getOrDefault("maxmemory-policy", "noeviction");
    if (policy.equals("noeviction")) {
      return;
    }
    long maxmemory;
    try {
      maxmemory = Long.parseLong(settings.getOrDefault("maxmemory", "0"));
    } catch (NumberFormatException e) {
      maxmemory = -1;
    }
    String message = "Redis at " + where + " may evict Sluice's keys: maxmemory-policy " + policy + " (maxmemory "
        + (maxmemory == 0 ? "not set yet" : maxmemory + " bytes") + "); every Sluice key has a TTL, so volatile-*"
        + " policies evict them too, and an evicted counter starts its window over, an evicted node sequence lets a"
        + " retried flush count twice. Set maxmemory-policy noeviction (scripts then fail with OOM when memory is"
        + " full, which the nodes count and survive), or RedisStoreConfig.evictionCheck(WARN) to connect anyway";
    if (config.evictionCheck() == RedisStoreConfig.EvictionCheck.REFUSE && maxmemory != 0) {
      // a setting to change, not an outage to wait out: callers that retry connecting must not
      throw new IllegalStateException("evictionCheck: " + message);
    }
    LOG.log(System.Logger.Level.WARNING, "sluice: " + message);
  }

  static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
  }

  /** Where we tried to connect, without the password. */
  static String redacted(RedisURI uri) {
    if (!uri.getSentinels().isEmpty()) {
      return "sentinel master " + uri.getSentinelMasterId();
    }
    return uri.getHost() + ":" + uri.getPort();
  }
}
