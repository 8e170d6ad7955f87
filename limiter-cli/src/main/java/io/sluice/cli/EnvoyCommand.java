package io.sluice.cli;

import io.sluice.envoy.RlsServer;
import io.sluice.sync.spi.StoreUnavailableException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code sluice envoy}: Envoy's rate limit service (gRPC, {@code envoy.service.ratelimit.v3}) of
 * limiter-envoy, configured with envoyproxy/ratelimit's YAML files. The options fill an
 * {@link RlsServer.Settings}; what it refuses comes back naming the option the user typed.
 */
@Command(name = "envoy", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Runs Envoy's rate limit service (gRPC RateLimitService/ShouldRateLimit, health, reflection)"
        + " from envoyproxy/ratelimit configuration files, and with --rlqs-config its quota service"
        + " (RateLimitQuotaService/StreamRateLimitQuotas), on Redis (--redis URI) or the embedded Hazelcast store.")
public final class EnvoyCommand implements Callable<Integer> {
  @Option(names = "--config", paramLabel = "PATH",
      description = "A configuration file (YAML: domain, descriptors), or a directory of *.yaml files; repeatable."
          + " Needed unless --rlqs-config is given.")
  List<Path> config = new ArrayList<>();

  @Option(names = "--rlqs-config", paramLabel = "FILE",
      description = "Also serve Envoy's quota service (RLQS, RateLimitQuotaService/StreamRateLimitQuotas) on the"
          + " same port, its buckets and limits from this YAML file (assignment_period, abandon_after, domains);"
          + " read again every --reload-interval.")
  Path rlqsConfig;

  @Option(names = "--rlqs-max-streams", paramLabel = "N", defaultValue = "" + io.sluice.envoy.RlqsService.DEFAULT_MAX_STREAMS,
      description = "RLQS streams (Envoys) open at once; more are refused with RESOURCE_EXHAUSTED (default: ${DEFAULT-VALUE}).")
  int rlqsMaxStreams;

  @Option(names = "--host", paramLabel = "ADDR", defaultValue = RlsServer.Settings.DEFAULT_HOST,
      description = "Address to listen on (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(names = "--grpc-port", paramLabel = "N", defaultValue = "" + RlsServer.Settings.DEFAULT_PORT,
      description = "gRPC port, 0 for any free one (default: ${DEFAULT-VALUE}).")
  int grpcPort;

  /** Where the counts live and how they are batched: the options shared with {@code serve}. */
  @Mixin
  StoreOptions store = new StoreOptions();

  @Option(names = "--claim-timeout", paramLabel = "D", defaultValue = "200ms", converter = DurationConverter.class,
      description = "Longest a decision waits for the store before --on-store-failure decides; keep it under"
          + " Envoy's timeout for the call (default: ${DEFAULT-VALUE}).")
  Duration claimTimeout;

  @Option(names = "--threads", paramLabel = "N", defaultValue = "" + RlsServer.Settings.DEFAULT_THREADS,
      description = "Threads deciding calls (default: ${DEFAULT-VALUE}).")
  int threads;

  @Option(names = "--queue", paramLabel = "N", defaultValue = "" + RlsServer.Settings.DEFAULT_QUEUE,
      description = "Calls that may wait for a thread; more are refused with RESOURCE_EXHAUSTED (default: ${DEFAULT-VALUE}).")
  int queue;

  @Option(names = "--max-limits", paramLabel = "N", defaultValue = "" + RlsServer.Settings.DEFAULT_MAX_LIMITS,
      description = "Distinct limits (rate and unit) the configuration may have, and the most limiters requests'"
          + " own limit overrides may bring the count to; the configured limits are never refused (default: ${DEFAULT-VALUE}).")
  int maxLimits;

  @Option(names = "--reload-interval", paramLabel = "D", defaultValue = "1s", converter = DurationConverter.class,
      description = "How often the configuration files are read for changes, 0 = never; a file with an error is"
          + " refused and the last good configuration stays (default: ${DEFAULT-VALUE}).")
  Duration reloadInterval;

  @Option(names = "--response-headers", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Send the RateLimit fields in response_headers_to_add (default: on; --no-response-headers).")
  boolean responseHeaders;

  @Spec
  CommandSpec spec;

  /** The settings' fields as the options that set them: its messages start with the field. */
  private static final Map<String, String> OPTIONS = ServeCommand.withStoreOptions(Map.ofEntries(
      Map.entry("config", "--config"), Map.entry("host", "--host"), Map.entry("port", "--grpc-port"),
      Map.entry("threads", "--threads"), Map.entry("queue", "--queue"), Map.entry("maxLimits", "--max-limits"),
      Map.entry("reloadInterval", "--reload-interval"), Map.entry("claimTimeout", "--claim-timeout"),
      Map.entry("rlqsConfig", "--rlqs-config"), Map.entry("rlqsMaxStreams", "--rlqs-max-streams")));

  /** The settings the options describe; a message naming the option for what they refuse. */
  RlsServer.Settings settings() {
    try {
      RlsServer.Settings.Builder b = RlsServer.Settings.builder().host(host).port(grpcPort).redis(store.redis)
          .redisTimeout(store.redisTimeout).hazelcastCluster(store.hazelcastCluster).keyPrefix(store.keyPrefix)
          .batchSize(store.batchSize).syncInterval(store.syncInterval).onStoreFailure(store.onStoreFailure)
          .coldKeyAllowance(store.coldKeyAllowance).alignClockToStore(store.alignClock)
          .threads(threads).queue(queue)
          .maxLimits(maxLimits).responseHeaders(responseHeaders).reloadInterval(reloadInterval).claimTimeout(claimTimeout)
          .rlqsMaxStreams(rlqsMaxStreams);
      if (rlqsConfig != null) {
        b.rlqsConfig(rlqsConfig);
      }
      if (store.nodeId != null) {
        b.nodeId(store.nodeId);
      }
      config.forEach(b::config);
      return b.build();
    } catch (IllegalArgumentException e) {
      throw UserError.usage(e.getMessage(), OPTIONS);
    }
  }

  @Override
  public Integer call() throws InterruptedException {
    RlsServer.Settings settings = settings();
    Shutdown.ownEmbeddedMember();
    RlsServer server;
    try {
      server = RlsServer.start(settings);
    } catch (IllegalArgumentException e) {
      throw UserError.usage(e.getMessage(), OPTIONS);
    } catch (StoreUnavailableException | IllegalStateException e) {
      throw new UserError(e.getMessage(), 1);
    }
    Runtime.getRuntime().addShutdownHook(new Thread(server::close, "sluice-envoy-shutdown"));
    PrintWriter out = spec.commandLine().getOut();
    out.println("sluice envoy: gRPC on " + settings.host() + ":" + server.port() + " (" + (settings.redisUri() != null
        ? "redis" : "embedded hazelcast, cluster " + settings.hazelcastCluster()) + "; batch size "
        + settings.batchSize() + "; domains " + (server.service().config().domains().isEmpty() ? "none"
            : String.join(", ", server.service().config().domains()))
        + (server.quotaService() == null ? "" : "; RLQS domains " + String.join(", ",
            server.quotaService().config().domains()) + ", assignment period "
            + server.quotaService().config().period().toMillis() + " ms") + ")");
    out.flush();
    server.awaitTermination();
    return 0;
  }
}
