package io.sluice.examples.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Outcome;
import io.sluice.node.RateLimiter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The example service as a client sees it. */
class ExampleServiceTest {
  private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  private static HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
    return CLIENT.send(b.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void plansEndpointsAndShadowLimitsBehaveAsConfigured() throws Exception {
    try (ExampleService service = ExampleService.start(0)) {
      URI hello = service.uri().resolve("/api/hello");
      for (int i = 0; i < 10; i++) {
        HttpResponse<String> r = send(HttpRequest.newBuilder(hello).header("X-API-Key", "free-1"));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("RateLimit-Policy")).isPresent();
      }
      HttpResponse<String> denied = send(HttpRequest.newBuilder(hello).header("X-API-Key", "free-1"));
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(denied.headers().firstValue("Retry-After")).isPresent();
      assertThat(denied.headers().firstValue("X-RateLimit-Limit")).hasValue("10");

      // the pro plan has room; the shadow search limit (2) is passed and never enforced
      for (int i = 0; i < 5; i++) {
        assertThat(send(HttpRequest.newBuilder(service.uri().resolve("/api/search/books")).header("X-API-Key", "pro-1"))
            .statusCode()).isEqualTo(200);
      }
      RateLimiter dryRun = (RateLimiter) service.requestLimiter().limiters().stream()
          .filter(l -> l.limit().name().equals("search-dry-run")).findFirst().orElseThrow();
      assertThat(dryRun.decisions(Outcome.SHADOW_DENIED)).isEqualTo(3);

      // five logins per address, then 429 by the login limit
      URI login = service.uri().resolve("/login");
      for (int i = 0; i < 5; i++) {
        assertThat(send(HttpRequest.newBuilder(login).POST(HttpRequest.BodyPublishers.noBody())).statusCode())
            .isEqualTo(200);
      }
      HttpResponse<String> tooMany = send(HttpRequest.newBuilder(login).POST(HttpRequest.BodyPublishers.noBody()));
      assertThat(tooMany.statusCode()).isEqualTo(429);
      assertThat(tooMany.body()).contains("\"limit\":\"login\"");
    }
  }
}
