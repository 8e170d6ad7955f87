package io.sluice.cli;

import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncConfig;
import java.time.Duration;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * The options that say where the limits' counts live and how a node batches them, the same for every
 * command that runs limiters on a store ({@code serve}, {@code envoy}): picocli mixes them into each,
 * so their names, defaults and help read the same everywhere.
 */
final class StoreOptions {
  /** The store's and batching's settings fields as the options that set them (messages start with the field). */
  static final Map<String, String> OPTIONS = Map.of("redis", "--redis", "redisTimeout", "--redis-timeout",
      "hazelcastCluster", "--hazelcast-cluster", "keyPrefix", "--key-prefix", "nodeId", "--node-id",
      "batchSize", "--batch-size", "syncInterval", "--sync-interval", "onStoreFailure", "--on-store-failure");

  /** The default embedded cluster and key prefix (the sidecar's and the Envoy service's are the same). */
  static final String DEFAULT_HAZELCAST_CLUSTER = "sluice";
  static final String DEFAULT_KEY_PREFIX = "sluice";

  @Option(names = "--redis", paramLabel = "URI",
      description = "Redis store (redis://host:port, rediss://, redis-sentinel://); without it an embedded"
          + " Hazelcast member.")
  String redis;

  @Option(names = "--redis-timeout", paramLabel = "D", defaultValue = "500ms", converter = DurationConverter.class,
      description = "Redis command and handshake timeout (default: ${DEFAULT-VALUE}).")
  Duration redisTimeout;

  @Option(names = "--hazelcast-cluster", paramLabel = "N", defaultValue = DEFAULT_HAZELCAST_CLUSTER,
      description = "The embedded member's cluster name (default: ${DEFAULT-VALUE}).")
  String hazelcastCluster;

  @Option(names = "--key-prefix", paramLabel = "P", defaultValue = DEFAULT_KEY_PREFIX,
      description = "Prefix of the store's keys, shared with library nodes of the same limits (default: ${DEFAULT-VALUE}).")
  String keyPrefix;

  @Option(names = "--node-id", paramLabel = "ID", description = "This process's id in the store's node registry (default: $SLUICE_NODE_ID, $POD_NAME or $HOSTNAME if set, else random).")
  String nodeId;

  @Option(names = "--batch-size", paramLabel = "N", defaultValue = "" + SyncConfig.DEFAULT_BATCH_SIZE,
      description = "Permits per key between flushes of window limits; 1 = exact, one store call per decision"
          + " (default: ${DEFAULT-VALUE}).")
  long batchSize;

  @Option(names = "--sync-interval", paramLabel = "D", defaultValue = "100ms", converter = DurationConverter.class,
      description = "Flush interval (default: ${DEFAULT-VALUE}).")
  Duration syncInterval;

  @Option(names = "--on-store-failure", paramLabel = "P", defaultValue = "LOCAL_SHARE", converter = ServeCommand.Policy.class,
      description = "LOCAL_SHARE, FAIL_OPEN or FAIL_CLOSED (default: ${DEFAULT-VALUE}).")
  StoreFailurePolicy onStoreFailure;

  @Option(names = "--cold-key-allowance", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Fixed and sliding windows: a node admits a key's first permit in each window without asking the store"
          + " (the store keeps a permit per node free for it); --no-cold-key-allowance asks, e.g. while nodes of"
          + " a version without it still run (default: ${DEFAULT-VALUE}).")
  boolean coldKeyAllowance;

  @Option(names = "--align-clock", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Set this process's clock to the store's (Redis TIME, a Hazelcast member's clock), so that nodes"
          + " agree which window a request falls in; --no-align-clock keeps the machine's own (default: ${DEFAULT-VALUE}).")
  boolean alignClock;
}
