package io.sluice.examples.springboot;

import io.sluice.spring.SluiceLimit;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring Boot service whose only rate limiting is the starter, {@code application.yml} and one
 * annotation: 5 requests a minute per API key on {@code GET /hello} (a rule in the YAML), 3 orders a
 * minute per API key on {@code POST /orders} ({@link SluiceLimit} on the method), 100 a minute per
 * client address on everything, shared through Redis ({@code SLUICE_REDIS}) by every instance.
 */
@SpringBootApplication
public class ExampleApplication {

  public static void main(String[] args) {
    SpringApplication.run(ExampleApplication.class, args);
  }

  @RestController
  static class HelloController {
    @GetMapping("/hello")
    Map<String, String> hello(@RequestHeader(name = "X-API-Key", required = false) String apiKey) {
      return Map.of("hello", apiKey == null ? "anonymous" : apiKey);
    }

    @SluiceLimit(value = "orders", by = "api-key")
    @PostMapping("/orders")
    Map<String, String> order() {
      return Map.of("order", "accepted");
    }
  }
}
