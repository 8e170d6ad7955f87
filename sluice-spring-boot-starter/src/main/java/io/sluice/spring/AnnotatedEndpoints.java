package io.sluice.spring;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * The endpoint rules {@link SluiceLimit} annotations make: one per limit, HTTP method and path of an
 * annotated handler method, each with the annotation it came from (for error messages).
 */
public final class AnnotatedEndpoints {
  /** One endpoint rule line's parts: {@code endpoint METHOD PATH LIMIT by IDENTITY}. */
  record Endpoint(String source, String method, String path, String rule) {
    String line() {
      return "endpoint " + method + " " + path + " " + rule;
    }
  }

  private final List<Endpoint> endpoints;

  AnnotatedEndpoints(List<Endpoint> endpoints) {
    this.endpoints = List.copyOf(endpoints);
  }

  static AnnotatedEndpoints none() {
    return new AnnotatedEndpoints(List.of());
  }

  List<Endpoint> endpoints() {
    return endpoints;
  }

  /** The annotated handler methods of these mappings, with the DispatcherServlet at "/". */
  static AnnotatedEndpoints of(List<RequestMappingHandlerMapping> mappings) {
    return of(mappings, "");
  }

  /**
   * The annotated handler methods of these mappings, their paths after {@code servletPrefix} (the
   * DispatcherServlet's path without its trailing {@code /*}, {@code ""} at "/"): the filter in front
   * of the servlet matches the servlet path and the path info.
   */
  static AnnotatedEndpoints of(List<RequestMappingHandlerMapping> mappings, String servletPrefix) {
    List<Endpoint> out = new ArrayList<>();
    for (RequestMappingHandlerMapping mapping : mappings) {
      for (Map.Entry<RequestMappingInfo, HandlerMethod> e : mapping.getHandlerMethods().entrySet()) {
        add(out, e.getValue(), e.getKey().getMethodsCondition().getMethods(), e.getKey().getPatternValues(), servletPrefix);
      }
    }
    return sorted(out);
  }

  /**
   * The annotated handler methods of WebFlux's mappings, their paths within the application (after
   * {@code spring.webflux.base-path}), as the WebFilter matches them.
   */
  static AnnotatedEndpoints ofReactive(
      List<org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping> mappings) {
    List<Endpoint> out = new ArrayList<>();
    for (org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping mapping : mappings) {
      for (Map.Entry<org.springframework.web.reactive.result.method.RequestMappingInfo, HandlerMethod> e
          : mapping.getHandlerMethods().entrySet()) {
        Set<String> patterns = new java.util.LinkedHashSet<>();
        e.getKey().getPatternsCondition().getPatterns().forEach(p -> patterns.add(p.getPatternString()));
        add(out, e.getValue(), e.getKey().getMethodsCondition().getMethods(), patterns, "");
      }
    }
    return sorted(out);
  }

  /** The endpoint rules of one handler method's {@link SluiceLimit} annotations (and its class's). */
  private static void add(List<Endpoint> out, HandlerMethod handler, Set<RequestMethod> methods,
      Set<String> patterns, String prefix) {
    Set<SluiceLimit> limits = new java.util.LinkedHashSet<>(
        AnnotatedElementUtils.findMergedRepeatableAnnotations(handler.getBeanType(), SluiceLimit.class));
    limits.addAll(AnnotatedElementUtils.findMergedRepeatableAnnotations(handler.getMethod(), SluiceLimit.class));
    if (limits.isEmpty()) {
      return;
    }
    String source = "@SluiceLimit on " + handler.getBeanType().getSimpleName() + "." + handler.getMethod().getName();
    // (a GET rule holds for HEAD as well, which Spring answers with the GET handler: see Rules)
    List<String> methodNames = methods.isEmpty() ? List.of("*") : methods.stream().map(Enum::name).sorted().toList();
    for (String pattern : patterns) {
      String path = rulePath(prefix + (pattern.startsWith("/") ? "" : "/") + pattern);
      for (String method : methodNames) {
        for (SluiceLimit limit : limits) {
          out.add(new Endpoint(source, method, path, limit.value() + " by " + limit.by()));
        }
      }
    }
  }

  private static AnnotatedEndpoints sorted(List<Endpoint> out) {
    // (a stable order: the handler map's is not)
    out.sort(java.util.Comparator.comparing(Endpoint::source).thenComparing(Endpoint::path)
        .thenComparing(Endpoint::method).thenComparing(Endpoint::rule));
    return new AnnotatedEndpoints(out);
  }

  /**
   * A Spring MVC pattern as the rules' path pattern: literal segments as they are, {@code {id}} and
   * {@code {id:\d+}} one segment, {@code **} and {@code {*rest}} any number, a segment with a variable
   * or wildcard inside it any one segment.
   */
  static String rulePath(String pattern) {
    StringBuilder b = new StringBuilder();
    for (String segment : pattern.split("/")) {
      if (segment.isEmpty()) {
        continue;
      }
      b.append('/');
      if (segment.equals("**") || segment.startsWith("{*")) {
        b.append("**");
      } else if (segment.startsWith("{") && segment.endsWith("}") && segment.indexOf('{', 1) < 0) {
        b.append("{v}");
      } else if (segment.contains("{") || segment.contains("*") || segment.contains("?")) {
        b.append('*');
      } else {
        b.append(segment);
      }
    }
    return b.length() == 0 ? "/" : b.toString();
  }
}
