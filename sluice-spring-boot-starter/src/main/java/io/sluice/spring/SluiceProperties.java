package io.sluice.spring;

import io.sluice.node.Durations;
import io.sluice.node.Mode;
import io.sluice.sync.StoreFailurePolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.io.Resource;

/**
 * Sluice's settings under {@code sluice.*}: the limits and rules (the shape of a rules file, see
 * {@link io.sluice.node.RulesFile}; or {@code sluice.rules-file} pointing at one), the store, the
 * batching and failure policy ({@link io.sluice.sync.SyncConfig}) and the servlet filter. Checked when
 * the context starts: a bad value fails it with a message naming the property
 * ({@code sluice.limits.api.limit: must be positive, got 0}).
 */
@ConfigurationProperties(prefix = "sluice")
public class SluiceProperties {

  /** Whether Sluice is configured at all: false leaves out the store, the limiters and the filter. */
  private boolean enabled = true;

  /**
   * A rules file (limits and rules in the sidecar's format, e.g. classpath:sluice-rules.conf or
   * file:/etc/sluice/rules.conf), instead of sluice.limits and sluice.rules.
   */
  private Resource rulesFile;

  /** The limits, by name: each a COUNT per WINDOW with its algorithm, as a rules file's limit lines. */
  private Map<String, LimitProperties> limits = new LinkedHashMap<>();

  /** Which limits a request meets, each keyed by one of its identities, as a rules file's rule lines. */
  private RulesProperties rules = new RulesProperties();

  /** Where the counts are shared: Redis when sluice.store.redis-uri is set, else an embedded Hazelcast member. */
  private Store store = new Store();

  /** Batching and failure policy of the distributed limiters (io.sluice.sync.SyncConfig). */
  private Sync sync = new Sync();

  /** The servlet filter (io.sluice.http.RateLimitFilter) on servlet web applications. */
  private Filter filter = new Filter();

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public Resource getRulesFile() {
    return rulesFile;
  }

  public void setRulesFile(Resource rulesFile) {
    this.rulesFile = rulesFile;
  }

  public Map<String, LimitProperties> getLimits() {
    return limits;
  }

  public void setLimits(Map<String, LimitProperties> limits) {
    this.limits = limits;
  }

  public RulesProperties getRules() {
    return rules;
  }

  public void setRules(RulesProperties rules) {
    this.rules = rules;
  }

  public Store getStore() {
    return store;
  }

  public void setStore(Store store) {
    this.store = store;
  }

  public Sync getSync() {
    return sync;
  }

  public void setSync(Sync sync) {
    this.sync = sync;
  }

  public Filter getFilter() {
    return filter;
  }

  public void setFilter(Filter filter) {
    this.filter = filter;
  }

  /** The algorithms of a rules file's limit lines. */
  public enum Algorithm {
    /** The previous window weighted by its overlap (the default); batched. */
    SLIDING_WINDOW_COUNTER("sliding-window-counter"),
    /** LIMIT per window aligned to the epoch; batched. */
    FIXED_WINDOW("fixed-window"),
    /** At most LIMIT in any window (one timestamp per permit); exact, one store call per decision. */
    SLIDING_WINDOW_LOG("sliding-window-log"),
    /** LIMIT per WINDOW is the refill, BURST the capacity; exact, one store call per decision. */
    TOKEN_BUCKET("token-bucket"),
    /** A meter: LIMIT per WINDOW is the leak rate, BURST the room; exact, one store call per decision. */
    LEAKY_BUCKET("leaky-bucket");

    private final String spec;

    Algorithm(String spec) {
      this.spec = spec;
    }

    /** The word a rules file uses. */
    public String spec() {
      return spec;
    }

    boolean bucket() {
      return this == TOKEN_BUCKET || this == LEAKY_BUCKET;
    }
  }

