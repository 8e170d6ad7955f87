package io.sluice.sync.hazelcast;

import com.hazelcast.config.Config;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.ExtendedMapEntry;
import com.hazelcast.map.IMap;
import io.sluice.node.Durations;
import io.sluice.node.Limit;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.ExactArgs;
import io.sluice.sync.spi.ExactResult;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.LeaseStore;
import io.sluice.sync.spi.StoreKeys;
import io.sluice.sync.spi.TokenGrant;
import io.sluice.sync.spi.TokenStore;
import io.sluice.sync.spi.state.CounterEntry;
import io.sluice.sync.spi.state.EntryUpdate;
import io.sluice.sync.spi.state.ExactProcessor;
import io.sluice.sync.spi.state.ExpiringEntry;
import io.sluice.sync.spi.state.LeaseProcessor;
import io.sluice.sync.spi.state.TokenClaimProcessor;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A {@link CounterStore} on Hazelcast: the embedded default (a real Hazelcast member in this JVM, on
 * loopback, so nothing has to run beside the application) or any member or client handed to
 * {@link #of(HazelcastInstance)}.
 *
 * <h2>Layout</h2>
 * Three maps, named after the key prefix ({@code sluice} by default):
 * <ul>
 *   <li>{@code sluice.counters}: one entry per counter key, keyed by the same bytes as the Redis key
 *       ({@link StoreKeys#counterKey}), holding what {@code flush.lua} keeps in one hash (the counts of
 *       a window and the window before it, or the GCRA backlog {@code b}, {@code t}) plus the last
 *       sequence of each node applied to it; with the script's TTLs (window counters: two windows and
 *       a second from a window's first write; GCRA: until the backlog has drained, plus a second).
 *       The exact and reservation modes keep their state in the same entries (a sliding window log,
 *       one timestamp per permit, too: what Redis keeps in a sorted set under the same key).</li>
 *   <li>{@code sluice.sequences}: per node and group, the last batch the store answered, kept for the
 *       sequence TTL (a day by default), as the Redis store's sequence keys are.</li>
 *   <li>{@code sluice.nodes}: the node registry, one entry (node id to deadline), as {@code heartbeat.lua}
 *       keeps one sorted set.</li>
 * </ul>
 *
 * <h2>Exactly once, per key</h2>
 * Redis runs a whole batch in one script, so a batch is applied atomically: all of it or nothing, once.
 * Hazelcast cannot update keys of different partitions in one atomic step, so here <em>each key</em>
 * is applied atomically and exactly once: a batch runs an entry processor on each of its keys (one
 * {@code submitToKeys} call, which Hazelcast runs partition by partition), and the processor applies
 * a key's deltas only if the batch's sequence is above the last one of that node recorded in that
 * very entry. A batch that failed half-way (some keys applied, some not) and is sent
 * again, unchanged, applies the rest and nothing twice; {@link FlushResult#applied()} is true when any
 * delta was applied by this call. While a batch is in flight other readers may see some of its keys
 * applied and others not yet; every key converges to the exact count. (The {@link CounterStore}
 * contract's "all its deltas or none" holds per key here, not per batch.)
 *
 * <p>A key remembers node sequences only as long as the key itself lives (its TTL), which for a GCRA
 * bucket may be a second. So the store also records, per node and group, the last batch it answered
 * (kept for the sequence TTL, like the Redis store's sequence keys), and a key that does not know the
 * node (new to it, expired, or forgotten) is applied only if that record is below the batch. A flush
 * is one round of processors when every key knows the node, the steady state; keys new to the node
 * cost a read of the record and a second round. The record is written after the answer, without
 * delaying it: it only guards replays that come after a key has expired.
 *
 * <h2>Exact and reservation modes</h2>
 * As an {@link ExactStore} (batch size 1) each decision is one entry processor on its key
 * ({@link ExactProcessor}: {@code gcra.lua}, {@code fixed_window.lua}, {@code sliding_window_counter.lua}
 * and {@code sliding_window_log.lua} step for step), and as a {@link LeaseStore} each grant is one
 * ({@link LeaseProcessor}: {@code lease.lua}), and as a {@link TokenStore} each claim is one
 * ({@link TokenClaimProcessor}: {@code token_claim.lua}). Hazelcast runs the processors of one key one
 * at a time on its owner, which makes each check-and-take atomic; the answers, the validation (shared with the
 * Redis store: {@link ExactArgs}) and the TTLs are the scripts'.
 *
 * <h2>Embedded member</h2>
 * {@link #embedded()} starts a member of cluster {@code sluice}, bound to 127.0.0.1 only (multicast off,
 * TCP-IP join with 127.0.0.1, ports from 5701 upwards), with phone-home off and Hazelcast's own logging
 * at WARNING. Other members started the same way in other JVMs on this machine join it.
 * {@link #close()} shuts down only a member the store started.
 *
 * <p>The entry processors and the entry classes ({@code OnMember} here, the processors nested in
 * {@code FlushRounds} and {@code NodeRegistry}; {@code FlushProcessor}, {@code ExactProcessor},
 * {@code LeaseProcessor}, {@code CounterEntry} and
 * {@code PermitLog} of limiter-sync's {@code io.sluice.sync.spi.state}) are plain {@link
 * java.io.Serializable} classes: every member must have limiter-sync-hazelcast, limiter-sync and
 * limiter-node on its classpath, in the same version as the clients; a client alone is not enough.
 *
 * <p>Concurrency: every limiter sharing the store calls it at once (flushers, deciding threads, beats).
 * Its fields are final and its parts hold no state that calls share but Hazelcast's own maps, which
 * are thread-safe, the key-call and callback threads ({@code KeyCalls}) and the sequence witness
 * ({@code FlushRounds}, thread-safe on its own); each key's state changes only inside an entry
 * processor, which Hazelcast runs one at a time per key on the key's owner.
 */
public final class HazelcastCounterStore implements CounterStore, ExactStore, LeaseStore, TokenStore {
  /** Most nodes whose sequence one counter key remembers; the least recently seen are forgotten first. */
  static final int MAX_NODES_PER_KEY = 1_024;
  /** Holds the level set on Hazelcast's JDK logger: java.util.logging keeps loggers only weakly. */
  private static final Logger HAZELCAST_JUL = Logger.getLogger("com.hazelcast");

  private final HazelcastInstance instance;
  private final boolean owned;
  private final Settings settings;
  /** The call threads (exact, lease and claim calls) and the callback thread. */
  private final KeyCalls calls;
  /** The counts of a flush, and the node's sequence records. */
  private final FlushRounds flushes;
  private final NodeRegistry registry;

  private HazelcastCounterStore(HazelcastInstance instance, boolean owned, Settings settings) {
    this.instance = instance;
    this.owned = owned;
    this.settings = settings;
    IMap<byte[], CounterEntry> counters = instance.getMap(settings.mapPrefix() + ".counters");
    IMap<byte[], Long> sequences = instance.getMap(settings.mapPrefix() + ".sequences");
    IMap<String, HashMap<String, Long>> nodes = instance.getMap(settings.mapPrefix() + ".nodes");
    this.calls = new KeyCalls(counters, settings.mapPrefix());
    this.flushes = new FlushRounds(counters, sequences, settings, calls);
    this.registry = new NodeRegistry(nodes, calls.callbacks);
  }

  /** Starts an embedded member of cluster {@code sluice} on loopback, with the default settings. */
  public static HazelcastCounterStore embedded() {
    return embedded(Settings.defaults());
  }

  /** Starts an embedded member of the given cluster on loopback; members of other clusters ignore it. */
  public static HazelcastCounterStore embedded(String clusterName) {
    return embedded(Settings.builder().clusterName(clusterName).build());
  }

  /** Starts an embedded member on loopback with these settings; {@link #close()} shuts it down. */
  public static HazelcastCounterStore embedded(Settings settings) {
    if (settings == null) {
      throw new IllegalArgumentException("settings: must not be null");
    }
    return embedded(memberConfig(settings), settings);
  }

  /** Starts a member with this configuration (see {@link #memberConfig}); {@link #close()} shuts it down. */
  static HazelcastCounterStore embedded(Config config, Settings settings) {
    return new HazelcastCounterStore(Hazelcast.newHazelcastInstance(config), true, settings);
  }

  /** A store on an existing member or client, with the default settings; {@link #close()} leaves it running. */
  public static HazelcastCounterStore of(HazelcastInstance instance) {
    return of(instance, Settings.defaults());
  }

  /** A store on an existing member or client; {@link #close()} leaves it running. */
  public static HazelcastCounterStore of(HazelcastInstance instance, Settings settings) {
    if (instance == null) {
      throw new IllegalArgumentException("instance: must not be null");
    }
    if (settings == null) {
      throw new IllegalArgumentException("settings: must not be null");
    }
    return new HazelcastCounterStore(instance, false, settings);
  }

  /**
   * The configuration of an embedded member: loopback only, multicast and auto-detection off, TCP-IP
   * join with 127.0.0.1 on the port range, phone-home off, quiet logging, and the counters kept as
   * objects (entry processors then read and write them without deserializing on the owner). Public
   * so that Sluice's other members (the region coordinator's replicas) run the same way.
   */
  public static Config memberConfig(Settings settings) {
    Config config = new Config();
    config.setClusterName(settings.clusterName());
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.setProperty("hazelcast.socket.bind.any", "false");
    // on JVM exit, hand this member's partitions over instead of dropping them
    config.setProperty("hazelcast.shutdownhook.policy", "GRACEFUL");
    if (System.getProperty("hazelcast.logging.type") == null) {
      config.setProperty("hazelcast.logging.type", "jdk");
      synchronized (HAZELCAST_JUL) {
        if (HAZELCAST_JUL.getLevel() == null) {
          HAZELCAST_JUL.setLevel(Level.WARNING);
        }
      }
    }
    NetworkConfig network = config.getNetworkConfig();
    network.setPort(settings.port()).setPortAutoIncrement(true).setPortCount(settings.portCount());
    network.getInterfaces().setEnabled(true).addInterface("127.0.0.1");
    JoinConfig join = network.getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    // a member without a port is looked for on the port range: the first portCount ports (Hazelcast's
    // own default is 3); "127.0.0.1:5701-5720" is not accepted once interfaces are set
    join.getTcpIpConfig().setEnabled(true).addMember("127.0.0.1");
    config.setProperty("hazelcast.tcp.join.port.try.count", Integer.toString(settings.portCount()));
    config.getMapConfig(settings.mapPrefix() + ".counters").setInMemoryFormat(InMemoryFormat.OBJECT);
    return config;
  }

  /** The member or client this store works through. */
  public HazelcastInstance instance() {
    return instance;
  }

  /** Every key may go in any batch: atomicity is per key here, whatever the group. */
  @Override
  public int group(Counter counter, String key) {
    return 0;
  }

  /** flush.lua (and its processor) count takes and settle them. */
  @Override
  public boolean countsTakes() {
    return true;
  }

  /** Claims on window counters, as flush.lua keeps them. */
  @Override
  public boolean keepsClaims() {
    return true;
  }

  /** flush.lua (and its processor) keep the nodes' allowances' reserve. */
  @Override
  public boolean keepsAllowances() {
    return true;
  }

  @Override
  public int maxBatchSize() {
    return settings.maxBatchSize();
  }

  @Override
  public CompletionStage<FlushResult> flush(Batch batch) {
    CompletionStage<FlushResult> counted = flushes.flushCounts(batch);
    if (!batch.beats()) {
      return counted;
    }
    // the beat goes out with the flush and is answered with it: one call from the node's side, not
    // atomic with the counts (it need not be); a beat that fails leaves the flush's answer standing
    CompletionStage<Integer> beat = heartbeat(batch.beatNode(), batch.beatNowMillis(),
        Duration.ofMillis(batch.beatTtlMillis())).exceptionally(e -> 0);
    return counted.thenCombine(beat, (result, alive) -> alive > 0 ? result.withAlive(alive) : result);
  }

  /** A flush may carry the node's heartbeat: both are sent at once and answered together. */
  @Override
  public boolean beatsInFlush(int group) {
    return true;
  }

  /** One entry processor on the key's owner: {@link ExactProcessor}. */
  @Override
  public CompletionStage<ExactResult> acquire(Limit limit, String key, long cost, long nowMicros) {
    ExactArgs.checkAcquire(limit, key, cost, nowMicros);
    ExactProcessor processor = ExactProcessor.of(limit, cost, nowMicros);
    return callKey(limit, key, processor).thenApply(ExactProcessor::result);
  }

  /** One entry processor on the key's owner: {@link ExactProcessor#givingBack}. */
  @Override
  public CompletionStage<Void> giveBack(Limit limit, String key, long cost, long nowMicros, long window) {
    ExactArgs.checkAcquire(limit, key, cost, nowMicros);
    ExactProcessor processor = ExactProcessor.givingBack(limit, cost, nowMicros, window);
    return callKey(limit, key, processor).thenApply(left -> null);
  }

  /** One entry processor on the key's owner: {@link LeaseProcessor}. */
  @Override
  public CompletionStage<Lease> lease(Counter counter, String key, long window, long elapsedMicros, long want,
      long need) {
    long windowMicros = ExactArgs.checkLease(counter, key, want, need);
    Limit limit = counter.limit();
    LeaseProcessor processor = new LeaseProcessor(window, ExactArgs.leaseElapsedMicros(elapsedMicros, windowMicros),
        windowMicros, ExactArgs.leaseUnitMicros(limit, windowMicros), limit.capacity(), want, need,
        counter.windowTtlMillis());
    return callKey(limit, key, processor).thenApply(LeaseProcessor::lease);
  }

  /** One entry processor on the key's owner: {@link TokenClaimProcessor}, on the bucket {@link #acquire} keeps. */
  @Override
  public CompletionStage<TokenGrant> claimTokens(Limit limit, String key, long want, long need, long giveBack,
      long horizonMicros, long nowMicros, long unused, long ifAt, long ifBacklog) {
    Counter c = ExactArgs.checkClaim(limit, key, want, need, giveBack, horizonMicros, nowMicros);
    ExactArgs.checkUnused(unused, ifAt, ifBacklog);
    TokenClaimProcessor processor = TokenClaimProcessor.of(c, want, need, giveBack, horizonMicros, nowMicros, unused,
        ifAt, ifBacklog);
    return callKey(limit, key, processor).thenApply(TokenClaimProcessor::grant);
  }

  /** Runs a processor on one counter key: {@link KeyCalls#onKey}, on a call thread of this store. */
  private CompletableFuture<long[]> callKey(Limit limit, String key, EntryUpdate update) {
    return calls.onKey(StoreKeys.counterKey(settings.mapPrefix(), limit, key), update);
  }

  @Override
  public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
    CounterStore.checkHeartbeat(nodeId, ttl);
    return registry.heartbeat(nodeId, nowMillis, ttl);
  }

  /**
   * The member that owns the registry entry tells every node its clock ({@code NodeRegistry.ReadClock},
   * an entry processor: a client's cluster needs this module on its members, as for every processor).
   */
  @Override
  public boolean tellsTime() {
    return true;
  }

  @Override
  public CompletionStage<Long> timeMicros() {
    return registry.timeMicros();
  }

  /** Out of the registry at once (the coordinator's regions are Redis: no record of the departure here). */
  @Override
  public CompletionStage<Void> leave(String nodeId, long nowMillis) {
    CounterStore.checkHeartbeat(nodeId, LEFT_MEMORY);
    return registry.leave(nodeId);
  }

  /**
   * Shuts the member down if this store started it ({@link #embedded()}); a store on an instance it was
   * given leaves it running. Calls still in flight complete.
   */
  @Override
  public void close() {
    calls.shutdown();
    if (owned && instance.getLifecycleService().isRunning()) {
      instance.shutdown();
    }
  }

  /**
   * A counter key's {@link EntryUpdate} (the scripts' Java form) as an entry processor: runs it on
   * the key's owner, and on each backup, over the member's entry, whose time to live it may set.
   */
  static final class OnMember implements EntryProcessor<byte[], CounterEntry, long[]> {
    private static final long serialVersionUID = 1L;
    private final EntryUpdate update;

    OnMember(EntryUpdate update) {
      this.update = update;
    }

    @Override
    @SuppressWarnings("unchecked")
    public long[] process(Map.Entry<byte[], CounterEntry> entry) {
      return update.process(entry instanceof ExtendedMapEntry
          ? new MemberEntry((ExtendedMapEntry<byte[], CounterEntry>) entry)
          : entry);
    }
  }

  /** A member's map entry as an {@link ExpiringEntry}. */
  private static final class MemberEntry implements ExpiringEntry<CounterEntry> {
    private final ExtendedMapEntry<byte[], CounterEntry> entry;

    MemberEntry(ExtendedMapEntry<byte[], CounterEntry> entry) {
      this.entry = entry;
    }

    @Override
    public byte[] getKey() {
      return entry.getKey();
    }

    @Override
    public CounterEntry getValue() {
      return entry.getValue();
    }

    @Override
    public CounterEntry setValue(CounterEntry value) {
      return entry.setValue(value);
    }

    @Override
    public void setValue(CounterEntry value, long ttlMillis) {
      entry.setValue(value, ttlMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void setValueKeepingExpiry(CounterEntry value) {
      entry.setValueWithoutChangingExpiryTime(value);
    }
  }

  @SuppressWarnings("unchecked")
  static <K, V> void setWithTtl(Map.Entry<K, V> entry, V value, long ttlMillis) {
    if (entry instanceof ExtendedMapEntry) {
      ((ExtendedMapEntry<K, V>) entry).setValue(value, ttlMillis, TimeUnit.MILLISECONDS);
    } else {
      entry.setValue(value);
    }
  }

  /**
   * Settings of a {@link HazelcastCounterStore}. Immutable; every setter of the builder checks its value
   * and names the field in its message.
   */
  public static final class Settings {
    public static final String DEFAULT_CLUSTER_NAME = "sluice";
    public static final int DEFAULT_PORT = 5701;
    public static final int DEFAULT_PORT_COUNT = 20;
    public static final int DEFAULT_MAX_BATCH_SIZE = 500;
    public static final Duration DEFAULT_SEQUENCE_TTL = Duration.ofDays(1);
    public static final String DEFAULT_MAP_PREFIX = "sluice";
    private static final Settings DEFAULTS = builder().build();

    private final String clusterName;
    private final int port;
    private final int portCount;
    private final int maxBatchSize;
    private final Duration sequenceTtl;
    private final String mapPrefix;

    private Settings(Builder b) {
      this.clusterName = b.clusterName;
      this.port = b.port;
      this.portCount = b.portCount;
      this.maxBatchSize = b.maxBatchSize;
      this.sequenceTtl = b.sequenceTtl;
      this.mapPrefix = b.mapPrefix;
    }

    public static Settings defaults() {
      return DEFAULTS;
    }

    public static Builder builder() {
      return new Builder();
    }

    /** Cluster an embedded member belongs to; members with another name never join it. */
    public String clusterName() {
      return clusterName;
    }

    /** First loopback port an embedded member tries (and where it looks for other members). */
    public int port() {
      return port;
    }

    /** How many ports from {@link #port()} an embedded member may bind and probes for other members. */
    public int portCount() {
      return portCount;
    }

    public int maxBatchSize() {
      return maxBatchSize;
    }

    /** How long a node's sequence numbers are remembered (as the Redis store's sequence keys). */
    public Duration sequenceTtl() {
      return sequenceTtl;
    }

    /** Prefix of the map names and of the counter keys. */
    public String mapPrefix() {
      return mapPrefix;
    }

    /** Builds {@link Settings}; each setter checks its value and names the field when it refuses one. */
    public static final class Builder {
      private String clusterName = DEFAULT_CLUSTER_NAME;
      private int port = DEFAULT_PORT;
      private int portCount = DEFAULT_PORT_COUNT;
      private int maxBatchSize = DEFAULT_MAX_BATCH_SIZE;
      private Duration sequenceTtl = DEFAULT_SEQUENCE_TTL;
      private String mapPrefix = DEFAULT_MAP_PREFIX;

      private Builder() {
      }

      public Builder clusterName(String clusterName) {
        if (clusterName == null || clusterName.isBlank()) {
          throw new IllegalArgumentException("clusterName: must not be null or blank");
        }
        this.clusterName = clusterName;
        return this;
      }

      public Builder port(int port) {
        if (port < 1 || port > 65_535) {
          throw new IllegalArgumentException("port: must be between 1 and 65535, got " + port);
        }
        this.port = port;
        return this;
      }

      public Builder portCount(int portCount) {
        if (portCount < 1 || portCount > 1_000) {
          throw new IllegalArgumentException("portCount: must be between 1 and 1000, got " + portCount);
        }
        this.portCount = portCount;
        return this;
      }

      public Builder maxBatchSize(int maxBatchSize) {
        if (maxBatchSize < 1 || maxBatchSize > 10_000) {
          throw new IllegalArgumentException("maxBatchSize: must be between 1 and 10000, got " + maxBatchSize);
        }
        this.maxBatchSize = maxBatchSize;
        return this;
      }

      public Builder sequenceTtl(Duration sequenceTtl) {
        if (sequenceTtl == null || sequenceTtl.toMillis() < 1_000) {
          throw new IllegalArgumentException("sequenceTtl: must be at least 1s, got " + Durations.format(sequenceTtl));
        }
        this.sequenceTtl = sequenceTtl;
        return this;
      }

      public Builder mapPrefix(String mapPrefix) {
        if (mapPrefix == null || mapPrefix.isEmpty()) {
          throw new IllegalArgumentException("mapPrefix: must not be null or empty");
        }
        this.mapPrefix = mapPrefix;
        return this;
      }

      public Settings build() {
        if ((long) port + portCount - 1 > 65_535) {
          throw new IllegalArgumentException("portCount: port " + port + " + " + portCount + " ports goes past 65535");
        }
        return new Settings(this);
      }
    }
  }
}
