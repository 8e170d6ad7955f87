package io.sluice.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.sluice.http.PlanResolver;
import io.sluice.http.RateLimitFilter;
import io.sluice.http.RateLimitFilterConfig;
import io.sluice.node.RateLimiterMetrics;
import io.sluice.node.RequestLimiter;
import io.sluice.node.RulesFile;
import io.sluice.sync.SyncConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.SyncedLimiterMetrics;
import io.sluice.sync.hazelcast.HazelcastCounterStore;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import io.sluice.sync.spi.CounterStore;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Sluice from {@code application.yml}: the store ({@code sluice.store.*}: Redis, else an embedded
 * Hazelcast member), one {@link SyncedLimiter} per limit of the rules ({@code sluice.limits},
 * {@code sluice.rules} or {@code sluice.rules-file}) with the settings of {@code sluice.sync.*}, the
 * servlet {@link RateLimitFilter} on servlet web applications, Micrometer binders and an Actuator
 * health indicator. Every bean backs off when the application defines its own of the same type;
 * {@code sluice.enabled=false} leaves everything out.
 *
 * <p>On shutdown the request limiter closes before the store it depends on: each limiter flushes what
 * it admitted (within the flush timeout), then the store's connection (or embedded member) closes.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
    "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnProperty(prefix = "sluice", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(SluiceProperties.class)
public class SluiceAutoConfiguration {

  /** The limits and rules of the properties (or of the rules file), checked, errors naming the property. */
  @Bean
  @ConditionalOnMissingBean({RulesFile.class, RequestLimiter.class})
  public RulesFile sluiceRulesFile(SluiceProperties properties, ObjectProvider<AnnotatedEndpoints> annotated) {
    return PropertyRules.read(properties, annotated.getIfAvailable(AnnotatedEndpoints::none));
  }

  /** The endpoint rules of {@link SluiceLimit} on Spring MVC handler methods. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnClass(name = "org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping")
  static class AnnotationConfiguration {

    @Bean
    AnnotatedEndpoints sluiceAnnotatedEndpoints(
        ObjectProvider<org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping> mappings,
        ObjectProvider<org.springframework.boot.autoconfigure.web.servlet.DispatcherServletPath> servletPath) {
      // the filter sees the path within the application: the DispatcherServlet's path, then the mapping's
      org.springframework.boot.autoconfigure.web.servlet.DispatcherServletPath path = servletPath.getIfUnique();
      return AnnotatedEndpoints.of(mappings.orderedStream().toList(), path == null ? "" : path.getPrefix());
    }
  }

  /** The endpoint rules of {@link SluiceLimit} on WebFlux handler methods. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
  @ConditionalOnClass(name = "org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping")
  static class ReactiveAnnotationConfiguration {

    @Bean
    AnnotatedEndpoints sluiceAnnotatedEndpoints(
        ObjectProvider<org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping> mappings) {
      return AnnotatedEndpoints.ofReactive(mappings.orderedStream().toList());
    }
  }

  /** {@code sluice.sync.*} over the library's defaults; a value it refuses names its property. */
  @Bean
  @ConditionalOnMissingBean
  public SyncConfig sluiceSyncConfig(SluiceProperties properties) {
    SluiceProperties.Sync sync = properties.getSync();
    try {
      SyncConfig.Builder b = SyncConfig.custom();
      if (sync.getNodeId() != null) {
        b.nodeId(sync.getNodeId());
      }
      if (sync.getBatchSize() != null) {
        b.batchSize(sync.getBatchSize());
      }
      if (sync.getBucketBatchSize() != null) {
        b.bucketBatchSize(sync.getBucketBatchSize());
      }
      if (sync.getSyncInterval() != null) {
        b.syncInterval(SluiceProperties.duration("syncInterval", sync.getSyncInterval()));
      }
      if (sync.getOnStoreFailure() != null) {
        b.onStoreFailure(sync.getOnStoreFailure());
      }
      if (sync.getMaxKeys() != null) {
        b.maxKeys(sync.getMaxKeys());
      }
      if (sync.getMinNodes() != null) {
        b.minNodes(sync.getMinNodes());
      }
      if (sync.getClaimTimeout() != null) {
        b.claimTimeout(SluiceProperties.duration("claimTimeout", sync.getClaimTimeout()));
      }
      if (sync.getFlushTimeout() != null) {
        b.flushTimeout(SluiceProperties.duration("flushTimeout", sync.getFlushTimeout()));
      }
      if (sync.getColdKeyAllowance() != null) {
        b.coldKeyAllowance(sync.getColdKeyAllowance());
      }
      if (sync.getAlignClock() != null) {
        b.alignClockToStore(sync.getAlignClock());
      }
      return b.build();
    } catch (IllegalArgumentException e) {
      throw SluiceConfigurationException.naming("sluice.sync", e);
    }
  }

