package io.sluice.sidecar;

import io.sluice.node.LimitSpec;
import io.sluice.node.RulesFile;
import io.sluice.sync.RedisStoreConfig;
import io.sluice.sync.StoreFailurePolicy;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The command-line options of {@code sluice serve}, for {@link SluiceServer#main} (the CLI maps the
 * same options onto {@link ServeConfig}). {@code --name value} or {@code --name=value}.
 */
final class ServeArgs {
  private ServeArgs() {
  }

  static String usage() {
    return String.join("\n",
        "usage: sluice serve [options]",
        "  --limit SPEC            a limit, repeatable: " + LimitSpec.syntax(),
        "  --limits-file PATH      limits, one SPEC per line, and rules: always|plan NAME [default]|endpoint"
            + " METHOD PATH, then LIMIT by IDENTITY, ... (# comments; see RulesFile)",
        "  --host ADDR             address to listen on (default " + ServeConfig.DEFAULT_HOST + ")",
        "  --port N                port, 0 for any free one (default " + ServeConfig.DEFAULT_PORT + ")",
        "  --redis URI             Redis store (redis://host:port); without it an embedded Hazelcast member",
        "  --redis-cluster         the Redis URI names a Redis Cluster node",
        "  --redis-timeout D       Redis command and handshake timeout (default 500ms)",
        "  --redis-eviction-check C  refuse (default), warn or off: a Redis that may evict keys (maxmemory-policy)",
        "  --hazelcast-cluster N   the embedded member's cluster name (default " + ServeConfig.DEFAULT_HAZELCAST_CLUSTER + ")",
        "  --key-prefix P          prefix of the store's keys (default " + ServeConfig.DEFAULT_KEY_PREFIX + ")",
        "  --node-id ID            this process's id in the store (default random)",
        "  --batch-size N          permits per key between flushes; 1 = exact (default 100)",
        "  --sync-interval D       flush interval, e.g. 100ms (default 100ms)",
        "  --on-store-failure P    LOCAL_SHARE (default), FAIL_OPEN or FAIL_CLOSED",
        "  --max-body BYTES        largest /check body (default " + ServeConfig.DEFAULT_MAX_BODY_BYTES + ")",
        "  --max-key-length N      longest key (default " + ServeConfig.DEFAULT_MAX_KEY_LENGTH + ")",
        "  --max-threads N         server threads (default " + ServeConfig.DEFAULT_MAX_THREADS + ")",
        "  --body-timeout D        how long a /check body may take to arrive, then 408 (default 10s)",
        "  --max-keys N            keys each limit keeps in memory (default " + ServeConfig.DEFAULT_MAX_KEYS + ")",
        "  --help                  this text");
  }

  /**
   * The options that take a value, each with the {@link ServeConfig.Builder} field its value goes to:
   * the builder's messages name the field, and the user typed the option.
   */
  private static final java.util.Map<String, String> FIELDS = java.util.Map.ofEntries(
      java.util.Map.entry("--limit", "limit"), java.util.Map.entry("--limits-file", "limits"),
      java.util.Map.entry("--host", "host"), java.util.Map.entry("--port", "port"),
      java.util.Map.entry("--redis", "redis"), java.util.Map.entry("--redis-timeout", "redisTimeout"),
      java.util.Map.entry("--redis-eviction-check", "redisEvictionCheck"),
      java.util.Map.entry("--hazelcast-cluster", "hazelcastCluster"), java.util.Map.entry("--key-prefix", "keyPrefix"),
      java.util.Map.entry("--node-id", "nodeId"), java.util.Map.entry("--batch-size", "batchSize"),
      java.util.Map.entry("--sync-interval", "syncInterval"), java.util.Map.entry("--on-store-failure", "onStoreFailure"),
      java.util.Map.entry("--max-body", "maxBodyBytes"), java.util.Map.entry("--max-key-length", "maxKeyLength"),
      java.util.Map.entry("--max-threads", "maxThreads"), java.util.Map.entry("--body-timeout", "bodyTimeout"),
      java.util.Map.entry("--max-keys", "maxKeys"));

