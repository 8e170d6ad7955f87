package io.sluice.spring;

import java.util.Map;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** A WebFlux application on Reactor Netty with the starter, for the WebFilter's tests. */
@SpringBootConfiguration
@EnableAutoConfiguration
class ReactiveApp {

  @RestController
  static class Controller {
    @GetMapping("/hello")
    Mono<Map<String, String>> hello() {
      return Mono.just(Map.of("hello", "world"));
    }

    @GetMapping("/free")
    Mono<String> free() {
      return Mono.just("free");
    }

    @SluiceLimit(value = "orders", by = "api-key")
    @PostMapping("/orders/{id}")
    Mono<String> order() {
      return Mono.just("accepted");
    }
  }

  /** Started on a free loopback port with the given beans' classes and properties. */
  static ConfigurableApplicationContext start(Class<?>[] beans, String... properties) {
    Class<?>[] sources = new Class<?>[beans.length + 1];
    sources[0] = ReactiveApp.class;
    System.arraycopy(beans, 0, sources, 1, beans.length);
    String[] args = new String[properties.length + 3];
    args[0] = "--server.port=0";
    args[1] = "--server.address=127.0.0.1";
    args[2] = "--spring.main.banner-mode=off";
    System.arraycopy(properties, 0, args, 3, properties.length);
    return new SpringApplicationBuilder(sources).web(WebApplicationType.REACTIVE).run(args);
  }

  static int port(ConfigurableApplicationContext context) {
    return ((WebServerApplicationContext) context).getWebServer().getPort();
  }
}