  /**
   * Every limit of the rules shared through the store. Closed (so flushed) when the context closes,
   * before the store it was built on.
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public RequestLimiter sluiceRequestLimiter(RulesFile rulesFile, CounterStore store, SyncConfig config) {
    return RequestLimiter.builder(rulesFile.rules().orElseThrow(() -> new SluiceConfigurationException("sluice.rules",
            "no rules, so no limit applies to any request")))
        .limiters(limit -> {
          try {
            return SyncedLimiter.of(limit, store, config);
          } catch (IllegalArgumentException e) {
            // what depends on the limit (a sync interval at most half its window, ...): the setting is
            // named, and the limit it does not fit
            throw SluiceConfigurationException.naming("sluice.sync", e, Map.of(),
                " (for sluice.limits." + limit.name() + ")");
          }
        })
        .build();
  }

  /** Redis, when {@code sluice.store.redis-uri} is set. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(RedisCounterStore.class)
  @Conditional(RedisUri.class)
  static class RedisStoreConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    CounterStore sluiceCounterStore(SluiceProperties properties) {
      SluiceProperties.Store store = properties.getStore();
      RedisStoreConfig config;
      try {
        config = RedisStoreConfig.builder(store.getRedisUri())
            .keyPrefix(store.getKeyPrefix())
            .commandTimeout(SluiceProperties.duration("commandTimeout", store.getRedisCommandTimeout()))
            .evictionCheck(RedisStoreConfig.EvictionCheck.valueOf(store.getRedisEvictionCheck().name()))
            .cluster(store.isRedisCluster())
            .build();
      } catch (IllegalArgumentException e) {
        SluiceConfigurationException named = SluiceConfigurationException.naming("sluice.store", e,
            Map.of("uri", "redis-uri", "commandTimeout", "redis-command-timeout", "evictionCheck", "redis-eviction-check",
                "cluster", "redis-cluster"), "");
        throw withoutPassword(named, store.getRedisUri());
      }
      try {
        // (by default an application starts while its Redis is down, as it does with Spring Data Redis:
        // the failure policy decides until the store has connected, and the health indicator shows it)
        if (store.isRedisFailFast()) {
          return RedisCounterStore.connect(config);
        }
        RedisCounterStore background = RedisCounterStore.connectInBackground(config);
        try {
          // (a Redis that is there is connected before the first request, as with connect: the limits do
          // not start on their failure policy for the first moments of every start)
          background.awaitConnected(config.connectTimeout());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt(); // (the context is being stopped: the store closes with it)
        }
        return background;
      } catch (IllegalArgumentException e) {
        throw withoutPassword(new SluiceConfigurationException("sluice.store.redis-uri", e.getMessage(), e),
            store.getRedisUri());
      } catch (RuntimeException e) {
        throw new SluiceConfigurationException("sluice.store.redis-uri", "cannot connect to "
            + redacted(store.getRedisUri()) + ": " + e.getMessage(), e);
      }
    }

    /**
     * The exception with the URI's password masked in its message (the failure analyzer prints it); the
     * library's own exception, which repeats the URI, is left out of the chain then.
     */
    static SluiceConfigurationException withoutPassword(SluiceConfigurationException e, String uri) {
      String masked = redacted(uri);
      if (uri == null || masked.equals(uri) || !e.getMessage().contains(uri)) {
        return e;
      }
      String prefix = e.property() + ": ";
      return new SluiceConfigurationException(e.property(),
          e.getMessage().substring(prefix.length()).replace(uri, masked));
    }

