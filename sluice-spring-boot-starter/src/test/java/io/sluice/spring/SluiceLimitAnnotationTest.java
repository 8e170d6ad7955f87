package io.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.http.RateLimitFilter;
import io.sluice.node.RequestContext;
import io.sluice.node.Rule;
import io.sluice.node.RulesFile;
import io.sluice.sync.spi.CounterStore;
import io.sluice.sync.sim.MemoryStore;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.web.servlet.DispatcherServletAutoConfiguration;
import org.springframework.boot.autoconfigure.web.servlet.WebMvcAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@link SluiceLimit} on controller methods becomes endpoint rules the filter enforces. */
class SluiceLimitAnnotationTest {
  final WebApplicationContextRunner web = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(DispatcherServletAutoConfiguration.class, WebMvcAutoConfiguration.class,
          SluiceAutoConfiguration.class))
      .withBean(CounterStore.class, MemoryStore::new)
      .withPropertyValues("sluice.limits.orders.limit=3", "sluice.limits.orders.window=1m",
          "sluice.limits.writes.limit=2", "sluice.limits.writes.window=1m", "sluice.sync.batch-size=1");

  @RestController
  static class OrderController {
    @SluiceLimit(value = "orders", by = "ip")
    @GetMapping("/orders/{id}")
    String order(@PathVariable String id) {
      return id;
    }

    @GetMapping("/health-check")
    String free() {
      return "ok";
    }
  }

  @RestController
  @SluiceLimit(value = "writes", by = "api-key")
  static class WriteController {
    @PostMapping({"/files/{*path}", "/uploads/file-{name}.txt"})
    String write() {
      return "written";
    }
  }

  @Test
  void annotatedMethodsBecomeEndpointRules() {
    web.withUserConfiguration(OrderController.class, WriteController.class).run(context -> {
      assertThat(context).hasNotFailed();
      RulesFile rules = context.getBean(RulesFile.class);
      assertThat(names(rules, RequestContext.builder().endpoint("GET", "/orders/42").identity("ip", "a").build()))
          .containsExactly("orders");
      assertThat(names(rules, RequestContext.builder().endpoint("POST", "/orders/42").identity("ip", "a").build()))
          .isEmpty();
      assertThat(names(rules, RequestContext.builder().endpoint("GET", "/health-check").identity("ip", "a").build()))
          .isEmpty();
      // on the class: every mapping of every method; {*path} is any number of segments
      assertThat(names(rules, RequestContext.builder().endpoint("POST", "/files/a/b/c").identity("api-key", "k").build()))
          .containsExactly("writes");
      assertThat(names(rules, RequestContext.builder().endpoint("POST", "/uploads/file-x.txt").identity("api-key", "k")
          .build())).containsExactly("writes");
    });
  }

  @Test
  void theFilterEnforcesThem() {
    web.withUserConfiguration(OrderController.class).run(context -> {
      RateLimitFilter filter = (RateLimitFilter) context.getBean(FilterRegistrationBean.class).getFilter();
      int passed = 0;
      for (int i = 0; i < 5; i++) {
        passed += pass(filter, "/orders/" + i) ? 1 : 0;
      }
      assertThat(passed).as("the limit of the annotated method, across its paths").isEqualTo(3);
      assertThat(pass(filter, "/health-check")).isTrue();
    });
  }

  @Test
  void aHeadRequestToAnAnnotatedGetMappingCountsAsWell() {
    web.withUserConfiguration(OrderController.class).run(context -> {
      // Spring MVC runs a GET handler for HEAD: a limit that HEAD escapes is a limit a client can skip
      MockHttpServletRequest head = new MockHttpServletRequest("HEAD", "/orders/42");
      assertThat(context.getBean(org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping.class)
          .getHandler(head)).as("HEAD /orders/42 reaches OrderController.order").isNotNull();
      RulesFile rules = context.getBean(RulesFile.class);
      assertThat(names(rules, RequestContext.builder().endpoint("HEAD", "/orders/42").identity("ip", "a").build()))
          .containsExactly("orders");
      RateLimitFilter filter = (RateLimitFilter) context.getBean(FilterRegistrationBean.class).getFilter();
      int passed = 0;
      for (int i = 0; i < 5; i++) {
        passed += pass(filter, i % 2 == 0 ? "HEAD" : "GET", "/orders/" + i) ? 1 : 0;
      }
      assertThat(passed).as("GET and HEAD share the limit of the annotated method").isEqualTo(3);
    });
  }

  @Test
  void underADispatcherServletPathTheRulesHaveItsPrefix() {
    // spring.mvc.servlet.path=/api: GET /api/orders/42 reaches order(); the filter sees the path within
    // the application (servlet path and path info), "/api/orders/42", which the rule must match
    web.withUserConfiguration(OrderController.class).withPropertyValues("spring.mvc.servlet.path=/api").run(context -> {
      assertThat(context).hasNotFailed();
      RulesFile rules = context.getBean(RulesFile.class);
      assertThat(names(rules, RequestContext.builder().endpoint("GET", "/api/orders/42").identity("ip", "a").build()))
          .containsExactly("orders");
      RateLimitFilter filter = (RateLimitFilter) context.getBean(FilterRegistrationBean.class).getFilter();
      int passed = 0;
      for (int i = 0; i < 5; i++) {
        MockHttpServletRequest request = new MockHttpServletRequest("GET", "/api/orders/" + i);
        request.setServletPath("/api");
        request.setPathInfo("/orders/" + i);
        request.setRemoteAddr("10.0.0.7");
        MockFilterChain chain = new MockFilterChain();
        filter.doFilter(request, new MockHttpServletResponse(), chain);
        passed += chain.getRequest() != null ? 1 : 0;
      }
      assertThat(passed).isEqualTo(3);
    });
  }

  @RestController
  static class Misnamed {
    @SluiceLimit(value = "order", by = "ip")
    @GetMapping("/x")
    String x() {
      return "x";
    }
  }

  @Test
  void anAnnotationNamingNoLimitFailsNamingTheMethod() {
    web.withUserConfiguration(Misnamed.class).run(context -> assertThat(SluiceAutoConfigurationTest.Failures.message(context))
        .isEqualTo("@SluiceLimit on Misnamed.x: unknown limit \"order\" (defined: orders, writes)"));
  }

  @RestController
  static class UsesAFileLimit {
    @SluiceLimit(value = "unused", by = "ip")
    @GetMapping("/y")
    String y() {
      return "y";
    }
  }

  @Test
  void withARulesFileTheAnnotationsAddToItsRules() {
    WebApplicationContextRunner file = new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DispatcherServletAutoConfiguration.class, WebMvcAutoConfiguration.class,
            SluiceAutoConfiguration.class))
        .withBean(CounterStore.class, MemoryStore::new)
        .withPropertyValues("sluice.rules-file=classpath:sluice-test-rules.conf");
    file.withUserConfiguration(UsesAFileLimit.class).run(context -> {
      assertThat(context).hasNotFailed();
      RulesFile rules = context.getBean(RulesFile.class);
      assertThat(names(rules, RequestContext.builder().endpoint("GET", "/y").identity("ip", "a").build()))
          .containsExactlyInAnyOrder("per-ip", "unused");
    });
    file.withUserConfiguration(Misnamed.class).run(context -> assertThat(SluiceAutoConfigurationTest.Failures.message(context))
        .isEqualTo("@SluiceLimit on Misnamed.x: unknown limit \"order\" (defined: per-ip, login, unused)"));
  }

  private static boolean pass(RateLimitFilter filter, String path) throws Exception {
    return pass(filter, "GET", path);
  }

  private static boolean pass(RateLimitFilter filter, String method, String path) throws Exception {
    MockHttpServletRequest request = new MockHttpServletRequest(method, path);
    request.setServletPath(path); // as a container gives it to a filter in front of the DispatcherServlet at "/"
    request.setRemoteAddr("10.0.0.7");
    MockHttpServletResponse response = new MockHttpServletResponse();
    MockFilterChain chain = new MockFilterChain();
    filter.doFilter(request, response, chain);
    return chain.getRequest() != null;
  }

  private static List<String> names(RulesFile rules, RequestContext request) {
    return rules.rules().orElseThrow().rulesFor(request).stream().map(Rule::limit).map(l -> l.name()).toList();
  }
}
