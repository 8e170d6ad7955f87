package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Algorithm;
import io.sluice.sync.AccuracyKit.Mode;
import io.sluice.sync.AccuracyKit.Profile;
import io.sluice.sync.AccuracyKit.Report;
import io.sluice.sync.AccuracyKit.Setup;
import io.sluice.sync.AccuracyKit.Traffic;
import io.sluice.sync.spi.CounterStore;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The accuracy kit against the real stores: a real redis-server (the Lua scripts) and a real
 * Hazelcast cluster (the entry processors, through members and clients), each node with a store
 * connection of its own, on the kit's simulated clock, with the bounds of {@link AccuracyKitTest}.
 * On Redis it also counts the commands the server ran per 1,000 decisions ({@code INFO
 * commandstats}, commands inside scripts included), the figure the issue of cold keys set at most
 * 1,000 for Zipf traffic over 1,000 keys on 4 nodes.
 */
class AccuracyKitIT {
  /** Redis commands per 1,000 decisions reached on Zipf over 1,000 keys, 4 nodes (target: 1,000). */
  static final double REDIS_COMMANDS_REACHED = 3_200;
  @RegisterExtension
  static final RedisFixture redis = new RedisFixture();
  @RegisterExtension
  static final HazelcastFixture hazelcast = new HazelcastFixture("accuracy-kit");

  static Stream<Arguments> cases() {
    List<Arguments> cases = new ArrayList<>();
    for (String store : new String[] {"redis", "hazelcast"}) {
      cases.add(Arguments.of(store, Profile.ZIPF_1K, Algorithm.FIXED_WINDOW, 4, Mode.APPROXIMATE, false));
      cases.add(Arguments.of(store, Profile.ZIPF_1K, Algorithm.SLIDING_WINDOW_COUNTER, 4, Mode.APPROXIMATE, false));
      // (3 nodes: a limit of 100 holds the nodes' allowances on a sliding window, 32 permits per node)
      cases.add(Arguments.of(store, Profile.ZIPF_1K, Algorithm.SLIDING_WINDOW_COUNTER, 3, Mode.APPROXIMATE, false));
      cases.add(Arguments.of(store, Profile.SMALL_LIMITS, Algorithm.FIXED_WINDOW, 3, Mode.APPROXIMATE, false));
      cases.add(Arguments.of(store, Profile.SHAPES, Algorithm.SLIDING_WINDOW_COUNTER, 3, Mode.APPROXIMATE, false));
      cases.add(Arguments.of(store, Profile.SHAPES, Algorithm.FIXED_WINDOW, 8, Mode.APPROXIMATE, false));
      cases.add(Arguments.of(store, Profile.ZIPF_1K, Algorithm.FIXED_WINDOW, 4, Mode.RESERVATION, false));
      // (grants on a sliding window: asked for as the fading frees them, given back unused at the window's end)
      cases.add(Arguments.of(store, Profile.SHAPES, Algorithm.SLIDING_WINDOW_COUNTER, 3, Mode.RESERVATION, false));
      cases.add(Arguments.of(store, Profile.ZIPF_1K, Algorithm.FIXED_WINDOW, 4, Mode.EXACT, false));
      cases.add(Arguments.of(store, Profile.SMALL_LIMITS, Algorithm.SLIDING_WINDOW_COUNTER, 3, Mode.EXACT, false));
      // token buckets batched by token claims (token_claim.lua, TokenClaimProcessor)
      cases.add(Arguments.of(store, Profile.SHAPES, Algorithm.TOKEN_BUCKET, 3, Mode.APPROXIMATE, false));
      cases.add(Arguments.of(store, Profile.ZIPF_1K, Algorithm.TOKEN_BUCKET, 4, Mode.APPROXIMATE, false));
      // (in reservation mode, at the limit, no claims of the refill ahead once other nodes claim on the key)
      cases.add(Arguments.of(store, Profile.SHAPES, Algorithm.TOKEN_BUCKET, 3, Mode.RESERVATION, false));
      // (each key's requests on one node of three: a sliding window's keys near their limits, see KeyOnOneNodeTest)
      cases.add(Arguments.of(store, Profile.SHAPES, Algorithm.SLIDING_WINDOW_COUNTER, 3, Mode.APPROXIMATE, true));
    }
    // -Dsluice.kit.case="hazelcast ZIPF_1K FIXED_WINDOW 4 APPROXIMATE" runs only the cases that match
    String only = System.getProperty("sluice.kit.case", "");
    return cases.stream().filter(a -> java.util.Arrays.stream(a.get()).map(String::valueOf)
        .collect(java.util.stream.Collectors.joining(" ")).contains(only));
  }