    /** A Redis URI with the password of its user information masked: {@code redis://user:*****@host}. */
    static String redacted(String uri) {
      if (uri == null) {
        return null;
      }
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("^([A-Za-z][A-Za-z0-9+.-]*://)([^/@?#]*)@").matcher(uri);
      if (!m.find()) {
        return uri;
      }
      String userInfo = m.group(2);
      int colon = userInfo.indexOf(':');
      // redis://password@host names a password alone; redis://user:password@host both
      String kept = colon < 0 ? "*****" : userInfo.substring(0, colon) + ":*****";
      return m.group(1) + kept + "@" + uri.substring(m.end());
    }
  }

  /** The embedded Hazelcast member on loopback, when no Redis URI is set. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(HazelcastCounterStore.class)
  @Conditional(NoRedisUri.class)
  static class HazelcastStoreConfiguration {

    /**
     * The member, shut down by the context (after the store, so after the limiters flushed) rather than
     * by Hazelcast's JVM shutdown hook: JVM hooks run concurrently, and Hazelcast's would take the store
     * away while Spring's graceful shutdown still drains requests and before the limiters' last flush.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(CounterStore.class)
    EmbeddedHazelcastMember sluiceEmbeddedHazelcastMember(SluiceProperties properties,
        org.springframework.core.env.Environment environment) {
      SluiceProperties.Store store = properties.getStore();
      HazelcastCounterStore.Settings settings;
      try {
        settings = HazelcastCounterStore.Settings.builder()
            .clusterName(clusterName(store.getHazelcastClusterName(), environment.getProperty("spring.application.name")))
            .port(store.getHazelcastPort())
            .mapPrefix(store.getKeyPrefix())
            .build();
      } catch (IllegalArgumentException e) {
        throw SluiceConfigurationException.naming("sluice.store", e,
            Map.of("clusterName", "hazelcast-cluster-name", "port", "hazelcast-port", "mapPrefix", "key-prefix"), "");
      }
      com.hazelcast.config.Config config = HazelcastCounterStore.memberConfig(settings);
      config.setProperty("hazelcast.shutdownhook.enabled", "false");
      if (System.getProperty("hazelcast.logging.type") == null) {
        // into the application's log through SLF4J, as Spring Boot's own Hazelcast auto-configuration
        // does (logging.level.com.hazelcast sets how much; Hazelcast does not look for SLF4J itself)
        config.setProperty("hazelcast.logging.type", "slf4j");
      }
      return new EmbeddedHazelcastMember(com.hazelcast.core.Hazelcast.newHazelcastInstance(config), settings);
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    CounterStore sluiceCounterStore(EmbeddedHazelcastMember member) {
      return HazelcastCounterStore.of(member.instance(), member.settings());
    }
  }

  /**
   * The embedded member's cluster name: the one set, else one per application (two applications on one
   * machine, each with a limit named "api", would otherwise join one cluster and spend each other's
   * budgets), else "sluice".
   */
  static String clusterName(String set, String applicationName) {
    if (set != null) {
      return set; // (blank: refused by the settings, with the property's name)
    }
    return applicationName == null || applicationName.isBlank() ? "sluice" : "sluice-" + applicationName.strip();
  }

  /** The embedded Hazelcast member of the store (not a {@code HazelcastInstance} bean: the application's own stay its own). */
  record EmbeddedHazelcastMember(com.hazelcast.core.HazelcastInstance instance, HazelcastCounterStore.Settings settings)
      implements AutoCloseable {
    @Override
    public void close() {
      if (instance.getLifecycleService().isRunning()) {
        instance.shutdown();
      }
    }
  }

  /** A {@code sluice.store.redis-uri} that is not blank ({@code ${SLUICE_REDIS:}} left empty is none). */
  static class RedisUri extends SpringBootCondition {
    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
      String uri = context.getEnvironment().getProperty("sluice.store.redis-uri");
      return uri == null || uri.isBlank()
          ? ConditionOutcome.noMatch("no sluice.store.redis-uri: the embedded Hazelcast store")
          : ConditionOutcome.match("sluice.store.redis-uri is set: the Redis store");
    }
  }

  /** No {@code sluice.store.redis-uri}, or a blank one. */
  static class NoRedisUri extends SpringBootCondition {
    private final RedisUri redisUri = new RedisUri();

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
      ConditionOutcome redis = redisUri.getMatchOutcome(context, metadata);
      return new ConditionOutcome(!redis.isMatch(), redis.getConditionMessage());
    }
  }

  /** Sluice's meters on the application's registry (Actuator binds MeterBinder beans to it). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  @ConditionalOnBean(MeterRegistry.class)
  static class MetricsConfiguration {

    @Bean
    MeterBinder sluiceSyncedLimiterMetrics(RequestLimiter limiter) {
      return new SyncedLimiterMetrics(synced(limiter));
    }

    @Bean
    MeterBinder sluiceRateLimiterMetrics(RequestLimiter limiter) {
      return RateLimiterMetrics.of(limiter);
    }
  }

  /**
   * {@code /actuator/health}'s {@code sluice} component, when Actuator is on the classpath. (Two levels:
   * the condition of {@code management.health.sluice.enabled} is Actuator's own class, which may only be
   * loaded once Actuator is known to be there.)
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"org.springframework.boot.actuate.health.HealthIndicator",
      "org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator"})
  static class HealthConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnEnabledHealthIndicator("sluice")
    static class EnabledHealthConfiguration {

      @Bean
      @ConditionalOnMissingBean(name = "sluiceHealthIndicator")
      SluiceHealthIndicator sluiceHealthIndicator(ObjectProvider<CounterStore> store, RequestLimiter limiter) {
        return new SluiceHealthIndicator(store.getIfAvailable(), limiter);
      }
    }
  }

  /** The filter in front of the application, on servlet web applications. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnClass({jakarta.servlet.Filter.class, FilterRegistrationBean.class})
  @ConditionalOnProperty(prefix = "sluice.filter", name = "enabled", havingValue = "true", matchIfMissing = true)
  static class ServletFilterConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "sluiceFilterRegistration")
    FilterRegistrationBean<RateLimitFilter> sluiceFilterRegistration(SluiceProperties properties,
        RequestLimiter limiter, ObjectProvider<PlanResolver> planResolver,
        ObjectProvider<SluiceFilterCustomizer> customizers, ObjectProvider<RulesFile> rulesFile) {
      SluiceProperties.Filter filter = properties.getFilter();
      RateLimitFilterConfig.Builder b = RateLimitFilterConfig.builder(limiter);
      try {
        b.apiKeyHeader(filter.getApiKeyHeader())
            .trustedProxies(filter.getTrustedProxies())
            .ipv6PrefixLength(filter.getIpv6PrefixLength())
            .maxKeyLength(filter.getMaxKeyLength());
      } catch (IllegalArgumentException e) {
        throw SluiceConfigurationException.naming("sluice.filter", e);
      }
      if (filter.getPlanHeader() != null) {
        try {
          b.planResolver(PlanResolver.header(filter.getPlanHeader()));
        } catch (IllegalArgumentException e) {
          throw new SluiceConfigurationException("sluice.filter.plan-header", "must not be blank", e);
        }
      }
      PlanResolver resolver = planResolver.getIfUnique();
      if (resolver != null) {
        b.planResolver(resolver);
      }
      for (Map.Entry<String, String> identity : filter.getIdentityHeaders().entrySet()) {
        String header = identity.getValue();
        try {
          b.identity(identity.getKey(), request -> request.getHeader(header));
        } catch (IllegalArgumentException e) {
          throw new SluiceConfigurationException("sluice.filter.identity-headers." + identity.getKey(),
              e.getMessage().replaceFirst("^identity: ", ""), e);
        }
      }
      List<SluiceFilterCustomizer> custom = customizers.orderedStream().toList();
      custom.forEach(c -> c.customize(b));
      if (custom.isEmpty()) {
        checkIdentities(properties, rulesFile.getIfAvailable(), " (more through sluice.filter.identity-headers or a"
            + " SluiceFilterCustomizer bean)");
      }
      FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(new RateLimitFilter(b.build()));
      registration.setName("sluiceRateLimitFilter");
      registration.setOrder(filter.getOrder());
      registration.setUrlPatterns(filter.getUrlPatterns());
      return registration;
    }
  }

  /**
   * The WebFlux filter in front of the application, on reactive web applications: the same rules,
   * identities and answers as the servlet filter, decided without blocking the event loop.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
  @ConditionalOnClass(name = "org.springframework.web.server.WebFilter")
  @ConditionalOnProperty(prefix = "sluice.filter", name = "enabled", havingValue = "true", matchIfMissing = true)
  static class ReactiveFilterConfiguration {

    @Bean
    @ConditionalOnMissingBean
    SluiceWebFilter sluiceWebFilter(SluiceProperties properties, RequestLimiter limiter,
        ObjectProvider<RulesFile> rulesFile) {
      SluiceProperties.Filter filter = properties.getFilter();
      try {
        io.sluice.http.ClientAddresses.of(filter.getTrustedProxies(), filter.getIpv6PrefixLength());
      } catch (IllegalArgumentException e) {
        throw SluiceConfigurationException.naming("sluice.filter", e);
      }
      if (filter.getMaxKeyLength() < 1) {
        throw new SluiceConfigurationException("sluice.filter.max-key-length", "must be positive, got "
            + filter.getMaxKeyLength());
      }
      if (filter.getPlanHeader() != null && filter.getPlanHeader().isBlank()) {
        throw new SluiceConfigurationException("sluice.filter.plan-header", "must not be blank");
      }
      checkIdentities(properties, rulesFile.getIfAvailable(), " (more through sluice.filter.identity-headers)");
      return new SluiceWebFilter(limiter, filter);
    }
  }

  /** A rule keyed by an identity the filter never reads would never count: said at startup. */
  static void checkIdentities(SluiceProperties properties, RulesFile file, String more) {
    if (file == null) {
      return;
    }
    Set<String> known = new LinkedHashSet<>(List.of(RateLimitFilter.API_KEY, RateLimitFilter.USER,
        RateLimitFilter.IP, RateLimitFilter.CLIENT));
    known.addAll(properties.getFilter().getIdentityHeaders().keySet());
    for (String identity : file.identities()) {
      if (!known.contains(identity)) {
        throw new SluiceConfigurationException(properties.getRulesFile() != null ? "sluice.rules-file"
            : "sluice.rules", "no request has identity \"" + identity + "\": the filter reads " + known + more);
      }
    }
  }

  static List<SyncedLimiter> synced(RequestLimiter limiter) {
    return limiter.limiters().stream().filter(SyncedLimiter.class::isInstance).map(SyncedLimiter.class::cast).toList();
  }

}
