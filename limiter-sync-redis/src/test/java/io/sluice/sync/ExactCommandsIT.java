package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.spi.ExactResult;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What one exact decision costs Redis, counted by Redis itself ({@code INFO commandstats}, whose
 * counts include the commands a script runs): one EVALSHA per decision and, inside it, the fewest
 * commands the algorithm needs. A script that reads where it did not, or a Java side that calls twice,
 * fails here. Windows of an hour, so that every counted decision falls in a window already opened.
 */
class ExactCommandsIT {
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();
  private static RedisCounterStore store;
  private static final long NOW = 1_767_225_600_000_000L + 1_000_000L;
  private static final int DECISIONS = 200;

  @BeforeAll
  static void connect() {
    store = redis.newStore();
  }

  @AfterAll
  static void disconnect() {
    store.close();
  }

  private static ExactResult acquire(Limit limit, String key, long cost, long nowMicros) throws Exception {
    return store.acquire(limit, key, cost, nowMicros).toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** Commands Redis ran since the last reset, by name, less this test's own INFO and CONFIG. */
  private static Map<String, Long> commandsSinceReset() {
    Map<String, Long> out = new TreeMap<>();
    for (String line : redis.cli().info("commandstats").split("\r?\n")) {
      if (!line.startsWith("cmdstat_")) {
        continue;
      }
      String name = line.substring("cmdstat_".length(), line.indexOf(':'));
      if (name.equals("info") || name.startsWith("config")) {
        continue;
      }
      String calls = line.substring(line.indexOf("calls=") + "calls=".length());
      out.put(name, Long.parseLong(calls.substring(0, calls.indexOf(','))));
    }
    return out;
  }

  /** {@code DECISIONS} allowed decisions of a window opened before; the commands they made. */
  private static Map<String, Long> allowedDecisions(Limit limit, String key) throws Exception {
    assertThat(acquire(limit, key, 1, NOW).allowed()).isTrue(); // opens the window: not counted
    redis.cli().configResetstat();
    for (int i = 0; i < DECISIONS; i++) {
      assertThat(acquire(limit, key, 1, NOW + i).allowed()).isTrue();
    }
    return commandsSinceReset();
  }

  @Test
  void aFixedWindowAdmitsWithOneCommandInsideItsScript() throws Exception {
    Limit fixed = Limit.fixedWindow("cmd-fw").limit(1_000_000).window(Duration.ofHours(1)).build();
    assertThat(allowedDecisions(fixed, "k")).containsExactlyInAnyOrderEntriesOf(
        Map.of("evalsha", (long) DECISIONS, "hincrby", (long) DECISIONS));
  }

  /** A denial takes and gives back: one command more than an admission, and the count stays. */
  @Test
  void aFixedWindowDeniesWithTwoCommandsAndKeepsItsCount() throws Exception {
    Limit fixed = Limit.fixedWindow("cmd-fw-deny").limit(3).window(Duration.ofHours(1)).build();
    assertThat(acquire(fixed, "k", 3, NOW).remaining()).isZero();
    redis.cli().configResetstat();
    for (int i = 0; i < DECISIONS; i++) {
      ExactResult denied = acquire(fixed, "k", 1, NOW + i);
      assertThat(denied.allowed()).isFalse();
      assertThat(denied.remaining()).isZero();
    }
    assertThat(commandsSinceReset()).containsExactlyInAnyOrderEntriesOf(
        Map.of("evalsha", (long) DECISIONS, "hincrby", 2L * DECISIONS));
    String field = Long.toString(Math.floorDiv(NOW, Duration.ofHours(1).toNanos() / 1_000));
    assertThat(redis.cli().hget(RedisFixture.counterKey("cmd-fw-deny", "k"), field)).isEqualTo("3");
  }

  /** The sliding counter reads the windows it weighs and writes its own: two commands inside. */
  @Test
  void aSlidingWindowCounterAdmitsWithTwoCommandsInsideItsScript() throws Exception {
    Limit sliding = Limit.slidingWindowCounter("cmd-swc").limit(1_000_000).window(Duration.ofHours(1)).build();
    assertThat(allowedDecisions(sliding, "k")).containsExactlyInAnyOrderEntriesOf(
        Map.of("evalsha", (long) DECISIONS, "hmget", (long) DECISIONS, "hincrby", (long) DECISIONS));
  }

  /**
   * Through the limiter: one script call per decision and nothing else but the node's heartbeats
   * (about one a second), so that neither the limiter nor the store adds a call per decision.
   */
  @Test
  void theLimiterMakesOneScriptCallPerExactDecision() {
    Limit fixed = Limit.fixedWindow("cmd-limiter").limit(1_000_000).window(Duration.ofHours(1)).build();
    ManualTicker ticker = new ManualTicker();
    try (RedisCounterStore own = redis.newStore();
        SyncedLimiter limiter = SyncedLimiter.builder(fixed, own).nodeId("cmd-node").batchSize(1).ticker(ticker)
            .build()) {
      assertThat(limiter.tryAcquire("k")).isTrue();
      redis.cli().configResetstat();
      long calls = limiter.storeCalls();
      for (int i = 0; i < DECISIONS; i++) {
        assertThat(limiter.tryAcquire("k")).isTrue();
      }
      Map<String, Long> commands = commandsSinceReset();
      long beats = limiter.storeCalls() - calls - DECISIONS;
      assertThat(beats).isBetween(0L, 5L);
      assertThat(commands.get("evalsha")).isEqualTo(DECISIONS + beats);
      assertThat(commands.get("hincrby")).isEqualTo(DECISIONS);
    }
  }
}
