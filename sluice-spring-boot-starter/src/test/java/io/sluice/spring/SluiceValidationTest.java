package io.sluice.spring;

import static io.sluice.spring.SluiceAutoConfigurationTest.API_5_PER_MINUTE;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.sim.MemoryStore;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/** A bad setting stops the context with a message that starts with the property's path. */
class SluiceValidationTest {
  final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
      .withBean(CounterStore.class, MemoryStore::new);
  /** No store of the user's: the store's own settings are read. */
  final ApplicationContextRunner noStore = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class));

  static Stream<Arguments> badSettings() {
    return Stream.of(
        // the limit's own builder, its field turned into the property
        Arguments.of(new String[] {"sluice.limits.api.limit=0"}, "sluice.limits.api.limit: must be positive, got 0"),
        Arguments.of(new String[] {"sluice.limits.api.limit=-3"}, "sluice.limits.api.limit: must be positive, got -3"),
        Arguments.of(new String[] {"sluice.limits.api.window=0s"}, "sluice.limits.api.window: must be positive, got 0s"),
        Arguments.of(new String[] {"sluice.limits.api.window=5ms"},
            "sluice.limits.api.window: must be at least 10ms, got 5ms"),
        // one duration grammar: what a rules file and a command's option read, and nothing else
        Arguments.of(new String[] {"sluice.limits.api.window=60000"}, "sluice.limits.api.window: '60000' is not a"
            + " duration (a whole number with ms, s, m, h or d, e.g. 500ms, 10s, 1d; or ISO-8601 like PT90S)"),
        Arguments.of(new String[] {"sluice.sync.claim-timeout=2 sec"}, "sluice.sync.claim-timeout: '2 sec' is not a"
            + " duration (a whole number with ms, s, m, h or d, e.g. 500ms, 10s, 1d; or ISO-8601 like PT90S)"),
        Arguments.of(new String[] {"sluice.store.redis-uri=redis://127.0.0.1:1", "sluice.store.redis-command-timeout=5x"},
            "sluice.store.redis-command-timeout: '5x' is not a duration (a whole number with ms, s, m, h or d, e.g."
                + " 500ms, 10s, 1d; or ISO-8601 like PT90S)"),
        Arguments.of(new String[] {"sluice.limits.api.algorithm=token-bucket", "sluice.limits.api.burst=0"},
            "sluice.limits.api.burst: must be positive, got 0"),
        Arguments.of(new String[] {"sluice.limits.api.algorithm=token-bucket", "sluice.limits.api.limit=0"},
            "sluice.limits.api.limit: must be positive, got 0"),
        Arguments.of(new String[] {"sluice.limits.api.burst=10"},
            "sluice.limits.api.burst: is a bucket's capacity; sliding-window-counter has none"),
        Arguments.of(new String[] {"sluice.limits.other.window=1m"}, "sluice.limits.other.limit: must be set (permits per window)"),
        Arguments.of(new String[] {"sluice.limits.other.limit=3"}, "sluice.limits.other.window: must be set (e.g. 1m)"),
        // the rules file's parser, its line turned into the property it came from
        Arguments.of(new String[] {"sluice.rules.plans.pro=pr by api-key"},
            "sluice.rules.plans.pro: unknown limit \"pr\" (defined: api)"),
        Arguments.of(new String[] {"sluice.rules.plans.pro=api by ip"},
            "sluice.rules.plans.pro: limit \"api\" is keyed by api-key in another rule; a limit counts one identity"
                + " (define a second limit for ip)"),
        Arguments.of(new String[] {"sluice.rules.endpoints[0].path=login", "sluice.rules.endpoints[0].rules=api by api-key"},
            "sluice.rules.endpoints[0].path: must start with '/', got login"),
        Arguments.of(new String[] {"sluice.rules.endpoints[0].rules=api by api-key"},
            "sluice.rules.endpoints[0].path: must be set (e.g. /login or /api/**)"),
        Arguments.of(new String[] {"sluice.rules.endpoints[0].path=/x", "sluice.rules.endpoints[0].rules=api"},
            "sluice.rules.endpoints[0].rules: cannot read \"api\" (LIMIT by IDENTITY, e.g. api by api-key)"),
        Arguments.of(new String[] {"sluice.rules.plans.free=api by api-key", "sluice.rules.default-plan=gold"},
            "sluice.rules.default-plan: no plan \"gold\" in sluice.rules.plans (plans: free)"),
        // SyncConfig's setters and what SyncedLimiter checks against the limit
        Arguments.of(new String[] {"sluice.sync.batch-size=0"}, "sluice.sync.batch-size: must be at least 1, got 0"),
        Arguments.of(new String[] {"sluice.sync.sync-interval=0s"}, "sluice.sync.sync-interval: must be positive, got 0s"),
        Arguments.of(new String[] {"sluice.sync.node-id=web 1"},
            "sluice.sync.node-id: must be 1 to 64 characters of [A-Za-z0-9_.:-], got web 1"),
        Arguments.of(new String[] {"sluice.sync.max-keys=0"}, "sluice.sync.max-keys: must be positive, got 0"),
        // RedisStoreConfig's checks, before any connection
        Arguments.of(new String[] {"sluice.store.redis-uri=http://127.0.0.1:1"},
            "sluice.store.redis-uri: must start with redis://, rediss:// or redis-sentinel://, got http://127.0.0.1:1"),
        Arguments.of(new String[] {"sluice.store.redis-uri=redis://127.0.0.1:1", "sluice.store.key-prefix=a b"},
            "sluice.store.key-prefix: must be 1 to 64 characters of [A-Za-z0-9_.:-], got a b"));
  }

  @ParameterizedTest
  @MethodSource("badSettings")
  void theFailureNamesTheProperty(String[] settings, String message) {
    (settings[0].startsWith("sluice.store.") ? noStore : runner).withPropertyValues(API_5_PER_MINUTE).withPropertyValues(settings)
        .run(context -> assertThat(SluiceAutoConfigurationTest.Failures.message(context)).isEqualTo(message));
  }

  @Test
  void aSyncIntervalAboveHalfTheWindowNamesTheSettingAndTheLimit() {
    runner.withPropertyValues(API_5_PER_MINUTE).withPropertyValues("sluice.sync.sync-interval=31s")
        .run(context -> assertThat(SluiceAutoConfigurationTest.Failures.message(context))
            .startsWith("sluice.sync.sync-interval: at most half the window")
            .endsWith("(for sluice.limits.api)"));
  }

  @Test
  void noLimitsAtAllIsSaid() {
    runner.run(context -> assertThat(SluiceAutoConfigurationTest.Failures.message(context))
        .startsWith("sluice.limits: no limits: set sluice.limits.<name>.limit and .window"));
  }

  @Test
  void limitsWithoutRulesAreSaid() {
    runner.withPropertyValues("sluice.limits.api.limit=5", "sluice.limits.api.window=1m")
        .run(context -> assertThat(SluiceAutoConfigurationTest.Failures.message(context))
            .isEqualTo("sluice.rules: no rules, so no limit applies to any request: say which limits a request meets,"
                + " each keyed by an identity (e.g. sluice.rules.always: api by ip)"));
  }

  @Test
  void aRulesFileAndPropertiesTogetherAreRefused() {
    runner.withPropertyValues(API_5_PER_MINUTE).withPropertyValues("sluice.rules-file=classpath:sluice-test-rules.conf")
        .run(context -> assertThat(SluiceAutoConfigurationTest.Failures.message(context))
            .isEqualTo("sluice.rules-file: set either sluice.rules-file or sluice.limits and sluice.rules, not both"));
  }

  @Test
  void aBadRulesFileNamesTheFileAndLine() {
    runner.withPropertyValues("sluice.rules-file=classpath:sluice-bad-rules.conf")
        .run(context -> assertThat(SluiceAutoConfigurationTest.Failures.message(context))
            .isEqualTo("sluice.rules-file: sluice-bad-rules.conf:2: rule: unknown limit \"pr\" (defined: api)"));
  }

  @Test
  void anAlgorithmSpringCannotBindNamesTheProperty() {
    runner.withPropertyValues(API_5_PER_MINUTE).withPropertyValues("sluice.limits.api.algorithm=leaky")
        .run(context -> assertThat(context.getStartupFailure()).rootCause().isNotNull()
            .satisfies(e -> assertThat(context.getStartupFailure().getMessage() + rootMessages(context.getStartupFailure()))
                .contains("sluice.limits.api.algorithm")));
  }

  private static String rootMessages(Throwable t) {
    StringBuilder b = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      b.append(" | ").append(c.getMessage());
    }
    return b.toString();
  }

  @Test
  void theFiltersSettingsAndIdentitiesAreChecked() {
    WebApplicationContextRunner web = new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
        .withBean(CounterStore.class, MemoryStore::new);
    web.withPropertyValues(API_5_PER_MINUTE).withPropertyValues("sluice.filter.trusted-proxies=10.0.0.0/99")
        .run(context -> assertThat(SluiceAutoConfigurationTest.Failures.message(context))
            .startsWith("sluice.filter.trusted-proxies: "));
    web.withPropertyValues(API_5_PER_MINUTE).withPropertyValues("sluice.filter.api-key-header=X Key")
        .run(context -> assertThat(SluiceAutoConfigurationTest.Failures.message(context))
            .isEqualTo("sluice.filter.api-key-header: not a header name: X Key"));
    web.withPropertyValues(API_5_PER_MINUTE).withPropertyValues("sluice.rules.always=api by tenant")
        .run(context -> assertThat(SluiceAutoConfigurationTest.Failures.message(context))
            .isEqualTo("sluice.rules: no request has identity \"tenant\": the filter reads [api-key, user, ip, client]"
                + " (more through sluice.filter.identity-headers or a SluiceFilterCustomizer bean)"));
  }
}
