package io.sluice.sidecar;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.sluice.http.Http;
import io.sluice.node.LimitSpec;
import io.sluice.sync.RedisServer;
import io.sluice.sync.spi.StoreKeys;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The sidecar against a real redis-server (limiter-sync's fixture), in exact and batched modes. */
class SluiceServerRedisIT {

  @Test
  void exactModeAdmitsTheLimitAndNoMoreAndWritesTheLibrarysKeys() {
    try (RedisServer redis = RedisServer.start();
         SluiceServer server = SluiceServer.start(ServeConfig.builder().port(0).redis(redis.uri()).batchSize(1)
             .nodeId("sidecar-1").limit(LimitSpec.parse("api=5/1h")).limit(LimitSpec.parse("login=2/1h,fixed-window"))
             .build())) {
      for (int i = 0; i < 5; i++) {
        HttpResponse<String> r = Http.post(server.uri().resolve("/check"), "{\"key\":\"user-1\",\"limit\":\"api\"}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(FlatJson.parse(r.body())).containsEntry("remaining", (long) (4 - i));
        assertThat(Http.rateLimit(r).params).containsEntry("r", (long) (4 - i));
      }
      HttpResponse<String> denied = Http.post(server.uri().resolve("/check"), "{\"key\":\"user-1\",\"limit\":\"api\"}");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(Http.longField(denied, "Retry-After")).isPositive();
      assertThat(Http.policies(denied).get(0).params).containsEntry("q", 5L).containsEntry("w", 3600L);

      assertThat(Http.post(server.uri().resolve("/check"), "{\"key\":\"user-1\",\"limit\":\"login\",\"cost\":2}")
          .statusCode()).isEqualTo(200);
      assertThat(Http.post(server.uri().resolve("/check"), "{\"key\":\"user-1\",\"limit\":\"login\"}")
          .statusCode()).isEqualTo(429);

      HttpResponse<String> health = Http.get(server.uri().resolve("/health"));
      assertThat(FlatJson.parse(health.body())).containsEntry("status", "UP").containsEntry("store", "redis");

      RedisClient client = RedisClient.create(redis.uri());
      try (StatefulRedisConnection<String, String> c = client.connect()) {
        List<String> keys = c.sync().keys("*");
        // the same keys a library node of these limits uses: sidecars and JVM services can share them
        assertThat(keys).contains(new String(StoreKeys.counterKey("sluice", "api", "user-1"), StandardCharsets.UTF_8),
            new String(StoreKeys.counterKey("sluice", "login", "user-1"), StandardCharsets.UTF_8));
      } finally {
        client.shutdown();
      }
    }
  }

  @Test
  void batchedModeNeverAdmitsMoreThanTheLimitOnOneNode() throws Exception {
    try (RedisServer redis = RedisServer.start();
         SluiceServer server = SluiceServer.start(ServeConfig.builder().port(0).redis(redis.uri())
             .limit(LimitSpec.parse("api=20/1h")).build())) {
      int allowed = 0;
      for (int i = 0; i < 60; i++) {
        HttpResponse<String> r = Http.post(server.uri().resolve("/check"), "{\"key\":\"hot\"}");
        assertThat(r.statusCode()).isIn(200, 429);
        if (r.statusCode() == 200) {
          allowed++;
        }
        Thread.sleep(5);
      }
      assertThat(allowed).isBetween(1, 20);
      String metrics = Http.get(server.uri().resolve("/metrics")).body();
      assertThat(metrics).containsPattern("(?m)^sluice_sync_store_calls_total\\{limit=\"api\"} [1-9]");
      Map<String, Object> health = FlatJson.parse(Http.get(server.uri().resolve("/health")).body());
      assertThat(health).containsEntry("store", "redis");
    }
  }

  /**
   * The README's rules file, in two sidecars on one Redis: checks carry identities, plan, method and
   * path; every limit that applies is shared by both sidecars (the login window, batched; the free
   * tier's token bucket, exact), and the answer lists each limit's part.
   */
  @Test
  void twoSidecarsShareTheRulesOfOneFile(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    java.nio.file.Path file = dir.resolve("rules.conf");
    java.nio.file.Files.writeString(file, String.join("\n",
        "per-ip   = 1000/1m",
        "free     = 1/1s, token-bucket, burst=60",
        "pro      = 10/1s, token-bucket, burst=600",
        "login    = 5/15m, fixed-window",
        "new-rule = 100/1m, shadow",
        "always                per-ip by ip, new-rule by api-key",
        "plan free default     free by api-key",
        "plan pro              pro by api-key",
        "endpoint POST /login  login by ip", ""));
    try (RedisServer redis = RedisServer.start();
         SluiceServer a = SluiceServer.start(ServeConfig.builder().port(0).redis(redis.uri())
             .limitsFile(io.sluice.node.RulesFile.read(file)).nodeId("side-a").build());
         SluiceServer b = SluiceServer.start(ServeConfig.builder().port(0).redis(redis.uri())
             .limitsFile(io.sluice.node.RulesFile.read(file)).nodeId("side-b").build())) {
      String proLogin = "{\"identities\":{\"ip\":\"10.0.0.7\",\"api-key\":\"pro-1\"},\"plan\":\"pro\","
          + "\"method\":\"POST\",\"path\":\"/login\"}";
      int allowed = 0;
      HttpResponse<String> last = null;
      for (int i = 0; i < 8; i++) {
        last = Http.post((i % 2 == 0 ? a : b).uri().resolve("/check"), proLogin);
        assertThat(last.statusCode()).as(last.body()).isIn(200, 429);
        allowed += last.statusCode() == 200 ? 1 : 0;
      }
      assertThat(allowed).as("login: 5 per 15 minutes over both sidecars").isEqualTo(5);
      assertThat(FlatJson.parse(last.body())).containsEntry("allowed", false).containsEntry("limit", "login");
      // every limit of the request, in the rules' order
      assertThat(last.body()).containsPattern("\"limits\":\\[\\{\"allowed\":true,\"outcome\":\"allowed\",\"limit\":\"per-ip\"")
          .contains("\"limit\":\"new-rule\"").contains("\"limit\":\"pro\"");
      assertThat(Http.longField(last, "Retry-After")).isPositive();

      // the free tier (the default plan): one bucket of 60 over both sidecars
      long started = System.nanoTime();
      String freeCall = "{\"identities\":{\"ip\":\"10.0.0.8\",\"api-key\":\"free-1\"}}";
      int freeAllowed = 0;
      for (int i = 0; i < 80; i++) {
        freeAllowed += Http.post((i % 2 == 0 ? a : b).uri().resolve("/check"), freeCall).statusCode() == 200 ? 1 : 0;
      }
      long refilled = java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started) + 1;
      assertThat(freeAllowed).as("free: 60 of burst (two in-process buckets would allow 80)")
          .isBetween(60, (int) (60 + refilled));

      // nothing applies without the identities the rules key by: allowed, and said so
      HttpResponse<String> anonymous = Http.post(a.uri().resolve("/check"), "{\"path\":\"/items\"}");
      assertThat(anonymous.statusCode()).isEqualTo(200);
      assertThat(FlatJson.parse(anonymous.body())).containsEntry("allowed", true).containsEntry("limit", null);
      HttpResponse<String> misspelt = Http.post(a.uri().resolve("/check"), "{\"identities\":{\"apiKey\":\"k\"}}");
      assertThat(misspelt.statusCode()).isEqualTo(400);
      assertThat(FlatJson.parse(misspelt.body())).containsEntry("field", "identities.apiKey");
      // a cost above a limit that applies, and one limit checked by name beside the rules
      HttpResponse<String> tooDear = Http.post(a.uri().resolve("/check"),
          "{\"identities\":{\"ip\":\"10.0.0.9\",\"api-key\":\"k\"},\"cost\":61}");
      assertThat(tooDear.statusCode()).as(tooDear.body()).isEqualTo(400);
      assertThat(FlatJson.parse(tooDear.body())).containsEntry("field", "cost");
      assertThat(Http.post(b.uri().resolve("/check"), "{\"key\":\"10.0.0.7\",\"limit\":\"login\"}").statusCode())
          .as("the login key spent through the rules is the same key checked by name").isEqualTo(429);
    }
  }
}