  @ParameterizedTest(name = "{0}: {1} {2} {3} nodes {4}, each key on one node: {5}")
  @MethodSource("cases")
  void realStoresKeepTheKitsBounds(String storeName, Profile profile, Algorithm algorithm, int nodes, Mode mode,
      boolean eachKeyOnOneNode) {
    // On Hazelcast, windows of 10 s: the store's TTLs run on the wall clock, and a simulated window
    // of 1 s takes longer than that here (a call takes 0.3-0.6 ms, and half the decisions of these
    // profiles ask). Redis keeps pace with the profiles as they are.
    Traffic plain = profile.traffic(algorithm, AccuracyKit.seed(7));
    // (-Dsluice.kit.stretch=60 runs Redis's cases 60 times slower, windows of a minute: a measurement)
    int redisStretch = Integer.getInteger("sluice.kit.stretch", 1);
    Traffic traffic = storeName.equals("redis") ? (redisStretch > 1 ? plain.stretched(redisStretch) : plain)
        : plain.stretched(10);
    Setup setup = eachKeyOnOneNode ? Setup.eachKeyOnOneNode(nodes, mode) : Setup.of(nodes, mode);
    String prefix = "it-" + UUID.randomUUID().toString().substring(0, 8);
    List<CounterStore> stores = new ArrayList<>();
    for (int n = 0; n < nodes; n++) {
      stores.add(storeName.equals("redis") ? redis.newStore() : hazelcast.store(n));
    }
    try {
      // every case starts from an empty store: the cases share limit names and simulated windows
      if (storeName.equals("redis")) {
        redis.cli().flushall();
        redis.cli().configResetstat();
      } else {
        hazelcast.counters().clear();
      }
      Report r = AccuracyKit.replayable(traffic, setup,
          () -> AccuracyKit.run(traffic, setup, stores::get, prefix, stores.get(0)));
      String commands = "";
      if (storeName.equals("redis")) {
        long calls = redisCommands();
        if (Boolean.getBoolean("sluice.kit.debug")) {
          System.out.println(redis.cli().info("commandstats"));
        }
        // (the scripts' time as Redis measures it, the commands they call included: what the store's
        // CPU spends per decision, which the count of commands does not show)
        commands = String.format(java.util.Locale.ROOT, "; Redis commands %.0f /1k decisions, script time %.1f us per decision",
            1000.0 * calls / r.requests(), (double) redisScriptMicros() / r.requests());
        System.out.println("accuracy kit on " + storeName + ": " + r + commands);
        if (profile == Profile.ZIPF_1K && mode == Mode.APPROXIMATE && algorithm != Algorithm.TOKEN_BUCKET && redisStretch == 1) {
          // The target is at most 1,000 (half of what a minimal exact script per request costs); not
          // reached on the kit's ten seconds from a cold start: most of these decisions are on keys too
          // cold to hold a claim on any node, and each asks the store. The test holds what is reached
          // (2026-12-04: 2,314 fixed, 2,952 sliding; this store's own exact mode 2,825; 2,168 fixed in
          // steady state, -Dsluice.kit.zipf1kSeconds=60), so that it cannot grow unseen; the README's
          // gap table says the same.
          assertThat(1000.0 * calls / r.requests()).as("Redis commands per 1,000 decisions: %s", r)
              .isLessThanOrEqualTo(REDIS_COMMANDS_REACHED);
        }
      } else {
        System.out.println("accuracy kit on " + storeName + ": " + r);
      }
      AccuracyKitTest.assertBounds(r, mode, profile, algorithm, setup);
    } finally {
      stores.forEach(CounterStore::close);
    }
  }

  /** Microseconds the server spent in scripts since the last reset (EVALSHA and EVAL, their commands included). */
  private static long redisScriptMicros() {
    long micros = 0;
    for (String line : redis.cli().info("commandstats").split("\r?\n")) {
      if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
        String rest = line.substring(line.indexOf("usec=") + 5);
        micros += Long.parseLong(rest.substring(0, rest.indexOf(',')));
      }
    }
    return micros;
  }

  /** Commands the server ran since the last reset, without this test's own INFO and CONFIG calls. */
  private static long redisCommands() {
    long calls = 0;
    for (String line : redis.cli().info("commandstats").split("\r?\n")) {
      if (line.startsWith("cmdstat_") && !line.startsWith("cmdstat_info:") && !line.startsWith("cmdstat_config")) {
        String rest = line.substring(line.indexOf("calls=") + 6);
        calls += Long.parseLong(rest.substring(0, rest.indexOf(',')));
      }
    }
    return calls;
  }
}
