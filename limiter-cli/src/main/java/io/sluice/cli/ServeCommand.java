package io.sluice.cli;

import io.sluice.node.Durations;
import io.sluice.node.LimitSpec;
import io.sluice.node.RulesFile;
import io.sluice.sidecar.ServeConfig;
import io.sluice.sidecar.SluiceServer;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.StoreUnavailableException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code sluice serve}: the HTTP check sidecar of limiter-sidecar. The options fill a
 * {@link ServeConfig}; what the config refuses comes back naming the option the user typed.
 */
@Command(name = "serve", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Runs the HTTP check sidecar (POST /check, GET /health, GET /metrics) on limiter-sync, with"
        + " Redis (--redis URI) or the embedded Hazelcast store.")
public final class ServeCommand implements Callable<Integer> {
  @Option(names = "--limit", paramLabel = "SPEC",
      description = "A limit, repeatable: NAME=COUNT/PERIOD[,ALGORITHM][,hard|soft|shadow][,burst=N], e.g."
          + " api=1000/1m, login=5/15m,fixed-window, free=1/1s,token-bucket,burst=60.")
  List<String> limits = new ArrayList<>();

  @Option(names = "--limits-file", paramLabel = "PATH",
      description = "Limits, one SPEC per line, and rules: 'always', 'plan NAME [default]' or 'endpoint METHOD"
          + " PATH', then LIMIT by IDENTITY, ... (# comments).")
  Path limitsFile;

  @Option(names = "--host", paramLabel = "ADDR", defaultValue = ServeConfig.DEFAULT_HOST,
      description = "Address to listen on (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(names = "--port", paramLabel = "N", defaultValue = "" + ServeConfig.DEFAULT_PORT,
      description = "Port, 0 for any free one (default: ${DEFAULT-VALUE}).")
  int port;

  /** Where the counts live and how they are batched: the options shared with {@code envoy}. */
  @Mixin
  StoreOptions store = new StoreOptions();

  @Option(names = "--redis-cluster", arity = "0..1", fallbackValue = "true",
      description = "The Redis URI names a Redis Cluster node (--redis-cluster=false spelt out too).")
  boolean redisCluster;

  @Option(names = "--redis-eviction-check", paramLabel = "C", defaultValue = "refuse", converter = EvictionCheck.class,
      description = "refuse, warn or off: a Redis that may evict keys (maxmemory-policy) (default: ${DEFAULT-VALUE}).")
  RedisStoreConfig.EvictionCheck redisEvictionCheck;

  @Option(names = "--bucket-batch-size", paramLabel = "N", defaultValue = "1",
      description = "Tokens a node claims ahead at once for token and leaky buckets; 1 = exact, one store call"
          + " per decision (default: ${DEFAULT-VALUE}).")
  long bucketBatchSize;

  @Option(names = "--reservation",
      description = "Reservation mode for every limit that batches: nodes admit only what the store leased"
          + " them, never over the limit, for more store calls than the default approximate mode (what"
          + " 'sluice tune --reservation' measures); refused with a sliding log limit.")
  boolean reservation;

  @Option(names = "--max-body", paramLabel = "BYTES", defaultValue = "" + ServeConfig.DEFAULT_MAX_BODY_BYTES,
      description = "Largest /check body (default: ${DEFAULT-VALUE}).")
  int maxBody;

  @Option(names = "--max-key-length", paramLabel = "N", defaultValue = "" + ServeConfig.DEFAULT_MAX_KEY_LENGTH,
      description = "Longest key or identity (default: ${DEFAULT-VALUE}).")
  int maxKeyLength;

  @Option(names = "--max-threads", paramLabel = "N", defaultValue = "" + ServeConfig.DEFAULT_MAX_THREADS,
      description = "Server threads (default: ${DEFAULT-VALUE}).")
  int maxThreads;

  @Option(names = "--body-timeout", paramLabel = "D", defaultValue = "10s", converter = DurationConverter.class,
      description = "How long a /check body may take to arrive, then 408 (default: ${DEFAULT-VALUE}).")
  Duration bodyTimeout;

  @Option(names = "--max-keys", paramLabel = "N", defaultValue = "" + ServeConfig.DEFAULT_MAX_KEYS,
      description = "Keys each limit keeps in memory (default: ${DEFAULT-VALUE}).")
  int maxKeys;

  @Option(names = "--min-nodes", paramLabel = "N", defaultValue = "1",
      description = "The fewest sidecars that share the limits, e.g. the deployment's minReplicas: each sizes its"
          + " parts (on-store-failure local-share, its claims) for at least that many, whatever the node registry"
          + " counts (default: ${DEFAULT-VALUE}).")
  int minNodes;

  @Option(names = "--otlp-endpoint", paramLabel = "URL",
      description = "Also push the metrics over OTLP/HTTP to this OpenTelemetry collector endpoint, e.g."
          + " http://127.0.0.1:4318/v1/metrics (default: none, Prometheus GET /metrics only).")
  String otlpEndpoint;

  // (no picocli default: a step given without an endpoint is refused, not ignored)
  @Option(names = "--otlp-step", paramLabel = "D", converter = DurationConverter.class,
      description = "How often the OTLP push runs (default: 1m).")
  Duration otlpStep;

