package io.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.http.RateLimitFilter;
import io.sluice.node.KeyedLimiter;
import io.sluice.node.Limit;
import io.sluice.node.Mode;
import io.sluice.node.RequestContext;
import io.sluice.node.RequestLimiter;
import io.sluice.node.Rule;
import io.sluice.node.RulesFile;
import io.sluice.sync.StoreFailurePolicy;
import io.sluice.sync.SyncConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.hazelcast.HazelcastCounterStore;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.sim.MemoryStore;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.core.io.ClassPathResource;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/** The conditions, the binding and the filter's registration; the store is the in-memory one unless said. */
class SluiceAutoConfigurationTest {
  static final String[] API_5_PER_MINUTE = {"sluice.limits.api.limit=5", "sluice.limits.api.window=1m",
      "sluice.rules.always=api by api-key"};

  final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
      .withBean(CounterStore.class, MemoryStore::new);

  final WebApplicationContextRunner web = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
      .withBean(CounterStore.class, MemoryStore::new);

  @Test
  void limitsAndRulesFromPropertiesBecomeDistributedLimitersOverTheStore() {
    runner.withPropertyValues(API_5_PER_MINUTE).withPropertyValues("sluice.sync.batch-size=1").run(context -> {
      assertThat(context).hasNotFailed();
      RequestLimiter limiter = context.getBean(RequestLimiter.class);
      assertThat(limiter.limiters()).hasSize(1);
      KeyedLimiter api = limiter.limiters().iterator().next();
      assertThat(api).isInstanceOf(SyncedLimiter.class);
      assertThat(api.limit()).isEqualTo(Limit.slidingWindowCounter("api").limit(5).window(Duration.ofMinutes(1)).build());
      // the user's store is the one shared: exact mode, so exactly 5 of 8 through the store
      assertThat(context.getBean(CounterStore.class)).isInstanceOf(MemoryStore.class);
      RequestContext request = RequestContext.builder().identity("api-key", "k1").build();
      long allowed = 0;
      for (int i = 0; i < 8; i++) {
        allowed += limiter.check(request).allowed() ? 1 : 0;
      }
      assertThat(allowed).isEqualTo(5);
      assertThat(((MemoryStore) context.getBean(CounterStore.class)).calls()).isGreaterThanOrEqualTo(8);
    });
  }

