package io.sluice.benchmarks.boot;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.context.ApplicationListener;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The app of {@code benchmarks/run-starter.sh}: one endpoint ({@code GET /api/hello}, and {@code GET
 * /api/tight} for the runs where half the requests meet a spent limit), nothing else of its own. The
 * same class runs as a servlet app (Tomcat, Spring MVC) or a reactive one (Reactor Netty, WebFlux),
 * whichever stack the classpath holds, with Sluice's starter when its jars are on the classpath and
 * configured by {@code --sluice.*} arguments, or with the hand-written Bucket4j filter of {@link
 * Bucket4jFilters} ({@code --bench.limiter=bucket4j}).
 *
 * <p>When the application is ready it prints {@code READY uptime_ms=N} (the JVM's uptime, from the
 * JVM's start); with {@code --bench.exit-on-ready=true} it then halts at once, for the startup runs.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(HelloApp.HelloController.class)
public class HelloApp {

  public static void main(String[] args) {
    List<Class<?>> sources = new ArrayList<>(List.of(HelloApp.class));
    if (Arrays.asList(args).contains("--bench.limiter=bucket4j")) {
      // by name: the empty apps' classpath has no Bucket4j
      try {
        sources.add(Class.forName("io.sluice.benchmarks.boot.Bucket4jFilters"));
      } catch (ClassNotFoundException e) {
        throw new IllegalStateException("Bucket4j is not on the classpath", e);
      }
    }
    SpringApplication.run(sources.toArray(Class<?>[]::new), args);
  }

  @Bean
  ApplicationListener<ApplicationReadyEvent> readyReporter(Environment environment) {
    return event -> {
      long uptime = ManagementFactory.getRuntimeMXBean().getUptime();
      System.out.println("READY uptime_ms=" + uptime + " type=" + event.getApplicationContext().getClass().getSimpleName());
      System.out.flush();
      if (environment.getProperty("bench.exit-on-ready", Boolean.class, false)) {
        Runtime.getRuntime().halt(0);
      }
    };
  }

  /** A Spring MVC controller on a servlet app, a WebFlux one on a reactive app: both take a String. */
  @RestController
  static class HelloController {
    @GetMapping("/api/hello")
    String hello() {
      return "hello";
    }

    @GetMapping("/api/tight")
    String tight() {
      return "tight";
    }
  }
}