  /** A builder's message ("batchSize: ...") with the option the user typed ("--batch-size: ..."). */
  private static IllegalArgumentException named(IllegalArgumentException e) {
    String message = String.valueOf(e.getMessage());
    for (java.util.Map.Entry<String, String> f : FIELDS.entrySet()) {
      if (message.startsWith(f.getValue() + ":")) {
        String option = f.getValue().equals("limits") ? "--limit" : f.getKey(); // (whichever way they came)
        return new IllegalArgumentException(option + message.substring(f.getValue().length()), e);
      }
    }
    if (message.startsWith("limitsFile:")) {
      return new IllegalArgumentException("--limits-file" + message.substring("limitsFile".length()), e);
    }
    if (message.startsWith("redisCluster:")) {
      return new IllegalArgumentException("--redis-cluster" + message.substring("redisCluster".length()), e);
    }
    return e;
  }

  static ServeConfig parse(String[] args) {
    try {
      return parseNamed(args);
    } catch (HelpRequested help) {
      throw help;
    } catch (IllegalArgumentException e) {
      throw named(e);
    }
  }

  private static ServeConfig parseNamed(String[] args) {
    ServeConfig.Builder b = ServeConfig.builder();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      String name = arg;
      String value = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        name = arg.substring(0, eq);
        value = arg.substring(eq + 1);
      }
      switch (name) {
        case "--help":
        case "-h":
          throw new HelpRequested();
        case "--redis-cluster":
          // a flag; --redis-cluster=true or =false spelt out too (=false once turned the cluster on)
          if (value != null && !value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
            throw new IllegalArgumentException(name + ": a flag, true or false when given a value, got " + value);
          }
          b.redisCluster(value == null || value.equalsIgnoreCase("true"));
          continue;
        default:
          break;
      }
      if (!FIELDS.containsKey(name)) {
        throw new IllegalArgumentException(name.startsWith("-") ? "unknown option " + name
            : "unexpected argument " + name + " (options start with --)");
      }
      if (value == null) {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(name + ": needs a value");
        }
        value = args[++i];
      }
      switch (name) {
        case "--limit":
          b.limit(LimitSpec.parse(value));
          break;
        case "--limits-file":
          RulesFile file;
          try {
            file = RulesFile.read(Path.of(value));
          } catch (IllegalArgumentException e) {
            // "FILE:LINE: field: ..." (or limitsFile: for a file it cannot read, named below)
            throw e.getMessage().startsWith("limitsFile:") ? e
                : new IllegalArgumentException("--limits-file: " + e.getMessage(), e);
          }
          b.limitsFile(file);
          break;
        case "--host":
          b.host(value);
          break;
        case "--port":
          b.port(intOf(name, value));
          break;
        case "--redis":
          b.redis(value);
          break;
        case "--redis-timeout":
          b.redisTimeout(LimitSpec.duration(value, name));
          break;
        case "--hazelcast-cluster":
          b.hazelcastCluster(value);
          break;
        case "--key-prefix":
          b.keyPrefix(value);
          break;
        case "--node-id":
          b.nodeId(value);
          break;
        case "--batch-size":
          b.batchSize(intOf(name, value));
          break;
        case "--sync-interval":
          b.syncInterval(LimitSpec.duration(value, name));
          break;
        case "--on-store-failure":
          b.onStoreFailure(choice(StoreFailurePolicy.class, name, value, "LOCAL_SHARE, FAIL_OPEN or FAIL_CLOSED"));
          break;
        case "--max-body":
          b.maxBodyBytes(intOf(name, value));
          break;
        case "--max-key-length":
          b.maxKeyLength(intOf(name, value));
          break;
        case "--max-threads":
          b.maxThreads(intOf(name, value));
          break;
        case "--redis-eviction-check":
          b.redisEvictionCheck(choice(RedisStoreConfig.EvictionCheck.class, name, value, "refuse, warn or off"));
          break;
        case "--max-keys":
          b.maxKeys(intOf(name, value));
          break;
        case "--body-timeout":
          b.bodyTimeout(LimitSpec.duration(value, name));
          break;
        default:
          throw new IllegalArgumentException("unknown option " + name);
      }
    }
    return b.build();
  }

  /** One of an enum's constants, named in any case, '-' for '_'; else an error listing {@code choices}. */
  private static <E extends Enum<E>> E choice(Class<E> type, String name, String value, String choices) {
    try {
      return Enum.valueOf(type, value.toUpperCase(Locale.ROOT).replace('-', '_'));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(name + ": " + choices + ", got " + value, e);
    }
  }

  private static int intOf(String name, String value) {
    try {
      return Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + ": must be an integer, got " + value, e);
    }
  }

  /** {@code --help}: print the usage and stop, successfully. */
  static final class HelpRequested extends RuntimeException {
    private static final long serialVersionUID = 1L;

    HelpRequested() {
      super("help", null, false, false);
    }
  }
}
