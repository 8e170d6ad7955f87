package example.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The application as its users reach it, over HTTP, on the embedded Hazelcast store the starter starts. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ConsumerApplicationTest {

  /** A member of its own: a free port, and a cluster name no other Hazelcast member on this machine has. */
  @DynamicPropertySource
  static void store(DynamicPropertyRegistry registry) throws IOException {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    registry.add("sluice.store.hazelcast-port", () -> port);
    registry.add("sluice.store.hazelcast-cluster-name", () -> "consumer-" + UUID.randomUUID());
  }

  @LocalServerPort
  int port;

  private final HttpClient http = HttpClient.newHttpClient();

  private HttpResponse<String> get(String path, String apiKey) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
    if (apiKey != null) {
      request.header("X-API-Key", apiKey);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theLimitOfApplicationYmlHoldsPerApiKey() throws Exception {
    assertThat(get("/hello", "k1").statusCode()).isEqualTo(200);
    HttpResponse<String> second = get("/hello", "k1");
    assertThat(second.statusCode()).isEqualTo(200);
    assertThat(second.headers().firstValue("RateLimit-Policy")).isPresent();

    HttpResponse<String> third = get("/hello", "k1");
    assertThat(third.statusCode()).isEqualTo(429);
    assertThat(third.headers().firstValue("Retry-After")).isPresent();

    assertThat(get("/hello", "k2").statusCode()).as("another key has its own limit").isEqualTo(200);
  }

  @Test
  void healthShowsTheStore() throws Exception {
    HttpResponse<String> health = get("/actuator/health", null);
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(health.body()).contains("\"sluice\"").contains("\"status\":\"UP\"");
  }

  /**
   * sluice-bom is imported before Spring Boot's BOM, so the versions Sluice is tested with win: Spring Boot
   * 3.5's alone gives Netty 4.1 (on which Lettuce 7 cannot connect), Hazelcast 5.5 and Micrometer 1.15. The
   * expected versions come from the build that runs this project ({@code -Dexpected.*}).
   */
  @Test
  void sluiceBomsVersionsWinOverSpringBoots() {
    assertThat(io.netty.util.Version.identify().get("netty-common").artifactVersion())
        .isEqualTo(System.getProperty("expected.netty.version"));
    assertThat(com.hazelcast.instance.BuildInfoProvider.getBuildInfo().getVersion())
        .isEqualTo(System.getProperty("expected.hazelcast.version"));
    assertThat(io.micrometer.core.instrument.MeterRegistry.class.getPackage().getImplementationVersion())
        .isEqualTo(System.getProperty("expected.micrometer.version"));
  }
}
