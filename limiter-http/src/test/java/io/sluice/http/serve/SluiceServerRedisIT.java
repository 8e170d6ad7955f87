package io.sluice.http.serve;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.sluice.http.Http;
import io.sluice.sync.RedisServer;
import io.sluice.sync.StoreKeys;
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
}
