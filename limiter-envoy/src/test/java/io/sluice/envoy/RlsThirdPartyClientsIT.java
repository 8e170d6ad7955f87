package io.sluice.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.sluice.sync.RedisServer;
import io.sluice.sync.SyncedLimiter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The RLS server driven by clients nobody here wrote (issue 16, item 3): grpcurl through server
 * reflection alone (no .proto file given), ghz for a short load, and envoyproxy/ratelimit's own
 * client_cmd. Their binaries come from {@link GoTool}; {@code ./run-tests} installs them.
 */
class RlsThirdPartyClientsIT {
  static final String SERVICE = "envoy.service.ratelimit.v3.RateLimitService";
  /** Each key its own rate, so that a limiter's admitted count is that key's alone. */
  static final String CONFIG = String.join("\n",
      "domain: thirdparty",
      "descriptors:",
      "  - key: grpcurl",
      "    rate_limit:",
      "      unit: minute",
      "      requests_per_unit: 2",
      "  - key: ghz",
      "    rate_limit:",
      "      unit: minute",
      "      requests_per_unit: 50",
      "  - key: client_cmd",
      "    rate_limit:",
      "      unit: hour",
      "      requests_per_unit: 1",
      "");

  static RedisServer redis;
  static RlsServer server;
  static String target;
  static final String RUN = UUID.randomUUID().toString().substring(0, 8);

  @BeforeAll
  static void start(@TempDir Path dir) throws Exception {
    redis = RedisServer.start();
    Path config = dir.resolve("ratelimit.yaml");
    Files.writeString(config, CONFIG);
    server = RlsServer.start(RlsServer.Settings.builder().config(config).port(0).redis(redis.uri()).build());
    target = "127.0.0.1:" + server.port();
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
    if (redis != null) {
      redis.close();
    }
  }

  static String request(String key, String value) {
    return "{\"domain\":\"thirdparty\",\"descriptors\":[{\"entries\":[{\"key\":\"" + key + "\",\"value\":\"" + value
        + "\"}]}]}";
  }

  /** A ShouldRateLimit call by grpcurl, its JSON answer read back into Envoy's message. */
  static RateLimitResponse grpcurlCall(String json) throws Exception {
    String out = GoTool.GRPCURL.run("-plaintext", "-max-time", "10", "-d", json, target, SERVICE + "/ShouldRateLimit")
        .ok();
    RateLimitResponse.Builder response = RateLimitResponse.newBuilder();
    JsonFormat.parser().merge(out, response);
    return response.build();
  }