  @Test
  void aYamlFileInTheShapeOfARulesFileGivesTheSameRulesAsTheFile() {
    RulesFile file = RulesFile.parse("""
        per-ip   = 1000/1m
        login    = 5/15m, fixed-window
        free     = 1/1s, token-bucket, burst=60
        pro      = 10/1s, token-bucket, burst=600
        new-rule = 100/1m, shadow
        always                per-ip by ip, new-rule by api-key
        plan free default     free by api-key
        plan pro              pro by api-key
        endpoint POST /login  login by ip
        """, "rules.conf");
    runner.withInitializer(context -> {
      try {
        new YamlPropertySourceLoader().load("sluice-test", new ClassPathResource("sluice-test.yml"))
            .forEach(context.getEnvironment().getPropertySources()::addFirst);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    }).run(context -> {
      assertThat(context).hasNotFailed();
      RulesFile fromYaml = context.getBean(RulesFile.class);
      assertThat(fromYaml.limits()).containsExactlyElementsOf(file.limits());
      assertThat(fromYaml.identities()).isEqualTo(file.identities());
      assertThat(fromYaml.limits()).extracting(Limit::mode).contains(Mode.SHADOW);
      for (RequestContext request : List.of(
          RequestContext.builder().identity("ip", "10.0.0.7").identity("api-key", "k").build(),
          RequestContext.builder().plan("pro").identity("ip", "10.0.0.7").identity("api-key", "k").build(),
          RequestContext.builder().plan("gold").endpoint("POST", "/login").identity("ip", "10.0.0.7").build(),
          RequestContext.builder().endpoint("GET", "/login").identity("ip", "10.0.0.7").build())) {
        assertThat(names(fromYaml.rules().orElseThrow().rulesFor(request)))
            .as("rules for %s %s", request.plan(), request.path())
            .isEqualTo(names(file.rules().orElseThrow().rulesFor(request)));
      }
      // the plan, the endpoint and the default plan did apply (not an empty list on both sides)
      assertThat(names(fromYaml.rules().orElseThrow().rulesFor(RequestContext.builder().plan("pro")
          .endpoint("POST", "/login").identity("ip", "a").identity("api-key", "k").build())))
          .containsExactlyInAnyOrder("per-ip", "new-rule", "pro", "login");
      assertThat(names(fromYaml.rules().orElseThrow().rulesFor(RequestContext.builder().identity("ip", "a").build())))
          .contains("free");
    });
  }

  private static List<String> names(List<Rule> rules) {
    return rules.stream().map(r -> r.limit().name()).sorted().collect(Collectors.toList());
  }

  @Test
  void syncPropertiesMapOntoSyncConfig() {
    runner.withPropertyValues(API_5_PER_MINUTE).withPropertyValues("sluice.sync.node-id=web-1",
        "sluice.sync.batch-size=50", "sluice.sync.sync-interval=250ms", "sluice.sync.on-store-failure=fail-closed",
        "sluice.sync.max-keys=1000", "sluice.sync.claim-timeout=300ms", "sluice.sync.flush-timeout=3s",
        "sluice.sync.bucket-batch-size=40", "sluice.sync.cold-key-allowance=false", "sluice.sync.min-nodes=3",
        "sluice.sync.align-clock=false")
        .run(context -> {
          SyncConfig config = context.getBean(SyncConfig.class);
          assertThat(config.nodeId()).isEqualTo("web-1");
          assertThat(config.batchSize()).contains(50L);
          assertThat(config.syncInterval()).isEqualTo(Duration.ofMillis(250));
          assertThat(config.onStoreFailure()).isEqualTo(StoreFailurePolicy.FAIL_CLOSED);
          assertThat(config.maxKeys()).isEqualTo(1000);
          assertThat(config.claimTimeout()).isEqualTo(Duration.ofMillis(300));
          assertThat(config.flushTimeout()).isEqualTo(Duration.ofSeconds(3));
          assertThat(config.bucketBatchSize()).isEqualTo(40);
          assertThat(config.coldKeyAllowance()).isFalse();
          assertThat(config.alignsClockToStore()).isFalse();
          assertThat(config.minNodes()).isEqualTo(3);
          SyncedLimiter api = (SyncedLimiter) context.getBean(RequestLimiter.class).limiters().iterator().next();
          assertThat(api.nodeId()).isEqualTo("web-1");
          assertThat(api.config()).isSameAs(config);
        });
  }

  @Test
  void unsetSyncPropertiesKeepTheLibraryDefaults() {
    runner.withPropertyValues(API_5_PER_MINUTE).run(context -> {
      SyncConfig config = context.getBean(SyncConfig.class);
      SyncConfig defaults = SyncConfig.ofDefaults();
      assertThat(config.batchSize()).isEqualTo(defaults.batchSize());
      assertThat(config.syncInterval()).isEqualTo(defaults.syncInterval());
      assertThat(config.onStoreFailure()).isEqualTo(defaults.onStoreFailure());
      assertThat(config.maxKeys()).isEqualTo(defaults.maxKeys());
      assertThat(config.bucketBatchSize()).as("buckets exact").isEqualTo(1);
    });
  }

  @Test
  void disabledLeavesEverythingOut() {
    web.withPropertyValues(API_5_PER_MINUTE).withPropertyValues("sluice.enabled=false").run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(context).doesNotHaveBean(RequestLimiter.class);
      assertThat(context).doesNotHaveBean(SyncConfig.class);
      assertThat(context).doesNotHaveBean(RulesFile.class);
      assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
    });
    // and with no user store, no store is started either
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
        .withPropertyValues("sluice.enabled=false").run(context -> assertThat(context).doesNotHaveBean(CounterStore.class));
  }

  @Test
  void theUsersOwnBeansWin() {
    RequestLimiter own = RequestLimiter.builder(RulesFile.parse("x = 1/1m\nalways x by ip", "own").rules().orElseThrow())
        .build();
    web.withBean(RequestLimiter.class, () -> own).run(context -> {
      // no sluice.limits at all: the user's request limiter is used, the properties are not read
      assertThat(context).hasNotFailed();
      assertThat(context.getBean(RequestLimiter.class)).isSameAs(own);
      assertThat(context).doesNotHaveBean(RulesFile.class);
      @SuppressWarnings("unchecked")
      FilterRegistrationBean<RateLimitFilter> registration = context.getBean(FilterRegistrationBean.class);
      assertThat(registration.getFilter().config().limiter()).isSameAs(own);
    });
    SyncConfig ownConfig = SyncConfig.custom().nodeId("mine").build();
    runner.withPropertyValues(API_5_PER_MINUTE).withPropertyValues("sluice.sync.node-id=theirs")
        .withBean(SyncConfig.class, () -> ownConfig).run(context -> {
          SyncedLimiter api = (SyncedLimiter) context.getBean(RequestLimiter.class).limiters().iterator().next();
          assertThat(api.nodeId()).isEqualTo("mine");
        });
  }

  @Test
  void withoutARedisUriTheStoreIsAnEmbeddedHazelcastMember() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
        .withPropertyValues(API_5_PER_MINUTE)
        .withPropertyValues("sluice.store.hazelcast-cluster-name=starter-test-" + port,
            "sluice.store.hazelcast-port=" + port,
            "sluice.store.redis-uri=") // blank, as ${SLUICE_REDIS:} leaves it: no Redis
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(CounterStore.class)).isInstanceOf(HazelcastCounterStore.class);
          assertThat(context.getBean(SluiceAutoConfiguration.EmbeddedHazelcastMember.class).instance().getConfig()
              .getProperty("hazelcast.logging.type")).as("Hazelcast logs through SLF4J").isEqualTo("slf4j");
          RequestContext request = RequestContext.builder().identity("api-key", "k1").build();
          assertThat(context.getBean(RequestLimiter.class).check(request).allowed()).isTrue();
        });
  }

  @Test
  void aRedisUriSelectsTheRedisStoreAndAServerThatIsNotThereFailsNamingThePropertyWhenFailFast() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
        .withPropertyValues(API_5_PER_MINUTE)
        .withPropertyValues("sluice.store.redis-uri=redis://127.0.0.1:" + port, "sluice.store.redis-fail-fast=true")
        .run(context -> assertThat(Failures.message(context))
            .startsWith("sluice.store.redis-uri: cannot connect to redis://127.0.0.1:" + port + ": "));
  }

  /**
   * By default an application starts while its Redis is down (as with Spring Data Redis): the limits
   * decide by the failure policy until the store connects.
   */
  @Test
  void aRedisThatIsNotThereYetDoesNotStopTheApplication() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
        .withPropertyValues(API_5_PER_MINUTE)
        .withPropertyValues("sluice.store.redis-uri=redis://127.0.0.1:" + port)
        .run(context -> {
          assertThat(context).hasNotFailed();
          RedisCounterStore store = context.getBean(RedisCounterStore.class);
          assertThat(store.connected()).isFalse();
          RequestContext request = RequestContext.builder().identity("api-key", "k1").build();
          assertThat(context.getBean(RequestLimiter.class).check(request).allowed())
              .as("decided by LOCAL_SHARE, the default failure policy").isTrue();
        });
  }

  /**
   * Started while its Redis is down, an instance has never heard the node registry: told the fewest
   * instances the deployment runs, it keeps to its part of each limit (a fifth of 5 a minute, 1, with
   * five), where alone it would admit all 5 (and five such instances 25).
   */
  @Test
  void anInstanceStartedWhileRedisIsDownKeepsToItsPartOfTheFewestInstancesItIsTold() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    for (int minNodes : new int[] {1, 5}) {
      new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
          .withPropertyValues(API_5_PER_MINUTE)
          .withPropertyValues("sluice.store.redis-uri=redis://127.0.0.1:" + port, "sluice.sync.min-nodes=" + minNodes)
          .run(context -> {
            RequestLimiter limiter = context.getBean(RequestLimiter.class);
            int allowed;
            long minute;
            int attempt = 0;
            do { // (on a key of its own each time the checks straddled a minute's edge, where the limit starts over)
              minute = System.currentTimeMillis() / 60_000;
              RequestContext request = RequestContext.builder().identity("api-key", "k" + attempt++).build();
              allowed = 0;
              for (int i = 0; i < 8; i++) {
                allowed += limiter.check(request).allowed() ? 1 : 0;
              }
            } while (System.currentTimeMillis() / 60_000 != minute);
            assertThat(allowed).as("admitted of 5 a minute, Redis down, min-nodes %s", minNodes)
                .isEqualTo(minNodes == 1 ? 5 : 1);
          });
    }
  }

  @Test
  void theEmbeddedClusterIsNamedAfterTheApplicationUnlessSet() {
    assertThat(SluiceAutoConfiguration.clusterName(null, "orders")).isEqualTo("sluice-orders");
    assertThat(SluiceAutoConfiguration.clusterName(null, null)).isEqualTo("sluice");
    assertThat(SluiceAutoConfiguration.clusterName(null, " ")).isEqualTo("sluice");
    assertThat(SluiceAutoConfiguration.clusterName("shared", "orders")).isEqualTo("shared");
  }

  @Test
  void aRedisPasswordIsNotRepeatedInTheStartupFailure() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    // the failure analyzer prints this message to the console and the logs: the password must not be in it
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
        .withPropertyValues(API_5_PER_MINUTE)
        .withPropertyValues("sluice.store.redis-uri=redis://sluice:s3cret-pw@127.0.0.1:" + port,
            "sluice.store.redis-fail-fast=true")
        .run(context -> assertThat(Failures.message(context))
            .startsWith("sluice.store.redis-uri: cannot connect to redis://sluice:*****@127.0.0.1:" + port + ": ")
            .doesNotContain("s3cret-pw"));
    // a URI the library refuses repeats it in its message
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
        .withPropertyValues(API_5_PER_MINUTE)
        .withPropertyValues("sluice.store.redis-uri=http://:s3cret-pw@127.0.0.1:" + port)
        .run(context -> assertThat(Failures.message(context)).startsWith("sluice.store.redis-uri: ")
            .doesNotContain("s3cret-pw"));
  }

  @Test
  void theEmbeddedMemberIsShutDownByTheContextNotByItsOwnShutdownHook() throws IOException {
    // JVM shutdown hooks run concurrently: with Hazelcast's own hook, SIGTERM shuts the member down
    // while server.shutdown=graceful still drains requests, and the limiters' last flush on close
    // then finds no store. The context closes it, after the request limiter (which flushes first).
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    com.hazelcast.core.HazelcastInstance[] member = new com.hazelcast.core.HazelcastInstance[1];
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
        .withPropertyValues(API_5_PER_MINUTE)
        .withPropertyValues("sluice.store.hazelcast-cluster-name=starter-hook-" + port,
            "sluice.store.hazelcast-port=" + port)
        .run(context -> {
          assertThat(context).hasNotFailed();
          member[0] = ((HazelcastCounterStore) context.getBean(CounterStore.class)).instance();
          assertThat(member[0].getConfig().getProperty("hazelcast.shutdownhook.enabled")).isEqualTo("false");
        });
    assertThat(member[0].getLifecycleService().isRunning()).as("shut down when the context closed").isFalse();
  }

  @Test
  void aStoreModuleLeftOutOfTheClasspathBacksOff() {
    // no Hazelcast on the classpath: the user's store serves, and none of Hazelcast is touched
    runner.withClassLoader(new FilteredClassLoader(HazelcastCounterStore.class, com.hazelcast.core.Hazelcast.class))
        .withPropertyValues(API_5_PER_MINUTE).run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(CounterStore.class)).isInstanceOf(MemoryStore.class);
        });
    // no Hazelcast and no Redis URI, and no store of the user's: no store bean, and the limiter says so
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
        .withClassLoader(new FilteredClassLoader(HazelcastCounterStore.class))
        .withPropertyValues(API_5_PER_MINUTE).run(context -> {
          assertThat(context).hasFailed();
          assertThat(context.getStartupFailure()).hasRootCauseInstanceOf(
              org.springframework.beans.factory.NoSuchBeanDefinitionException.class);
        });
  }

  @Test
  void theFilterIsRegisteredOnServletWebApplicationsOnly() {
    web.withPropertyValues(API_5_PER_MINUTE)
        .withPropertyValues("sluice.filter.order=5", "sluice.filter.url-patterns=/api/*,/login").run(context -> {
          assertThat(context).hasNotFailed();
          @SuppressWarnings("unchecked")
          FilterRegistrationBean<RateLimitFilter> registration = context.getBean(FilterRegistrationBean.class);
          assertThat(registration.getOrder()).isEqualTo(5);
          assertThat(registration.getUrlPatterns()).containsExactly("/api/*", "/login");
          assertThat(registration.getFilter().config().limiter()).isSameAs(context.getBean(RequestLimiter.class));
        });
    web.withPropertyValues(API_5_PER_MINUTE).run(context -> {
      FilterRegistrationBean<?> registration = context.getBean(FilterRegistrationBean.class);
      assertThat(registration.getOrder()).isEqualTo(-99);
      assertThat(registration.getUrlPatterns()).containsExactly("/*");
    });
    runner.withPropertyValues(API_5_PER_MINUTE).run(context -> {
      assertThat(context).hasSingleBean(RequestLimiter.class);
      assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
    });
    // an application without the servlet API (a batch job, a WebFlux app) starts, without the filter
    runner.withPropertyValues(API_5_PER_MINUTE).withClassLoader(new FilteredClassLoader("jakarta.servlet"))
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).hasSingleBean(RequestLimiter.class);
          assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
        });
    web.withPropertyValues(API_5_PER_MINUTE).withPropertyValues("sluice.filter.enabled=false").run(context -> {
      assertThat(context).hasSingleBean(RequestLimiter.class);
      assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
    });
  }

  @Test
  void theRegisteredFilterAnswers429WithRetryAfterAndTheRateLimitFields() throws Exception {
    web.withPropertyValues(API_5_PER_MINUTE).withPropertyValues("sluice.sync.batch-size=1",
        "sluice.filter.api-key-header=X-Key", "sluice.filter.identity-headers.tenant=X-Tenant",
        "sluice.limits.tenant.limit=100", "sluice.limits.tenant.window=1m",
        "sluice.rules.always=api by api-key, tenant by tenant").run(context -> {
          assertThat(context).hasNotFailed();
          RateLimitFilter filter = (RateLimitFilter) context.getBean(FilterRegistrationBean.class).getFilter();
          int passed = 0;
          MockHttpServletResponse last = null;
          for (int i = 0; i < 7; i++) {
            MockHttpServletRequest request = new MockHttpServletRequest("GET", "/hello");
            request.addHeader("X-Key", "k1");
            request.addHeader("X-Tenant", "t1");
            MockHttpServletResponse response = new MockHttpServletResponse();
            MockFilterChain chain = new MockFilterChain();
            filter.doFilter(request, response, chain);
            passed += chain.getRequest() != null ? 1 : 0;
            last = response;
          }
          assertThat(passed).isEqualTo(5);
          assertThat(last.getStatus()).isEqualTo(429);
          assertThat(last.getHeader("Retry-After")).isNotNull();
          assertThat(last.getHeader("RateLimit")).contains("\"api\"");
          assertThat(last.getHeader("RateLimit-Policy")).contains("q=5");
          // the tenant identity was read from its header and counted; the two requests the api limit denied
          // gave their tenant permit back
          SyncedLimiter tenant = context.getBean(RequestLimiter.class).limiters().stream()
              .filter(l -> l.limit().name().equals("tenant")).map(SyncedLimiter.class::cast).findFirst().orElseThrow();
          assertThat(tenant.admitted()).isEqualTo(5);
        });
  }

  @Test
  void anEndpointRuleOfGetHoldsForHeadAsTheReadmesHelloDoes() throws Exception {
    // the README's rule: method GET, path /hello, 5 a minute per API key. Tomcat and Spring MVC answer
    // HEAD /hello with the GET handler, so HEAD must count against the same limit.
    web.withPropertyValues("sluice.limits.api.limit=5", "sluice.limits.api.window=1m", "sluice.sync.batch-size=1",
        "sluice.rules.endpoints[0].method=GET", "sluice.rules.endpoints[0].path=/hello",
        "sluice.rules.endpoints[0].rules=api by api-key").run(context -> {
          RateLimitFilter filter = (RateLimitFilter) context.getBean(FilterRegistrationBean.class).getFilter();
          int passed = 0;
          for (int i = 0; i < 8; i++) {
            MockHttpServletRequest request = new MockHttpServletRequest(i % 2 == 0 ? "GET" : "HEAD", "/hello");
            request.setServletPath("/hello");
            request.addHeader("X-API-Key", "k1");
            MockFilterChain chain = new MockFilterChain();
            filter.doFilter(request, new MockHttpServletResponse(), chain);
            passed += chain.getRequest() != null ? 1 : 0;
          }
          assertThat(passed).as("GET and HEAD of /hello under one limit of 5").isEqualTo(5);
        });
  }

  @Test
  void aRulesFileCanStandForTheProperties() {
    runner.withPropertyValues("sluice.rules-file=classpath:sluice-test-rules.conf", "sluice.sync.batch-size=1")
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(RequestLimiter.class).limiters()).extracting(l -> l.limit().name())
              .containsExactlyInAnyOrder("per-ip", "login");
        });
  }

  static final class Failures {
    /** The message of the SluiceConfigurationException that stopped the context. */
    static String message(ApplicationContextAssertProvider<?> context) {
      Throwable failure = context.getStartupFailure();
      assertThat(failure).as("the context should have failed to start").isNotNull();
      for (Throwable t = failure; t != null; t = t.getCause()) {
        if (t instanceof SluiceConfigurationException) {
          return t.getMessage();
        }
      }
      throw new AssertionError("no SluiceConfigurationException in the failure", failure);
    }
  }

}