  @Spec
  CommandSpec spec;

  /** An enum constant named in any case, '-' for '_' ({@code fail-open}), or a message listing them. */
  private static <E extends Enum<E>> E choice(Class<E> type, String value) {
    try {
      return Enum.valueOf(type, value.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException("expected one of " + Arrays.stream(type.getEnumConstants())
          .map(c -> c.name().toLowerCase(Locale.ROOT).replace('_', '-')).collect(Collectors.joining(", "))
          + ", got " + value);
    }
  }

  static final class Policy implements ITypeConverter<StoreFailurePolicy> {
    @Override
    public StoreFailurePolicy convert(String value) {
      return choice(StoreFailurePolicy.class, value);
    }
  }

  static final class EvictionCheck implements ITypeConverter<RedisStoreConfig.EvictionCheck> {
    @Override
    public RedisStoreConfig.EvictionCheck convert(String value) {
      return choice(RedisStoreConfig.EvictionCheck.class, value);
    }
  }

  /** The config's fields as the options that set them: its messages start with the field. */
  private static final Map<String, String> OPTIONS = withStoreOptions(Map.ofEntries(
      Map.entry("limits", "--limit"), Map.entry("limit", "--limit"), Map.entry("limitsFile", "--limits-file"),
      Map.entry("host", "--host"), Map.entry("port", "--port"),
      Map.entry("redisCluster", "--redis-cluster"), Map.entry("redisEvictionCheck", "--redis-eviction-check"),
      Map.entry("maxBodyBytes", "--max-body"), Map.entry("maxKeyLength", "--max-key-length"),
      Map.entry("maxThreads", "--max-threads"), Map.entry("bodyTimeout", "--body-timeout"),
      Map.entry("maxKeys", "--max-keys"), Map.entry("minNodes", "--min-nodes"),
      Map.entry("otlpEndpoint", "--otlp-endpoint"),
      Map.entry("otlpStep", "--otlp-step"), Map.entry("bucketBatchSize", "--bucket-batch-size"),
      Map.entry("reservation", "--reservation")));

  /** A command's own options' fields with the shared store options' ({@link StoreOptions#OPTIONS}). */
  static Map<String, String> withStoreOptions(Map<String, String> own) {
    Map<String, String> all = new java.util.HashMap<>(own);
    all.putAll(StoreOptions.OPTIONS);
    return Map.copyOf(all);
  }

  /** The config the options describe; a message naming the option for what it refuses. */
  ServeConfig config() {
    try {
      ServeConfig.Builder b = ServeConfig.builder().host(host).port(port).redis(store.redis).redisCluster(redisCluster)
          .redisTimeout(store.redisTimeout).redisEvictionCheck(redisEvictionCheck)
          .hazelcastCluster(store.hazelcastCluster).keyPrefix(store.keyPrefix).batchSize(store.batchSize)
          .bucketBatchSize(bucketBatchSize).reservation(reservation).syncInterval(store.syncInterval)
          .onStoreFailure(store.onStoreFailure).coldKeyAllowance(store.coldKeyAllowance)
          .alignClockToStore(store.alignClock).maxBodyBytes(maxBody).maxKeyLength(maxKeyLength).maxThreads(maxThreads).bodyTimeout(bodyTimeout)
          .maxKeys(maxKeys).minNodes(minNodes).otlpEndpoint(otlpEndpoint);
      if (otlpStep != null) {
        b.otlpStep(otlpStep);
      }
      if (store.nodeId != null) {
        b.nodeId(store.nodeId);
      }
      for (String spec : limits) {
        b.limit(LimitSpec.parse(spec));
      }
      if (limitsFile != null) {
        RulesFile file;
        try {
          file = RulesFile.read(limitsFile);
        } catch (IllegalArgumentException e) {
          // "FILE:LINE: field: ..." (a file it cannot read says limitsFile:, named below)
          throw e.getMessage().startsWith("limitsFile:") ? e : new IllegalArgumentException("limitsFile: " + e.getMessage(), e);
        }
        b.limitsFile(file);
      }
      return b.build();
    } catch (IllegalArgumentException e) {
      throw UserError.usage(e.getMessage(), OPTIONS);
    }
  }

  @Override
  public Integer call() throws InterruptedException {
    ServeConfig config = config();
    Shutdown.ownEmbeddedMember();
    SluiceServer server;
    try {
      server = SluiceServer.start(config);
    } catch (IllegalArgumentException e) {
      throw UserError.usage(e.getMessage(), OPTIONS);
    } catch (StoreUnavailableException | IllegalStateException e) {
      throw new UserError(e.getMessage(), 1);
    }
    Runtime.getRuntime().addShutdownHook(new Thread(server::close, "sluice-serve-shutdown"));
    PrintWriter out = spec.commandLine().getOut();
    out.println("sluice serve: listening on " + server.uri() + " (" + (config.redisUri() != null
        ? "redis" : "embedded hazelcast, cluster " + config.hazelcastCluster()) + "; limits "
        + String.join(", ", server.limiters().keySet())
        + config.otlpEndpoint().map(u -> "; metrics pushed to " + u + " every " + Durations.format(config.otlpStep()))
            .orElse("") + ")");
    out.flush();
    server.join();
    return 0;
  }
}
