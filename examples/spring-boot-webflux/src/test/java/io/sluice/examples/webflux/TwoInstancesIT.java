package io.sluice.examples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.sync.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The example as deployed twice: a real redis-server on a free loopback port, two instances of the app
 * in this JVM (each its own Reactor Netty server on a free port, its own node id and its own Redis connection), driven
 * over real HTTP in turn. Together they admit the limit of one API key once, not once each.
 */
class TwoInstancesIT {
  static final ObjectMapper JSON = new ObjectMapper();
  static RedisServer redis;
  static ConfigurableApplicationContext a;
  static ConfigurableApplicationContext b;
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeAll
  static void start() {
    redis = RedisServer.start();
    a = instance("node-a");
    b = instance("node-b");
  }

  static ConfigurableApplicationContext instance(String nodeId) {
    // the application.yml as written; only the port, the Redis and the node id come from outside, as
    // PORT, SLUICE_REDIS and SLUICE_NODE_ID would
    return new SpringApplicationBuilder(ExampleApplication.class)
        .run("--server.port=0", "--sluice.store.redis-uri=" + redis.uri(), "--sluice.sync.node-id=" + nodeId);
  }

  @AfterAll
  static void stop() {
    if (a != null) {
      a.close();
    }
    if (b != null) {
      b.close();
    }
    if (redis != null) {
      redis.close();
    }
  }

  static int port(ConfigurableApplicationContext context) {
    return ((WebServerApplicationContext) context).getWebServer().getPort();
  }

  HttpResponse<String> get(ConfigurableApplicationContext instance, String path, String apiKey) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(instance) + path))
        .timeout(Duration.ofSeconds(10)).GET();
    if (apiKey != null) {
      request.header("X-API-Key", apiKey);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void twoInstancesTogetherAdmitTheLimitOnceAndAnswerTheRestWith429() throws Exception {
    // 5 a minute: keep the run inside one minute, so that the sliding window's previous minute is empty
    // and the limit is plainly 5 (a run across a minute's edge would meet a window with a past)
    long second = Instant.now().getEpochSecond() % 60;
    if (second > 45) {
      Thread.sleep((61 - second) * 1000);
    }
    String key = "it-" + UUID.randomUUID();
    int[] allowed = new int[2];
    List<HttpResponse<String>> denied = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      int which = i % 2;
      HttpResponse<String> response = get(which == 0 ? a : b, "/hello", key);
      if (response.statusCode() == 200) {
        allowed[which]++;
        assertThat(response.body()).contains(key);
        assertThat(response.headers().firstValue("RateLimit")).isPresent();
        assertThat(response.headers().firstValue("Retry-After")).isEmpty();
      } else {
        assertThat(response.statusCode()).as("status of request %d", i).isEqualTo(429);
        denied.add(response);
      }
    }
    assertThat(allowed[0] + allowed[1]).as("admitted by both instances together").isEqualTo(5);
    assertThat(allowed[0]).as("admitted by node-a").isPositive();
    assertThat(allowed[1]).as("admitted by node-b").isPositive();
    assertThat(denied).hasSize(7);
    for (HttpResponse<String> response : denied) {
      long retryAfter = Long.parseLong(response.headers().firstValue("Retry-After").orElseThrow());
      // a sliding window: the next permit frees once the 5 of this minute weigh less than 4 in the next,
      // a fifth of the way into it, so at most 60 + 12 s away
      assertThat(retryAfter).isBetween(1L, 72L);
      assertThat(response.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api\"").contains("q=5")
          .contains("w=60");
      assertThat(response.headers().firstValue("RateLimit").orElseThrow()).contains("\"api\"").contains("r=0");
      assertThat(response.headers().firstValue("X-RateLimit-Remaining")).contains("0");
    }
    // another key, and the path without the per-key rule, are not held back
    assertThat(get(b, "/hello", "other-" + key).statusCode()).isEqualTo(200);
  }

  @Test
  void theAnnotatedMethodsLimitIsSharedToo() throws Exception {
    long second = Instant.now().getEpochSecond() % 60;
    if (second > 45) {
      Thread.sleep((61 - second) * 1000);
    }
    String key = "orders-" + UUID.randomUUID();
    int allowed = 0;
    for (int i = 0; i < 6; i++) {
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(i % 2 == 0 ? a : b) + "/orders"))
          .timeout(Duration.ofSeconds(10)).header("X-API-Key", key).POST(HttpRequest.BodyPublishers.noBody()).build();
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() == 200) {
        allowed++;
      } else {
        assertThat(response.statusCode()).isEqualTo(429);
        assertThat(response.headers().firstValue("RateLimit").orElseThrow()).contains("\"orders\"");
      }
    }
    assertThat(allowed).as("orders admitted by both instances together").isEqualTo(3);
  }

  @Test
  void theAsyncApisLimitIsSharedToo() throws Exception {
    long second = Instant.now().getEpochSecond() % 60;
    if (second > 45) {
      Thread.sleep((61 - second) * 1000);
    }
    String key = "exports-" + UUID.randomUUID();
    int allowed = 0;
    for (int i = 0; i < 5; i++) {
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(i % 2 == 0 ? a : b) + "/exports"))
          .timeout(Duration.ofSeconds(10)).header("X-API-Key", key).POST(HttpRequest.BodyPublishers.noBody()).build();
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() == 200) {
        allowed++;
        assertThat(response.body()).contains("started");
      } else {
        assertThat(response.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(response.headers().firstValue("Retry-After").orElseThrow())).isBetween(1L, 60L);
      }
    }
    assertThat(allowed).as("exports admitted by both instances together (acquireAsync)").isEqualTo(2);
  }

  @Test
  void healthShowsTheRedisStoreAndBothNodes() throws Exception {
    JsonNode sluice = null;
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    for (int round = 0; System.nanoTime() < deadline; round++) {
      // the registry counts the nodes that call the store: an instance left idle since the other tests
      // stops beating and drops out after the beat's time to live (a request on a key new to it asks the
      // store, and its beat rides on that call)
      get(b, "/hello", "health-" + round + "-" + System.nanoTime());
      HttpResponse<String> response = get(a, "/actuator/health", null);
      assertThat(response.statusCode()).isEqualTo(200);
      sluice = JSON.readTree(response.body()).path("components").path("sluice");
      if (sluice.path("details").path("nodes").asInt() == 2) {
        break;
      }
      Thread.sleep(200);
    }
    assertThat(sluice.path("status").asText()).isEqualTo("UP");
    JsonNode details = sluice.path("details");
    assertThat(details.path("store").asText()).isEqualTo("RedisCounterStore");
    assertThat(details.path("reachable").asBoolean()).isTrue();
    assertThat(details.path("nodes").asInt()).as("nodes alive in the store's registry").isEqualTo(2);
    assertThat(details.path("limits").path("api").path("breaker").asText()).isEqualTo("CLOSED");
  }
}
