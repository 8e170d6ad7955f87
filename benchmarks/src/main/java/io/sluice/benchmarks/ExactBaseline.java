package io.sluice.benchmarks;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.sluice.benchmarks.DistributedNodes.Impl;
import io.sluice.benchmarks.DistributedNodes.Node;
import io.sluice.benchmarks.DistributedNodes.SluiceNode;
import io.sluice.benchmarks.ThroughputRuns.Case;
import io.sluice.benchmarks.ThroughputRuns.Cell;
import io.sluice.node.Limit;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What Sluice's exact mode (batch size 1) is measured against: a rate limiter as one would write it by
 * hand on Lettuce, one EVALSHA per decision and nothing else — no circuit breaker, no argument checks,
 * no give-back, no clock-skew handling, a plain string key per window — in the throughput cells of
 * {@link DistributedBenchmark}, beside Sluice's exact mode on the same algorithm:
 *
 * <ul>
 *   <li><b>fixed window</b>: {@code INCRBY} the window's key by the cost, {@code PEXPIRE} it when the
 *       result equals the cost (the window's first request), allowed when the result is within the
 *       limit (a denied request stays counted, as such scripts usually leave it): 2 Redis commands per
 *       decision (EVALSHA, INCRBY);</li>
 *   <li><b>sliding window counter</b>: {@code MGET} the previous and the current window's counts,
 *       allowed when {@code previous * (W - elapsed) / W + current + cost <= limit}, then {@code INCRBY}
 *       (and {@code PEXPIRE} on the window's first request): 3 commands per allowed decision
 *       (EVALSHA, MGET, INCRBY), 2 per denied one.</li>
 * </ul>
 *
 * <p>Beside each, Sluice's exact mode on the same algorithm: "Sluice (batch 1)" (the throughput
 * cells' sliding window counter) and "Sluice fixed window (batch 1)". The report's ratio table divides
 * Sluice's decisions/s by the hand-written script's, cell by cell, from the same run.
 */
final class ExactBaseline {
  private ExactBaseline() {
  }

  static final String FAMILY = "Hand-written EVALSHA";
  static final String FIXED = "fixed window";
  static final String SLIDING = "sliding window counter";
  /** Sluice's exact fixed window, beside the hand-written one (the table's other Sluice rows are sliding). */
  static final String SLUICE_FIXED = "Sluice fixed window";

  /** The label DistributedNodes gives Sluice's default-algorithm (sliding window counter) exact row. */
  private static final String SLUICE_SLIDING_LABEL = "Sluice (batch 1)";

  static final String FIXED_WINDOW_SCRIPT = String.join("\n",
      "local cost = tonumber(ARGV[1])",
      "local count = redis.call('INCRBY', KEYS[1], cost)",
      "if count == cost then",
      "  redis.call('PEXPIRE', KEYS[1], ARGV[3])",
      "end",
      "return tonumber(ARGV[2]) - count");

  static final String SLIDING_WINDOW_SCRIPT = String.join("\n",
      "local counts = redis.call('MGET', KEYS[2], KEYS[1])",
      "local previous = tonumber(counts[1] or '0')",
      "local current = tonumber(counts[2] or '0')",
      "local cost = tonumber(ARGV[1])",
      "local limit = tonumber(ARGV[2])",
      "local window = tonumber(ARGV[3])",
      "local rest = tonumber(ARGV[4])",
      "if (current + cost) * window + previous * rest > limit * window then",
      "  return -1",
      "end",
      "if redis.call('INCRBY', KEYS[1], cost) == cost then",
      "  redis.call('PEXPIRE', KEYS[1], ARGV[5])",
      "end",
      "return limit - current - cost");

  /** The rows this class adds to the throughput table. */
  static List<Impl> impls() {
    return List.of(sluiceFixedWindow(), handWritten(false), handWritten(true));
  }

  /** Sluice's SyncedLimiter in exact mode on a fixed window (the spec's limit and window). */
  static Impl sluiceFixedWindow() {
    return new Impl(SLUICE_FIXED, "batch 1", true, (uri, spec, prefix, index) -> {
      RedisCounterStore store = RedisCounterStore.connect(RedisStoreConfig.builder(uri).keyPrefix(prefix).build());
      try {
        Limit fixed = Limit.fixedWindow("bench").limit(spec.limit()).window(spec.window()).build();
        return new SluiceNode(SyncedLimiter.builder(fixed, store).nodeId("node-" + index).batchSize(1).build(), store);
      } catch (RuntimeException e) {
        store.close();
        throw e;
      }
    });
  }

  /** The hand-written script on the spec's limit and window, one Lettuce connection per node. */
  static Impl handWritten(boolean sliding) {
    return new Impl(FAMILY, sliding ? SLIDING : FIXED, true, (uri, spec, prefix, index) -> {
      RedisClient client = RedisClient.create(uri);
      try {
        StatefulRedisConnection<String, String> connection = client.connect();
        RedisCommands<String, String> commands = connection.sync();
        String sha = commands.scriptLoad(sliding ? SLIDING_WINDOW_SCRIPT : FIXED_WINDOW_SCRIPT);
        return new HandWrittenNode(client, connection, commands, sha, sliding, prefix, spec.limit(),
            spec.window().toMillis());
      } catch (RuntimeException e) {
        client.shutdown(0, 1, TimeUnit.SECONDS);
        throw e;
      }
    });
  }

  /**
   * One node of the hand-written limiter: every thread calls EVALSHA on the node's one connection
   * (Lettuce's synchronous API, which pipelines the calls of concurrent threads on it), keys
   * {@code <prefix>:{<key>}:<window index>} (the hash tag keeps a sliding window's two keys in one slot).
   */
  private static final class HandWrittenNode implements Node {
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> commands;
    private final String sha;
    private final boolean sliding;
    private final String prefix;
    private final String limit;
    private final long windowMillis;
    private final String window;
    /** A window's key lives through the window (fixed) or through the next one too (sliding), plus a margin. */
    private final String ttlMillis;

    HandWrittenNode(RedisClient client, StatefulRedisConnection<String, String> connection,
        RedisCommands<String, String> commands, String sha, boolean sliding, String prefix, long limit,
        long windowMillis) {
      this.client = client;
      this.connection = connection;
      this.commands = commands;
      this.sha = sha;
      this.sliding = sliding;
      this.prefix = prefix;
      this.limit = Long.toString(limit);
      this.windowMillis = windowMillis;
      this.window = Long.toString(windowMillis);
      this.ttlMillis = Long.toString((sliding ? 2 : 1) * windowMillis + 1_000);
    }

    @Override
    public boolean tryAcquire(String key) {
      long now = System.currentTimeMillis();
      long index = now / windowMillis;
      String current = prefix + ":{" + key + "}:" + index;
      Long answer;
      if (sliding) {
        String previous = prefix + ":{" + key + "}:" + (index - 1);
        String rest = Long.toString(windowMillis - now % windowMillis);
        answer = commands.evalsha(sha, ScriptOutputType.INTEGER, new String[] {current, previous}, "1", limit, window,
            rest, ttlMillis);
      } else {
        answer = commands.evalsha(sha, ScriptOutputType.INTEGER, new String[] {current}, "1", limit, ttlMillis);
      }
      return answer >= 0;
    }

    @Override
    public void close() {
      connection.close();
      client.shutdown(0, 1, TimeUnit.SECONDS);
    }
  }

  /**
   * The ratio table: Sluice's exact mode over the hand-written script on the same algorithm, decisions
   * per second cell by cell (in brackets, Redis commands per 1,000 decisions of each, Sluice's first);
   * nothing when either row is missing.
   */
  static void report(StringBuilder md, List<Case> cases, Map<String, Map<Case, Cell>> byImpl) {
    String[][] pairs = {
        {SLUICE_FIXED + " (batch 1)", FAMILY + " (" + FIXED + ")", "fixed window"},
        {SLUICE_SLIDING_LABEL, FAMILY + " (" + SLIDING + ")", "sliding window counter"}};
    boolean headed = false;
    for (String[] pair : pairs) {
      Map<Case, Cell> sluice = byImpl.get(pair[0]);
      Map<Case, Cell> hand = byImpl.get(pair[1]);
      if (sluice == null || hand == null) {
        continue;
      }
      if (!headed) {
        md.append("\n## Ratios: Sluice exact mode / a hand-written one-script limiter (target >= 1.00x)\n\n");
        md.append("Decisions per second of Sluice's `SyncedLimiter` with `batchSize(1)` over `RedisCounterStore` "
            + "divided by those of a minimal Lettuce EVALSHA script on the same algorithm (`ExactBaseline`), same "
            + "cell, same run; in brackets, Redis commands per 1,000 decisions, Sluice / hand-written.\n\n");
        DistributedReport.header(md, "algorithm", cases);
        headed = true;
      }
      md.append("| ").append(pair[2]).append(" |");
      for (Case c : cases) {
        Cell s = sluice.get(c);
        Cell h = hand.get(c);
        if (s == null || h == null || h.perSecond() == 0) {
          md.append(" n/a |");
          continue;
        }
        md.append(String.format(Locale.ROOT, " %.2fx (%,.0f / %,.0f) |", s.perSecond() / h.perSecond(),
            s.commandsPer1000(), h.commandsPer1000()));
      }
      md.append("\n");
    }
  }
}
