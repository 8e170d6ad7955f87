package io.sluice.http;

import jakarta.servlet.http.HttpServletRequest;

/**
 * The caller's plan (tier) for the rules: {@code "free"}, {@code "pro"}... from a header set by an
 * authenticating gateway, the user's roles, a tenant lookup. Null means the rules' default plan.
 */
@FunctionalInterface
public interface PlanResolver {

  String plan(HttpServletRequest request);

  /** Every request gets the rules' default plan. */
  static PlanResolver defaultPlan() {
    return request -> null;
  }

  /** The plan named by a request header, e.g. one an authenticating gateway sets. */
  static PlanResolver header(String name) {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("header: must not be null or blank");
    }
    return request -> request.getHeader(name);
  }
}
