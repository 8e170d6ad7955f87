package io.sluice.benchmarks.boot;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Bucket4j set up the way its Spring Boot starter (com.giffing.bucket4j.spring.boot.starter) sets it
 * up, written by hand because that starter is not in this machine's Maven repository: a filter that
 * takes one token per request from a bucket kept in Redis by {@code LettuceBasedProxyManager}
 * (compare-and-swap, no local optimization), keyed by the {@code X-API-Key} header (else the client
 * address) as the Sluice runs key theirs; on success it adds {@code X-Rate-Limit-Remaining}, on
 * failure it answers 429 with {@code X-Rate-Limit-Retry-After-Seconds} and a short JSON body, as the
 * starter does. A servlet {@code Filter} on servlet apps (the blocking bucket), a {@code WebFilter}
 * on reactive ones (the asynchronous bucket: no event-loop thread waits for Redis).
 *
 * <p>Limits, the same as the Sluice runs': {@code /api/tight} {@code bench.tight-limit} tokens per hour
 * (refilled whole every hour), everything else {@code bench.limit} tokens per minute (greedy refill).
 */
@Configuration(proxyBeanMethods = false)
public class Bucket4jFilters {
  static final String DENIED_BODY = "{ \"message\": \"Too many requests!\" }";

  /** The Lettuce client, the connection and the proxy manager, closed with the context. */
  static final class Buckets implements AutoCloseable {
    final RedisClient client;
    final StatefulRedisConnection<String, byte[]> connection;
    final LettuceBasedProxyManager<String> manager;
    final BucketConfiguration open;
    final BucketConfiguration tight;

    Buckets(String redisUri, long limit, long tightLimit) {
      client = RedisClient.create(redisUri);
      connection = client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
      manager = Bucket4jLettuce.casBasedBuilder(connection)
          .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
          .build();
      open = BucketConfiguration.builder()
          .addLimit(Bandwidth.builder().capacity(limit).refillGreedy(limit, Duration.ofMinutes(1)).build()).build();
      tight = BucketConfiguration.builder()
          .addLimit(Bandwidth.builder().capacity(tightLimit).refillIntervally(tightLimit, Duration.ofHours(1)).build())
          .build();
    }

    BucketConfiguration configFor(String path) {
      return path.startsWith("/api/tight") ? tight : open;
    }

    static String key(String path, String apiKey, String address) {
      return "bucket4j:" + (path.startsWith("/api/tight") ? "tight:" : "api:") + (apiKey != null ? apiKey : address);
    }

    @Override
    public void close() {
      connection.close();
      client.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }

  @Bean(destroyMethod = "close")
  Buckets bucket4jBuckets(@Value("${bench.redis-uri}") String redisUri, @Value("${bench.limit}") long limit,
      @Value("${bench.tight-limit}") long tightLimit) {
    return new Buckets(redisUri, limit, tightLimit);
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  static class Servlet {
    @Bean
    FilterRegistrationBean<OncePerRequestFilter> bucket4jFilter(Buckets buckets) {
      OncePerRequestFilter filter = new OncePerRequestFilter() {
        @Override
        protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
          String path = request.getRequestURI();
          String key = Buckets.key(path, request.getHeader("X-API-Key"), request.getRemoteAddr());
          ConsumptionProbe probe = buckets.manager.builder().build(key, buckets.configFor(path))
              .tryConsumeAndReturnRemaining(1);
          if (probe.isConsumed()) {
            response.setHeader("X-Rate-Limit-Remaining", Long.toString(probe.getRemainingTokens()));
            chain.doFilter(request, response);
          } else {
            response.setStatus(429);
            response.setHeader("X-Rate-Limit-Retry-After-Seconds",
                Long.toString(TimeUnit.NANOSECONDS.toSeconds(probe.getNanosToWaitForRefill())));
            response.setContentType("application/json");
            response.getWriter().write(DENIED_BODY);
          }
        }
      };
      FilterRegistrationBean<OncePerRequestFilter> registration = new FilterRegistrationBean<>(filter);
      registration.addUrlPatterns("/*");
      registration.setOrder(Ordered.HIGHEST_PRECEDENCE + 10);
      return registration;
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
  static class Reactive {
    @Bean
    WebFilter bucket4jWebFilter(Buckets buckets) {
      AsyncProxyManager<String> async = buckets.manager.asAsync();
      return (ServerWebExchange exchange, WebFilterChain chain) -> {
        ServerHttpRequest request = exchange.getRequest();
        String path = request.getPath().value();
        String address = request.getRemoteAddress() == null ? "unknown"
            : request.getRemoteAddress().getAddress().getHostAddress();
        String key = Buckets.key(path, request.getHeaders().getFirst("X-API-Key"), address);
        return Mono.fromFuture(async.builder().build(key, buckets.configFor(path)).tryConsumeAndReturnRemaining(1))
            .flatMap(probe -> {
              if (probe.isConsumed()) {
                exchange.getResponse().getHeaders().set("X-Rate-Limit-Remaining", Long.toString(probe.getRemainingTokens()));
                return chain.filter(exchange);
              }
              exchange.getResponse().setStatusCode(HttpStatus.TOO_MANY_REQUESTS);
              exchange.getResponse().getHeaders().set("X-Rate-Limit-Retry-After-Seconds",
                  Long.toString(TimeUnit.NANOSECONDS.toSeconds(probe.getNanosToWaitForRefill())));
              exchange.getResponse().getHeaders().set("Content-Type", "application/json");
              return exchange.getResponse().writeWith(Mono.just(
                  exchange.getResponse().bufferFactory().wrap(DENIED_BODY.getBytes(StandardCharsets.UTF_8))));
            });
      };
    }
  }
}