  /**
   * {@code text} read as every duration of Sluice's is ({@code io.sluice.node.Durations}: 250ms, 10s, 1m,
   * 1h, 1d or ISO-8601), so that a duration means the same in application.yml, a rules file and a
   * command's option; what it cannot read is an error that starts with {@code field}.
   */
  static Duration duration(String field, String text) {
    try {
      return Durations.parse(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(field + ": " + e.getMessage(), e);
    }
  }

  /** What connecting to Redis does when the server may evict Sluice's keys (RedisStoreConfig.EvictionCheck). */
  public enum EvictionCheck {
    /** Refuse to connect, naming the policy (the default). */
    REFUSE,
    /** Connect, and log a warning naming the policy. */
    WARN,
    /** Do not look. */
    OFF
  }

  /** One limit: {@code NAME = LIMIT/WINDOW, ALGORITHM, MODE, burst=BURST} in a rules file. */
  public static class LimitProperties {
    /** Permits per window (for a bucket: tokens refilled per window). */
    private Long limit;
    /** The window (for a bucket: the refill period), e.g. 1m, 15m, 500ms (a duration as Sluice reads it everywhere: 250ms, 10s, 1m, 1h, 1d or ISO-8601 like PT90S). */
    private String window;
    /** The algorithm; sliding-window-counter by default. */
    private Algorithm algorithm = Algorithm.SLIDING_WINDOW_COUNTER;
    /** hard (deny), soft (allow, count and notify) or shadow (decide and record, never deny). */
    private Mode mode = Mode.HARD;
    /** A bucket's capacity (token-bucket, leaky-bucket only); the limit when not set. */
    private Long burst;

    public Long getLimit() {
      return limit;
    }

    public void setLimit(Long limit) {
      this.limit = limit;
    }

    public String getWindow() {
      return window;
    }

    public void setWindow(String window) {
      this.window = window;
    }

    public Algorithm getAlgorithm() {
      return algorithm;
    }

    public void setAlgorithm(Algorithm algorithm) {
      this.algorithm = algorithm;
    }

    public Mode getMode() {
      return mode;
    }

    public void setMode(Mode mode) {
      this.mode = mode;
    }

    public Long getBurst() {
      return burst;
    }

    public void setBurst(Long burst) {
      this.burst = burst;
    }
  }

  /** The rules: each entry is a list of {@code LIMIT by IDENTITY} (or one string of them, comma separated). */
  public static class RulesProperties {
    /** Rules every request meets, e.g. "per-ip by ip, new-rule by api-key". */
    private List<String> always = new ArrayList<>();
    /** Rules by plan: the plan's name, then its rules, e.g. free: "free by api-key". */
    private Map<String, List<String>> plans = new LinkedHashMap<>();
    /** The plan of requests that name none or an unknown one (one of sluice.rules.plans). */
    private String defaultPlan;
    /** Rules of requests whose method and path match. */
    private List<Endpoint> endpoints = new ArrayList<>();

    public List<String> getAlways() {
      return always;
    }

    public void setAlways(List<String> always) {
      this.always = always;
    }

    public Map<String, List<String>> getPlans() {
      return plans;
    }

    public void setPlans(Map<String, List<String>> plans) {
      this.plans = plans;
    }

    public String getDefaultPlan() {
      return defaultPlan;
    }

    public void setDefaultPlan(String defaultPlan) {
      this.defaultPlan = defaultPlan;
    }

    public List<Endpoint> getEndpoints() {
      return endpoints;
    }

    public void setEndpoints(List<Endpoint> endpoints) {
      this.endpoints = endpoints;
    }
  }

  /** {@code endpoint METHOD PATH LIMIT by IDENTITY, ...} in a rules file. */
  public static class Endpoint {
    /** The HTTP method, or * for any. */
    private String method = "*";
    /** The path within the application, e.g. /login or /api/** (patterns as in io.sluice.node.Rules). */
    private String path;
    /** The endpoint's rules, e.g. "login by ip". */
    private List<String> rules = new ArrayList<>();

    public String getMethod() {
      return method;
    }

    public void setMethod(String method) {
      this.method = method;
    }

    public String getPath() {
      return path;
    }

    public void setPath(String path) {
      this.path = path;
    }

    public List<String> getRules() {
      return rules;
    }

    public void setRules(List<String> rules) {
      this.rules = rules;
    }
  }

  /** The store the nodes share. */
  public static class Store {
    /**
     * Redis (redis://host:port, rediss:// for TLS, redis://user:password@host, or
     * redis-sentinel://host:port#master); not set: an embedded Hazelcast member on loopback.
     */
    private String redisUri;
    /** Prefix of the store's keys (Redis) or maps (Hazelcast), shared with other nodes of the same limits. */
    private String keyPrefix = "sluice";
    /** Longest a Redis command may take before it counts as failed (a duration as Sluice reads it everywhere: 250ms, 10s, 1m, 1h, 1d or ISO-8601 like PT90S). */
    private String redisCommandTimeout = "500ms";
    /** What connecting does when the Redis server may evict Sluice's keys: refuse, warn or off. */
    private EvictionCheck redisEvictionCheck = EvictionCheck.REFUSE;
    /**
     * The URI names a node of a Redis Cluster: the store discovers the others, follows slot moves and
     * sends each flush as one script call per hash slot.
     */
    private boolean redisCluster;
    /**
     * Refuse to start when Redis cannot be reached. By default the application starts anyway, the limits
     * decide by the failure policy (sluice.sync.on-store-failure), and the store connects once Redis is up.
     */
    private boolean redisFailFast;
    /**
     * The embedded Hazelcast member's cluster name (members of other clusters ignore it); default
     * "sluice-" followed by spring.application.name, or "sluice" when that is not set, so that two
     * applications on one machine do not share their counters.
     */
    private String hazelcastClusterName;
    /** The embedded Hazelcast member's first port on 127.0.0.1 (it takes the next free one of 20). */
    private int hazelcastPort = 5701;

    public String getRedisUri() {
      return redisUri;
    }

    public void setRedisUri(String redisUri) {
      this.redisUri = redisUri;
    }

    public String getKeyPrefix() {
      return keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
      this.keyPrefix = keyPrefix;
    }

    public String getRedisCommandTimeout() {
      return redisCommandTimeout;
    }

    public void setRedisCommandTimeout(String redisCommandTimeout) {
      this.redisCommandTimeout = redisCommandTimeout;
    }

    public EvictionCheck getRedisEvictionCheck() {
      return redisEvictionCheck;
    }

    public void setRedisEvictionCheck(EvictionCheck redisEvictionCheck) {
      this.redisEvictionCheck = redisEvictionCheck;
    }

    public boolean isRedisCluster() {
      return redisCluster;
    }

    public void setRedisCluster(boolean redisCluster) {
      this.redisCluster = redisCluster;
    }

    public boolean isRedisFailFast() {
      return redisFailFast;
    }

    public void setRedisFailFast(boolean redisFailFast) {
      this.redisFailFast = redisFailFast;
    }

    public String getHazelcastClusterName() {
      return hazelcastClusterName;
    }

    public void setHazelcastClusterName(String hazelcastClusterName) {
      this.hazelcastClusterName = hazelcastClusterName;
    }

    public int getHazelcastPort() {
      return hazelcastPort;
    }

    public void setHazelcastPort(int hazelcastPort) {
      this.hazelcastPort = hazelcastPort;
    }
  }

  /** io.sluice.sync.SyncConfig: left unset, each takes the library's default. */
  public static class Sync {
    /** Unique per process (the store's node registry counts nodes by it); default: SLUICE_NODE_ID, POD_NAME or HOSTNAME from the environment, else random. */
    private String nodeId;
    /** Permits a key gathers before a flush (default 100); 1 is exact mode, one store call per decision. */
    private Long batchSize;
    /** Tokens a node claims ahead at once for token and leaky buckets (default 1: exact mode, one store call per decision). */
    private Long bucketBatchSize;
    /** How often unflushed permits are sent even below the batch size (default 100ms); at most half a window (a duration as Sluice reads it everywhere: 250ms, 10s, 1m, 1h, 1d or ISO-8601 like PT90S). */
    private String syncInterval;
    /** What decides while the store fails: local-share (the default), fail-open or fail-closed. */
    private StoreFailurePolicy onStoreFailure;
    /** Most keys each limit holds at once (default 1,000,000). */
    private Integer maxKeys;
    /** The fewest instances that share the limits (default 1), e.g. the deployment's minReplicas: each sizes its parts (local-share's, its claims' even parts) for at least that many, also when it starts while the store is out of reach. */
    private Integer minNodes;
    /** Longest a decision waits for a claim from the store (default 200ms) (a duration as Sluice reads it everywhere: 250ms, 10s, 1m, 1h, 1d or ISO-8601 like PT90S). */
    private String claimTimeout;
    /** Longest a flush (and exact decision) waits for the store (default 2s); closing flushes for about as long (a duration as Sluice reads it everywhere: 250ms, 10s, 1m, 1h, 1d or ISO-8601 like PT90S). */
    private String flushTimeout;
    /**
     * Fixed and sliding windows: a node admits a key's first permit in each window without asking the store (default
     * true); false while nodes of a version without it still run.
     */
    private Boolean coldKeyAllowance;

    /**
     * Set this process's clock to the store's (Redis TIME, a Hazelcast member's clock), so that the instances agree
     * which window a request falls in (default true); false keeps the machine's own.
     */
    private Boolean alignClock;

    public Boolean getAlignClock() {
      return alignClock;
    }

    public void setAlignClock(Boolean alignClock) {
      this.alignClock = alignClock;
    }

    public Boolean getColdKeyAllowance() {
      return coldKeyAllowance;
    }

    public void setColdKeyAllowance(Boolean coldKeyAllowance) {
      this.coldKeyAllowance = coldKeyAllowance;
    }

    public String getNodeId() {
      return nodeId;
    }

    public void setNodeId(String nodeId) {
      this.nodeId = nodeId;
    }

    public Long getBatchSize() {
      return batchSize;
    }

    public void setBatchSize(Long batchSize) {
      this.batchSize = batchSize;
    }

    public Long getBucketBatchSize() {
      return bucketBatchSize;
    }

    public void setBucketBatchSize(Long bucketBatchSize) {
      this.bucketBatchSize = bucketBatchSize;
    }

    public String getSyncInterval() {
      return syncInterval;
    }

    public void setSyncInterval(String syncInterval) {
      this.syncInterval = syncInterval;
    }

    public StoreFailurePolicy getOnStoreFailure() {
      return onStoreFailure;
    }

    public void setOnStoreFailure(StoreFailurePolicy onStoreFailure) {
      this.onStoreFailure = onStoreFailure;
    }

    public Integer getMaxKeys() {
      return maxKeys;
    }

    public void setMaxKeys(Integer maxKeys) {
      this.maxKeys = maxKeys;
    }

    public Integer getMinNodes() {
      return minNodes;
    }

    public void setMinNodes(Integer minNodes) {
      this.minNodes = minNodes;
    }

    public String getClaimTimeout() {
      return claimTimeout;
    }

    public void setClaimTimeout(String claimTimeout) {
      this.claimTimeout = claimTimeout;
    }

    public String getFlushTimeout() {
      return flushTimeout;
    }

    public void setFlushTimeout(String flushTimeout) {
      this.flushTimeout = flushTimeout;
    }
  }

  /** The servlet filter's registration and how it reads a request. */
  public static class Filter {
    /** Whether the filter is registered on servlet web applications. */
    private boolean enabled = true;
    /** The filter's order; by default just after Spring Security's filter chain (-100), so identity "user" is known. */
    private int order = -99;
    /** The URL patterns the filter runs on. */
    private List<String> urlPatterns = new ArrayList<>(List.of("/*"));
    /** The header carrying the API key (identity "api-key"). */
    private String apiKeyHeader = "X-API-Key";
    /** The proxies in front of the service (CIDR or addresses) whose X-Forwarded-For hops are believed. */
    private List<String> trustedProxies = new ArrayList<>();
    /** IPv6 clients are keyed by their network of this prefix length (identity "ip"). */
    private int ipv6PrefixLength = 64;
    /** Longest API key or user name taken as a key; longer ones are answered 400. */
    private int maxKeyLength = 256;
    /**
     * The header naming the request's plan for sluice.rules.plans (one an authenticating gateway sets:
     * clients must not choose their own plan); not set: the default plan, or a PlanResolver bean.
     */
    private String planHeader;
    /** More identities for the rules, each read from a request header, e.g. tenant: X-Tenant-Id. */
    private Map<String, String> identityHeaders = new LinkedHashMap<>();

    public String getPlanHeader() {
      return planHeader;
    }

    public void setPlanHeader(String planHeader) {
      this.planHeader = planHeader;
    }

    public Map<String, String> getIdentityHeaders() {
      return identityHeaders;
    }

    public void setIdentityHeaders(Map<String, String> identityHeaders) {
      this.identityHeaders = identityHeaders;
    }

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public int getOrder() {
      return order;
    }

    public void setOrder(int order) {
      this.order = order;
    }

    public List<String> getUrlPatterns() {
      return urlPatterns;
    }

    public void setUrlPatterns(List<String> urlPatterns) {
      this.urlPatterns = urlPatterns;
    }

    public String getApiKeyHeader() {
      return apiKeyHeader;
    }

    public void setApiKeyHeader(String apiKeyHeader) {
      this.apiKeyHeader = apiKeyHeader;
    }

    public List<String> getTrustedProxies() {
      return trustedProxies;
    }

    public void setTrustedProxies(List<String> trustedProxies) {
      this.trustedProxies = trustedProxies;
    }

    public int getIpv6PrefixLength() {
      return ipv6PrefixLength;
    }

    public void setIpv6PrefixLength(int ipv6PrefixLength) {
      this.ipv6PrefixLength = ipv6PrefixLength;
    }

    public int getMaxKeyLength() {
      return maxKeyLength;
    }

    public void setMaxKeyLength(int maxKeyLength) {
      this.maxKeyLength = maxKeyLength;
    }
  }
}
