package io.sluice.spring;

import static io.sluice.spring.SluiceAutoConfigurationTest.API_5_PER_MINUTE;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.registry.otlp.OtlpMeterRegistry;
import io.sluice.node.RequestContext;
import io.sluice.node.RequestLimiter;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.sim.MemoryStore;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.otlp.OtlpMetricsExportAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * With {@code micrometer-registry-otlp} on the classpath and {@code management.otlp.metrics.export.url}
 * set, Spring Boot builds an {@link OtlpMeterRegistry}; the starter's meters are bound to it like to any
 * registry, the histogram timers included, and reach a receiver on loopback as OTLP/HTTP protobuf.
 */
class SluiceOtlpMetricsTest {

  @Test
  void theMetersReachAnOtlpRegistryAndItsEndpoint() throws Exception {
    List<byte[]> bodies = new CopyOnWriteArrayList<>();
    HttpServer receiver = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    receiver.createContext("/v1/metrics", exchange -> {
      try (exchange) {
        bodies.add(exchange.getRequestBody().readAllBytes());
        exchange.sendResponseHeaders(200, -1); // an empty ExportMetricsServiceResponse
      }
    });
    receiver.start();
    try {
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class, MetricsAutoConfiguration.class,
              CompositeMeterRegistryAutoConfiguration.class, OtlpMetricsExportAutoConfiguration.class))
          .withPropertyValues(API_5_PER_MINUTE)
          .withPropertyValues("management.otlp.metrics.export.url=http://127.0.0.1:" + receiver.getAddress().getPort()
              + "/v1/metrics", "management.otlp.metrics.export.step=1s")
          .withBean(CounterStore.class, MemoryStore::new)
          .run(context -> {
            assertThat(context).hasNotFailed();
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry).isInstanceOf(OtlpMeterRegistry.class);
            RequestLimiter limiter = context.getBean(RequestLimiter.class);
            for (int i = 0; i < 3; i++) {
              limiter.check(RequestContext.builder().identity("api-key", "k" + i).build());
            }
            assertThat(registry.get("sluice.decisions").tag("limit", "api").tag("result", "allowed").functionCounter()
                .count()).isEqualTo(3.0);
            Timer waited = registry.get("sluice.sync.decisions.waited").tag("limit", "api").timer();
            assertThat(waited.count()).as("cold keys wait for their claims").isPositive();
            assertThat(registry.get("sluice.sync.store.calls.duration").tag("limit", "api").timer().count()).isPositive();

            String wanted = "sluice.sync.decisions.waited";
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (bodies.stream().noneMatch(b -> contains(b, wanted)) && System.nanoTime() < deadline) {
              Thread.sleep(100);
            }
            // (booleans: a failed match on the bodies themselves would print every byte)
            assertThat(bodies.stream().anyMatch(b -> contains(b, wanted) && contains(b, "sluice.decisions")))
                .as(bodies.size() + " OTLP requests, one naming " + wanted + " and sluice.decisions").isTrue();
          });
    } finally {
      receiver.stop(0);
    }
  }

  private static boolean contains(byte[] body, String text) {
    byte[] t = text.getBytes(StandardCharsets.UTF_8);
    outer:
    for (int i = 0; i + t.length <= body.length; i++) {
      for (int j = 0; j < t.length; j++) {
        if (body[i + j] != t[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }
}