  @Test
  void grpcurlListsDescribesAndCallsThroughReflection() throws Exception {
    String services = GoTool.GRPCURL.run("-plaintext", "-max-time", "10", target, "list").ok();
    assertThat(services.lines()).contains(SERVICE, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection");

    String described = GoTool.GRPCURL.run("-plaintext", "-max-time", "10", target, "describe", SERVICE).ok();
    assertThat(described).contains(SERVICE + " is a service:")
        .contains("rpc ShouldRateLimit ( .envoy.service.ratelimit.v3.RateLimitRequest )"
            + " returns ( .envoy.service.ratelimit.v3.RateLimitResponse );");
    String message = GoTool.GRPCURL.run("-plaintext", "-max-time", "10", target, "describe",
        "envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus").ok();
    assertThat(message).contains("current_limit", "limit_remaining", "duration_until_reset");

    RlsServerIT.awayFromTheMinutesEnd();
    String json = request("grpcurl", "g-" + RUN);
    for (int remaining = 1; remaining >= 0; remaining--) {
      RateLimitResponse ok = grpcurlCall(json);
      assertThat(ok.getOverallCode()).isEqualTo(Code.OK);
      assertThat(ok.getStatusesCount()).isEqualTo(1);
      assertThat(ok.getStatuses(0).getCode()).isEqualTo(Code.OK);
      assertThat(ok.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(2);
      assertThat(ok.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(RateLimitResponse.RateLimit.Unit.MINUTE);
      assertThat(ok.getStatuses(0).getLimitRemaining()).isEqualTo(remaining);
    }
    RateLimitResponse over = grpcurlCall(json);
    assertThat(over.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(over.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(over.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(2);
    assertThat(over.getStatuses(0).getLimitRemaining()).isZero();
    assertThat(over.getStatuses(0).getDurationUntilReset().getSeconds()).isBetween(0L, 60L);

    // a domain nobody configured is no error: every descriptor is OK, without a limit
    RateLimitResponse unknown = grpcurlCall(request("grpcurl", "g-" + RUN).replace("thirdparty", "elsewhere"));
    assertThat(unknown.getOverallCode()).isEqualTo(Code.OK);
    assertThat(unknown.getStatuses(0).hasCurrentLimit()).isFalse();
  }

  /**
   * 200 calls at concurrency 4 on one descriptor of 50 a minute. ghz tallies gRPC status codes, and an
   * OVER_LIMIT answer is a successful call (gRPC OK, overall_code OVER_LIMIT): what ghz can tell is that
   * all 200 succeeded. How many were admitted comes from the limiter's own count, and a call after the
   * run finds the window spent.
   */
  @Test
  void ghzLoadAllSucceedsAndTheLimiterAdmitsTheLimit() throws Exception {
    RlsServerIT.awayFromTheMinutesEnd();
    // ghz was started well inside a minute; if the run still crossed into the next one, the count is off
    long minute = System.currentTimeMillis() / 60_000;
    String out = GoTool.GHZ.run("--insecure", "--call", SERVICE + "/ShouldRateLimit", "-d",
        request("ghz", "h-" + RUN), "-n", "200", "-c", "4", "--connections", "2", "-t", "10s", "-O", "json",
        target).ok();
    boolean sameMinute = System.currentTimeMillis() / 60_000 == minute;
    assertThat(jsonLong(out, "count")).as(out).isEqualTo(200);
    assertThat(out).as("every call a gRPC OK").contains("\"statusCodeDistribution\":{\"OK\":200}");
    assertThat(out).doesNotContain("\"errorDistribution\":{\"");

    SyncedLimiter fifty = server.limiters().stream()
        .filter(l -> l.limit().equals(RlsLimiters.limit(50, RlsUnit.MINUTE))).findFirst().orElseThrow();
    if (sameMinute) {
      assertThat(fifty.admitted()).as("admitted by the 50-a-minute limiter").isEqualTo(50);
      assertThat(fifty.denied()).as("denied by the 50-a-minute limiter").isEqualTo(150);
      RateLimitResponse after = grpcurlCall(request("ghz", "h-" + RUN));
      assertThat(after.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      assertThat(after.getStatuses(0).getLimitRemaining()).isZero();
    } else {
      System.out.println("RlsThirdPartyClientsIT: the ghz run crossed a minute; admitted " + fifty.admitted());
      assertThat(fifty.admitted()).isBetween(50L, 100L);
    }
  }

  static long jsonLong(String json, String field) {
    Matcher m = Pattern.compile("\"" + field + "\":(\\d+)").matcher(json);
    assertThat(m.find()).as("%s in %s", field, json).isTrue();
    return Long.parseLong(m.group(1));
  }

  /**
   * envoyproxy/ratelimit's client prints the answer as Go's protobuf text, whose spacing is not
   * stable by design (it inserts spaces at random so that nobody parses it): the checks allow any.
   */
  @Test
  void envoyproxyRatelimitsOwnClientGetsOkThenOverLimit() throws Exception {
    String[] args = {"-dial_string", target, "-domain", "thirdparty", "-descriptors", "client_cmd=c-" + RUN};
    String first = GoTool.RATELIMIT_CLIENT.run(args).ok();
    assertThat(first).containsPattern("response:\\s*overall_code:\\s*OK")
        .containsPattern("statuses:\\s*\\{\\s*code:\\s*OK\\s+current_limit:\\s*\\{\\s*requests_per_unit:\\s*1\\s+"
            + "unit:\\s*HOUR\\s*}")
        .doesNotContainPattern("limit_remaining:\\s*[1-9]");
    String second = GoTool.RATELIMIT_CLIENT.run(args).ok();
    assertThat(second).containsPattern("response:\\s*overall_code:\\s*OVER_LIMIT")
        .containsPattern("statuses:\\s*\\{\\s*code:\\s*OVER_LIMIT\\s+current_limit:\\s*\\{\\s*requests_per_unit:\\s*1\\s+"
            + "unit:\\s*HOUR\\s*}")
        .containsPattern("duration_until_reset:\\s*\\{\\s*seconds:\\s*\\d+");

    // a key the configuration does not know: OK, no limit
    String none = GoTool.RATELIMIT_CLIENT.run("-dial_string", target, "-domain", "thirdparty", "-descriptors",
        "nobody=x").ok();
    assertThat(none).containsPattern("response:\\s*overall_code:\\s*OK").doesNotContain("current_limit");
  }
}
