package io.sluice.examples.webflux;

import io.sluice.node.Limit;
import io.sluice.spring.SluiceLimit;
import io.sluice.sync.SyncConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.CounterStore;
import java.time.Duration;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * A Spring Boot WebFlux service whose rate limiting is the starter's {@code WebFilter}, {@code
 * application.yml} and one annotation, as the servlet example's (5 requests a minute per API key on
 * {@code GET /hello}, 3 orders a minute per API key on {@code POST /orders}, 100 a minute per client
 * address), plus one limit a handler decides itself through the non-blocking API: 2 exports a minute
 * per API key on {@code POST /exports}. Every limit is shared through Redis ({@code SLUICE_REDIS}) by
 * every instance, and no event-loop thread waits for Redis.
 */
@SpringBootApplication
public class ExampleApplication {

  public static void main(String[] args) {
    SpringApplication.run(ExampleApplication.class, args);
  }

  // README: async (begin)
  /** A limit of the application's own, on the starter's store and sync settings; closed (flushed) with the context. */
  @Bean(destroyMethod = "close")
  SyncedLimiter exports(CounterStore store, SyncConfig config) {
    return SyncedLimiter.of(Limit.fixedWindow("exports").limit(2).window(Duration.ofMinutes(1)).build(), store, config);
  }

  @RestController
  static class ExportController {
    private final SyncedLimiter exports;

    ExportController(SyncedLimiter exports) {
      this.exports = exports;
    }

    @PostMapping("/exports")
    Mono<ResponseEntity<Map<String, String>>> export(@RequestHeader("X-API-Key") String apiKey) {
      // acquireAsync never blocks the event loop: decided at once from what the node holds, or when Redis answers
      return Mono.fromCompletionStage(exports.acquireAsync(apiKey, 1)).map(d -> d.allowed()
          ? ResponseEntity.ok(Map.of("export", "started"))
          : ResponseEntity.status(429).header("Retry-After", Long.toString(Math.max(1, d.retryAfterSeconds())))
              .body(Map.of("export", "try later")));
    }
  }
  // README: async (end)

  @RestController
  static class HelloController {
    @GetMapping("/hello")
    Mono<Map<String, String>> hello(@RequestHeader(name = "X-API-Key", required = false) String apiKey) {
      return Mono.just(Map.of("hello", apiKey == null ? "anonymous" : apiKey));
    }

    @SluiceLimit(value = "orders", by = "api-key")
    @PostMapping("/orders")
    Mono<Map<String, String>> order() {
      return Mono.just(Map.of("order", "accepted"));
    }
  }
}
