package io.sluice.sync.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.SlotHash;
import io.sluice.node.Limit;
import io.sluice.sync.spi.Batch;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.spi.Delta;
import io.sluice.sync.spi.ExactArgs;
import io.sluice.sync.spi.ExactResult;
import io.sluice.sync.spi.ExactStore;
import io.sluice.sync.spi.FlushResult;
import io.sluice.sync.spi.LeaseStore;
import io.sluice.sync.spi.RegionalDecision;
import io.sluice.sync.spi.RegionalGrant;
import io.sluice.sync.spi.SequenceWitness;
import io.sluice.sync.spi.ShareRecord;
import io.sluice.sync.spi.StoreKeys;
import io.sluice.sync.spi.StoreUnavailableException;
import io.sluice.sync.spi.TokenGrant;
import io.sluice.sync.spi.TokenStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A {@link CounterStore} on Redis (standalone, or Sentinel through the URI) over one Lettuce
 * connection, asynchronous, with the Lua scripts of the {@code lua/} folder called by EVALSHA and
 * sent whole (which loads them again) when Redis answers NOSCRIPT after a restart or a
 * {@code SCRIPT FLUSH}. Keys always go to the scripts as KEYS, never into the script text.
 *
 * <p>Every batch goes in one script call, so the whole batch is one group.
 *
 * <p>As an {@link ExactStore} it runs one script per decision ({@code gcra}, {@code fixed_window},
 * {@code sliding_window_counter}, {@code sliding_window_log}) on the same key as the flush of that
 * limit and key; bucket and window counters keep the flush script's layout. As a {@link TokenStore}
 * each claim is one {@code token_claim} call on that same key.
 *
 * <p>Concurrency: every limiter of a process, its flushers and its deciding threads call the store at
 * once; each call is a command on the one Lettuce connection (thread-safe, commands pipelined in the
 * order they are sent) and its answer completes on Lettuce's event loop. The connection and its
 * commands are volatile, set once (at {@link #connect}, or by the connecting thread of {@link
 * #connectInBackground}); {@code closed} is volatile; the counters are adders; the sequence records
 * are {@link SequenceWitness}'s concurrent maps. Nothing else changes after construction.
 */
public final class RedisCounterStore implements CounterStore, ExactStore, LeaseStore, TokenStore {
  private static final LuaScript FLUSH = LuaScript.load("flush");
  private static final LuaScript GCRA = LuaScript.load("gcra");
  private static final LuaScript REGIONAL_BUCKET = LuaScript.load("regional_bucket");
  private static final LuaScript REGIONAL_CLAIM = LuaScript.load("regional_claim");
  private static final LuaScript FIXED_WINDOW = LuaScript.load("fixed_window");
  private static final LuaScript SLIDING_WINDOW_COUNTER = LuaScript.load("sliding_window_counter");
  private static final LuaScript SLIDING_WINDOW_LOG = LuaScript.load("sliding_window_log");
  private static final LuaScript HEARTBEAT = LuaScript.load("heartbeat");
  private static final LuaScript LEAVE = LuaScript.load("leave");
  private static final LuaScript TIME = LuaScript.load("time");
  private static final LuaScript LEASE = LuaScript.load("lease");
  private static final LuaScript GIVE_BACK = LuaScript.load("give_back");
  private static final LuaScript TOKEN_CLAIM = LuaScript.load("token_claim");
  private static final List<LuaScript> SCRIPTS = List.of(FLUSH, GCRA, FIXED_WINDOW, SLIDING_WINDOW_COUNTER,
      SLIDING_WINDOW_LOG, HEARTBEAT, LEAVE, TIME, LEASE, GIVE_BACK, TOKEN_CLAIM, REGIONAL_BUCKET);
  private final RedisStoreConfig config;
  /** The client's own resources (event loops, reconnect delay): shut down with it. */
  private final io.lettuce.core.resource.ClientResources resources;
  private final AbstractRedisClient client;
  /**
   * The connection and its commands: set once, by {@link #connect} before the store is returned or, for a
   * store from {@link #connectInBackground}, by its connecting thread once the scripts are loaded (null
   * until then: every call fails fast with {@link StoreUnavailableException}, and the limiters' failure
   * policy decides).
   */
  private volatile StatefulConnection<byte[], byte[]> connection;
  private volatile RedisScriptingAsyncCommands<byte[], byte[]> commands;
  /** Set by {@link #close()}: a connecting thread stops, and closes what it opened after all. */
  private volatile boolean closed;
  /** Where the store connects, without the password (for messages). */
  private final String where;
  private final byte[] sequenceTtlSeconds;
  /** Which nodes' sequence keys this store wrote, to tell a key the server lost from one that expired. */
  private final SequenceWitness sequences;
  /** Script calls Redis refused for want of memory (maxmemory reached under noeviction). */
  private final java.util.concurrent.atomic.LongAdder outOfMemory = new java.util.concurrent.atomic.LongAdder();
  private static final System.Logger LOG = System.getLogger(RedisCounterStore.class.getName());

  private RedisCounterStore(RedisStoreConfig config, io.lettuce.core.resource.ClientResources resources,
      AbstractRedisClient client, StatefulConnection<byte[], byte[]> connection,
      RedisScriptingAsyncCommands<byte[], byte[]> commands) {
    this.config = config;
    this.resources = resources;
    this.client = client;
    this.connection = connection;
    this.commands = commands;
    this.where = RedisConnector.redacted(RedisURI.create(config.uri()));
    this.sequenceTtlSeconds = ascii(config.sequenceTtl().toSeconds());
    this.sequences = new SequenceWitness(config.sequenceTtl());
  }

  /**
   * {@link #connect(RedisStoreConfig)}, trying again every 250 ms for up to {@code patience}: a service
   * (a sidecar, a rate limit service) often starts alongside its Redis.
   *
   * @throws StoreUnavailableException if Redis could not be reached within the patience
   */
  public static RedisCounterStore connect(RedisStoreConfig config, Duration patience) throws InterruptedException {
    long deadline = System.nanoTime() + patience.toNanos();
    while (true) {
      try {
        return connect(config);
      } catch (StoreUnavailableException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(250);
      }
    }
  }

  /**
   * Connects and loads the scripts.
   *
   * @throws IllegalArgumentException if the URI cannot be parsed
   * @throws StoreUnavailableException if Redis cannot be reached or answer within the timeouts
   */
  public static RedisCounterStore connect(RedisStoreConfig config) {
    RedisURI uri = RedisConnector.parse(config);
    // (before any resource is made: a trusted certificate file gone since the config was built throws here)
    ClientOptions options = RedisConnector.clientOptions(config);
    io.lettuce.core.resource.ClientResources resources = RedisConnector.resources();
    AbstractRedisClient client = RedisConnector.client(config, uri, resources);
    StatefulConnection<byte[], byte[]> connection = RedisConnector.openRetrying(client, resources, options, config,
        uri);
    RedisCounterStore store = new RedisCounterStore(config, resources, client, connection,
        RedisConnector.async(connection));
    try {
      RedisConnector.loadScripts(SCRIPTS, config, store.commands, store.where);
      RedisConnector.checkEviction(config, connection, store.where);
    } catch (RuntimeException e) {
      store.close();
      throw e;
    }
    return store;
  }

  /**
   * A store that connects on a thread of its own, returned at once: a service starts while its Redis is
   * down or not up yet, and its limiters decide by their failure policy (their breakers open on the calls
   * that fail fast meanwhile) until the connection is made and the scripts are loaded; the thread tries
   * again every second and logs why it cannot connect, the first time and every 30 s (as an error where
   * the server refused: a wrong password, missing rights, or a memory policy that
   * {@link RedisStoreConfig#evictionCheck()} refuses; tried again too, since it may be fixed on the server).
   *
   * @throws IllegalArgumentException if the URI cannot be parsed, or a trusted certificate file cannot be read
   */
  public static RedisCounterStore connectInBackground(RedisStoreConfig config) {
    RedisURI uri = RedisConnector.parse(config);
    ClientOptions options = RedisConnector.clientOptions(config);
    io.lettuce.core.resource.ClientResources resources = RedisConnector.resources();
    RedisCounterStore store = new RedisCounterStore(config, resources,
        RedisConnector.client(config, uri, resources), null, null);
    Thread connecting = new Thread(() -> store.connectUntilDone(options), "sluice-redis-connect");
    connecting.setDaemon(true);
    connecting.start();
    return store;
  }

  /** Whether the store is connected and its scripts are loaded (always, for a store from {@link #connect}). */
  public boolean connected() {
    return commands != null;
  }

  /**
   * Waits up to {@code patience} for {@link #connected()}: a service that prefers to start on its store
   * when Redis is there, and without it when Redis is not, waits a moment for the first attempts.
   */
  public boolean awaitConnected(Duration patience) throws InterruptedException {
    long deadline = System.nanoTime() + patience.toNanos();
    while (!connected() && !closed && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    return connected();
  }

  private void connectUntilDone(ClientOptions options) {
    long lastLog = Long.MIN_VALUE;
    int attempts = 0;
    while (!closed) {
      attempts++;
      StatefulConnection<byte[], byte[]> opened = null;
      try {
        opened = RedisConnector.open(client, options);
        RedisScriptingAsyncCommands<byte[], byte[]> async = RedisConnector.async(opened);
        RedisConnector.loadScripts(SCRIPTS, config, async, where);
        RedisConnector.checkEviction(config, opened, where);
        synchronized (this) {
          if (!closed) {
            connection = opened;
            commands = async;
            opened = null;
            LOG.log(System.Logger.Level.INFO, "sluice: connected to Redis at {0} (attempt {1})", where, attempts);
            return;
          }
        }
      } catch (RuntimeException e) {
        if (closed) {
          return;
        }
        boolean refused = RedisConnector.answered(e) || e instanceof IllegalStateException;
        long now = System.nanoTime();
        if (lastLog == Long.MIN_VALUE || now - lastLog >= 30_000_000_000L) {
          lastLog = now;
          LOG.log(refused ? System.Logger.Level.ERROR : System.Logger.Level.WARNING, "sluice: cannot connect to Redis"
              + " at {0} yet (attempt {1}; trying every second, the failure policy decides meanwhile): {2}", where,
              attempts, RedisConnector.rootMessage(e));
        }
      } finally {
        if (opened != null) {
          opened.close();
        }
      }
      try {
        Thread.sleep(1_000);
      } catch (InterruptedException e) {
        return; // closed
      }
    }
  }

  /** Script calls Redis refused with OOM (maxmemory reached under noeviction), since connecting. */
  @Override
  public long outOfMemoryErrors() {
    return outOfMemory.sum();
  }

  /**
   * Standalone and Sentinel: one group, every batch in one script call. Cluster: the key's hash slot,
   * so that a batch (and its node's sequence key, tagged into the same slot) stays on one shard.
   */
  @Override
  public int group(Counter counter, String key) {
    return config.cluster() ? SlotHash.getSlot(StoreKeys.counterKey(config.keyPrefix(), counter.limit(), key)) : 0;
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
    return config.maxBatchSize();
  }

  @Override
  public CompletionStage<FlushResult> flush(Batch batch) {
    batch.requireAtMost(maxBatchSize());
    List<Delta> deltas = batch.deltas();
    Counter regional = null;
    for (Delta d : deltas) {
      if (d.counter().regional()) {
        if (config.cluster()) {
          throw new IllegalArgumentException("counter: regional quotas need a standalone Redis per region (their"
              + " demand index is one key), not a cluster; limit " + d.counter().limit().name());
        }
        if (regional != null && !regional.limit().name().equals(d.counter().limit().name())) {
          throw new IllegalArgumentException("batch: regional deltas of one limit per batch, got "
              + regional.limit().name() + " and " + d.counter().limit().name());
        }
        regional = d.counter();
      }
    }
    FlushWire.Call call = FlushWire.encode(batch, config.keyPrefix(),
        config.cluster() ? SlotTags.tagOf(batch.group()) : null, sequenceTtlSeconds,
        batch.claimOnly() ? 0 : sequences.created(batch.nodeId(), batch.group()), regional);
    byte[][] keys = call.keys();
    byte[][] args = call.args();
    if (batch.claimOnly()) {
      return evalsha(FLUSH, keys, args).thenApply(reply -> FlushWire.decode(reply, batch));
    }
    return evalsha(FLUSH, keys, args).thenApply(reply -> {
      FlushResult result = FlushWire.decode(reply, batch);
      boolean forgot = sequences.lossToTell(batch.nodeId(), batch.group(), batch.sequence(),
          sequences.recreated(batch.nodeId(), batch.group(), (Long) reply.get(1)));
      return forgot ? result.forgetting() : result;
    });
  }

  /**
   * Standalone and Sentinel: a flush carries its node's heartbeat (flush.lua records it in the
   * registry). Not on a cluster: the registry is one key, in a slot of its own.
   */
  @Override
  public boolean beatsInFlush(int group) {
    return !config.cluster();
  }

  /** Standalone and Sentinel: the demand index of a regional quota is one key. */
  @Override
  public boolean sharesRegionalQuotas() {
    return !config.cluster();
  }

  @Override
  public CompletionStage<Lease> lease(Counter counter, String key, long window, long elapsedMicros, long want,
      long need) {
    long windowMicros = ExactArgs.checkLease(counter, key, want, need);
    Limit limit = counter.limit();
    long unit = ExactArgs.leaseUnitMicros(limit, windowMicros);
    long elapsed = ExactArgs.leaseElapsedMicros(elapsedMicros, windowMicros);
    byte[][] keys = {StoreKeys.counterKey(config.keyPrefix(), limit, key)};
    byte[][] args = {ascii(window), ascii(elapsed), ascii(windowMicros), ascii(unit), ascii(limit.capacity()),
        ascii(want), ascii(counter.windowTtlMillis()), ascii(need)};
    return evalsha(LEASE, keys, args).thenApply(r -> new Lease((Long) r.get(0), (Long) r.get(1), (Long) r.get(2)));
  }

  @Override
  public CompletionStage<Integer> heartbeat(String nodeId, long nowMillis, Duration ttl) {
    CounterStore.checkHeartbeat(nodeId, ttl);
    byte[][] keys = {StoreKeys.registryKey(config.keyPrefix())};
    byte[][] args = {nodeId.getBytes(StandardCharsets.UTF_8), ascii(nowMillis), ascii(ttl.toMillis())};
    return this.<Long>evalsha(HEARTBEAT, ScriptOutputType.INTEGER, keys, args).thenApply(Long::intValue);
  }

  /**
   * Redis has one clock every node reads, its {@code TIME}; unless the server refused it to this user
   * (an ACL without {@code TIME}): then the nodes keep their own clocks, and no more calls fail for it.
   */
  @Override
  public boolean tellsTime() {
    return !timeRefused;
  }

  /** Whether Redis refused the call to this user by its ACL (inside a script: "can't run this command"). */
  private static boolean refusedByAcl(Throwable failure) {
    String message = String.valueOf(RedisConnector.rootMessage(failure));
    return message.contains("NOPERM") || message.contains("can't run this command");
  }

  /** Set once the server refuses {@code TIME} to this user (its ACL). */
  private volatile boolean timeRefused;

  /** {@code time.lua}: the server's {@code TIME}, on the registry key's server (one server in a cluster). */
  @Override
  public CompletionStage<Long> timeMicros() {
    byte[][] keys = {StoreKeys.registryKey(config.keyPrefix())};
    return this.<Long>evalsha(TIME, ScriptOutputType.INTEGER, keys, new byte[0][]).whenComplete((micros, failure) -> {
      if (failure != null && !timeRefused && RedisConnector.answered(failure) && refusedByAcl(failure)) {
        timeRefused = true;
        LOG.log(System.Logger.Level.WARNING, "sluice: Redis at {0} refuses TIME to this user ({1}): nodes keep their"
            + " own clocks (grant +time, or run NTP on every node)", where, RedisConnector.rootMessage(failure));
      }
    });
  }

  /** {@code leave.lua}: out of {@code <prefix>:nodes}, into {@code <prefix>:left} for {@link #LEFT_MEMORY}. */
  @Override
  public CompletionStage<Void> leave(String nodeId, long nowMillis) {
    CounterStore.checkHeartbeat(nodeId, LEFT_MEMORY);
    byte[][] keys = {StoreKeys.registryKey(config.keyPrefix()),
        (config.keyPrefix() + ":left").getBytes(StandardCharsets.UTF_8)};
    byte[][] args = {nodeId.getBytes(StandardCharsets.UTF_8), ascii(nowMillis), ascii(LEFT_MEMORY.toMillis())};
    return this.<Long>evalsha(LEAVE, ScriptOutputType.INTEGER, keys, args).thenApply(one -> null);
  }

  /** Each limit's encoded call, made on its first exact decision. */
  private final ExactCall.Cache exactCalls = new ExactCall.Cache();

  @Override
  public CompletionStage<ExactResult> acquire(Limit limit, String key, long cost, long nowMicros) {
    ExactArgs.checkAcquire(limit, key, cost, nowMicros);
    ExactCall call = exactCalls.get(limit);
    if (call == null) {
      call = ExactCall.of(config.keyPrefix(), limit, GCRA, FIXED_WINDOW, SLIDING_WINDOW_COUNTER, SLIDING_WINDOW_LOG);
      exactCalls.put(call);
    }
    ExactCall made = call;
    return this.<Object>evalsha(call.script, ScriptOutputType.OBJECT, call.keys(key), call.args(nowMicros, cost))
        .thenApply(reply -> made.result(reply, nowMicros));
  }

  private static final byte[] BUCKET = "bucket".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] WINDOW = "window".getBytes(StandardCharsets.US_ASCII);

  @Override
  public CompletionStage<Void> giveBack(Limit limit, String key, long cost, long nowMicros, long window) {
    ExactArgs.checkAcquire(limit, key, cost, nowMicros);
    byte[][] args;
    switch (limit.algorithm()) {
      case TOKEN_BUCKET:
      case LEAKY_BUCKET: {
        Counter c = Counter.of(limit);
        args = new byte[][] {BUCKET, ascii(nowMicros), ascii(cost), ascii(c.scale()), ascii(c.interval())};
        break;
      }
      case FIXED_WINDOW:
      case SLIDING_WINDOW_COUNTER:
        args = new byte[][] {WINDOW, ascii(nowMicros), ascii(cost), ascii(window), ascii(ExactArgs.windowMicros(limit))};
        break;
      default:
        throw new IllegalArgumentException("algorithm: " + limit.algorithm() + " takes nothing back, in limit "
            + limit.name());
    }
    byte[][] keys = {StoreKeys.counterKey(config.keyPrefix(), limit, key)};
    return this.<Long>evalsha(GIVE_BACK, ScriptOutputType.INTEGER, keys, args).thenApply(left -> null);
  }

  private static final byte[] NO_WINDOW = ascii(-1);

  /** {@code regional_bucket.lua} on the counter key, the quota's demand index beside it. */
  @Override
  public CompletionStage<RegionalDecision> acquireRegional(Counter counter, String key, long cost, long nowMicros,
      ShareRecord known) {
    ExactArgs.checkRegional(counter, key, cost, nowMicros);
    return this.<List<Object>>evalsha(REGIONAL_BUCKET, ScriptOutputType.MULTI, regionalKeys(counter, key),
        regionalArgs(counter, cost, nowMicros, NO_WINDOW, known)).thenApply(r -> {
          ExactResult result = new ExactResult((Long) r.get(0) == 1L, (Long) r.get(1), (Long) r.get(2),
              (Long) r.get(3), 0, (Long) r.get(4));
          long window = (Long) r.get(5);
          return new RegionalDecision(result, window < 0 ? ShareRecord.NONE
              : new ShareRecord(window, (Long) r.get(6), (Long) r.get(7), (Long) r.get(8)));
        });
  }

  @Override
  public CompletionStage<Void> giveBackRegional(Counter counter, String key, long cost, long nowMicros,
      long window) {
    ExactArgs.checkRegional(counter, key, cost, nowMicros);
    if (window < 0) {
      throw new IllegalArgumentException("window: must not be negative, got " + window);
    }
    return this.<List<Object>>evalsha(REGIONAL_BUCKET, ScriptOutputType.MULTI, regionalKeys(counter, key),
        regionalArgs(counter, -cost, nowMicros, ascii(window), ShareRecord.NONE)).thenApply(r -> null);
  }

  /** {@code regional_claim.lua} on the counter key. */
  @Override
  public CompletionStage<RegionalGrant> claimRegionalTokens(Counter counter, String key, long want, long need,
      long nowMicros, long unused, long ifAt, long ifBacklog, ShareRecord known) {
    ExactArgs.checkRegionalClaim(counter, key, want, need, nowMicros, unused, ifAt, ifBacklog);
    byte[][] keys = {StoreKeys.counterKey(config.keyPrefix(), counter.limit(), key)};
    byte[][] args = {ascii(nowMicros), ascii(want), ascii(need), ascii(counter.staticBurst()),
        ascii(counter.windowNanos() / 1_000), ascii(counter.staticShare()), ascii(unused), ascii(ifAt),
        ascii(ifBacklog), ascii(known.window()), ascii(known.share()), ascii(known.later()), ascii(known.leaseEnd())};
    return this.<List<Object>>evalsha(REGIONAL_CLAIM, ScriptOutputType.MULTI, keys, args).thenApply(r -> {
      TokenGrant grant = new TokenGrant((Long) r.get(0), (Long) r.get(1), (Long) r.get(2), (Long) r.get(3),
          (Long) r.get(4));
      long window = (Long) r.get(5);
      return new RegionalGrant(grant, window < 0 ? ShareRecord.NONE
          : new ShareRecord(window, (Long) r.get(6), (Long) r.get(7), (Long) r.get(8)));
    });
  }

  private byte[][] regionalKeys(Counter counter, String key) {
    return new byte[][] {StoreKeys.counterKey(config.keyPrefix(), counter.limit(), key),
        StoreKeys.demandIndexKey(config.keyPrefix(), counter.limit().name())};
  }

  private static byte[][] regionalArgs(Counter counter, long cost, long nowMicros, byte[] giveBackWindow,
      ShareRecord known) {
    return new byte[][] {ascii(nowMicros), ascii(cost), ascii(counter.staticBurst()),
        ascii(counter.windowNanos() / 1_000), ascii(counter.staticShare()), ascii(counter.windowTtlMillis()),
        ascii(counter.windowTtlMillis()), giveBackWindow, ascii(known.window()), ascii(known.share()),
        ascii(known.later()), ascii(known.leaseEnd())};
  }

  /** One {@code token_claim} call on the bucket's key (the key {@code gcra} keeps). */
  @Override
  public CompletionStage<TokenGrant> claimTokens(Limit limit, String key, long want, long need, long giveBack,
      long horizonMicros, long nowMicros, long unused, long ifAt, long ifBacklog) {
    Counter c = ExactArgs.checkClaim(limit, key, want, need, giveBack, horizonMicros, nowMicros);
    ExactArgs.checkUnused(unused, ifAt, ifBacklog);
    byte[][] keys = {StoreKeys.counterKey(config.keyPrefix(), limit, key)};
    byte[][] args = {ascii(nowMicros), ascii(want), ascii(need), ascii(giveBack), ascii(horizonMicros),
        ascii(limit.capacity()), ascii(c.scale()), ascii(c.interval()), ascii(unused), ascii(ifAt), ascii(ifBacklog)};
    return evalsha(TOKEN_CLAIM, keys, args).thenApply(r -> new TokenGrant((Long) r.get(0), (Long) r.get(1),
        (Long) r.get(2), (Long) r.get(3), (Long) r.get(4)));
  }

  /** The configuration this store connected with. */
  public RedisStoreConfig config() {
    return config;
  }

  /**
   * Runs one of Sluice's scripts ({@link LuaScript#load}: this jar's, or another Sluice module's
   * loaded by {@code LuaScript.load(owner, ...)}, as the region coordinator's share store loads its
   * own) on this store's connection, for Sluice's other modules.
   * Keys and arguments go as KEYS and ARGV; the answer is the script's reply as Lettuce decodes it.
   */
  public CompletionStage<List<Object>> evalsha(LuaScript script, byte[][] keys, byte[][] args) {
    return evalsha(script, ScriptOutputType.MULTI, keys, args);
  }

  /**
   * EVALSHA; on NOSCRIPT (Redis restarted or its script cache was flushed) EVAL, which caches it again.
   * The answer completes on Lettuce's own future (no other future in between on the way of an answer).
   */
  private <T> CompletionStage<T> evalsha(LuaScript script, ScriptOutputType type, byte[][] keys, byte[][] args) {
    RedisScriptingAsyncCommands<byte[], byte[]> commands = this.commands;
    if (commands == null) {
      return CompletableFuture.failedFuture(new StoreUnavailableException("not connected to Redis at " + where
          + " yet", null));
    }
    return commands.<T>evalsha(script.sha1(), type, keys, args).exceptionallyCompose(error -> {
      Throwable cause = unwrap(error);
      if (cause instanceof RedisNoScriptException) {
        return commands.<T>eval(script.body().getBytes(StandardCharsets.UTF_8), type, keys, args)
            .exceptionallyCompose(e -> CompletableFuture.failedFuture(unwrap(e)));
      }
      countOutOfMemory(cause);
      return CompletableFuture.failedFuture(cause);
    });
  }

  /** Counts (and logs, the first time and every 1,000th) a call Redis refused for want of memory. */
  private void countOutOfMemory(Throwable error) {
    if (error instanceof io.lettuce.core.RedisCommandExecutionException && error.getMessage() != null
        && error.getMessage().startsWith("OOM")) {
      outOfMemory.increment();
      long n = outOfMemory.sum();
      if (n == 1 || n % 1_000 == 0) {
        LOG.log(System.Logger.Level.WARNING, "sluice: Redis refused a script call for want of memory ({0} so far): {1}",
            n, error.getMessage());
      }
    }
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** A number as Redis takes it in ARGV: its decimal digits in ASCII. */
  public static byte[] ascii(long v) {
    if (v < 0) {
      return Long.toString(v).getBytes(StandardCharsets.US_ASCII);
    }
    // (every delta of every flush writes about ten of these: one array each, not a String and its bytes)
    int digits = 1;
    for (long rest = v / 10; rest > 0; rest /= 10) {
      digits++;
    }
    byte[] out = new byte[digits];
    for (int i = digits - 1; i >= 0; i--, v /= 10) {
      out[i] = (byte) ('0' + v % 10);
    }
    return out;
  }

  @Override
  public void close() {
    StatefulConnection<byte[], byte[]> open;
    synchronized (this) {
      closed = true;
      open = connection;
    }
    if (open != null) {
      open.close();
    }
    client.shutdown(0, config.commandTimeout().toMillis(), TimeUnit.MILLISECONDS);
    resources.shutdown(0, config.commandTimeout().toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The command timeout: the longest one store call can take before it fails. */
  @Override
  public Duration callTimeout() {
    return config.commandTimeout();
  }
}
