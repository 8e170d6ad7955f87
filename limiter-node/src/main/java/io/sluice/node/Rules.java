package io.sluice.node;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Which limits apply to a request: those of every request, those of its plan (tier) and those of
 * each endpoint pattern (method and path) it matches; a GET endpoint's rules hold for HEAD as well (servlets
 * and most frameworks answer HEAD with the GET handler). Immutable.
 *
 * <pre>{@code
 * Rules rules = Rules.builder()
 *     .always(Rule.of(perIp, "ip"))
 *     .plan("free", Rule.of(freeApi, "api-key"))
 *     .plan("pro", Rule.of(proApi, "api-key"))
 *     .defaultPlan("free")
 *     .endpoint("POST", "/login", Rule.of(loginAttempts, "ip"))
 *     .build();
 * }</pre>
 */
public final class Rules {
  private final List<Rule> always;
  private final Map<String, List<Rule>> plans;
  private final List<Endpoint> endpoints;
  private final String defaultPlan;
  private final Map<String, Limit> limits;

  private Rules(Builder b) {
    this.always = List.copyOf(b.always);
    this.plans = Map.copyOf(b.plans);
    this.endpoints = List.copyOf(b.endpoints);
    this.defaultPlan = b.defaultPlan;
    this.limits = Map.copyOf(b.limits);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Every distinct limit the rules name. */
  public Collection<Limit> limits() {
    return limits.values();
  }

  /**
   * The rules that apply, in order: always, plan, endpoints; each limit once.
   *
   * @throws IllegalArgumentException if the plan is unknown and no default plan is set
   */
  public List<Rule> rulesFor(RequestContext request) {
    Set<String> seen = new LinkedHashSet<>();
    List<Rule> out = new ArrayList<>();
    addAll(out, seen, always);
    String plan = request.plan();
    List<Rule> planRules = plan == null ? null : plans.get(plan);
    if (planRules == null && defaultPlan != null) {
      planRules = plans.get(defaultPlan);
    } else if (planRules == null && plan != null) {
      throw new IllegalArgumentException("plan: unknown plan \"" + plan + "\" and no default plan");
    }
    if (planRules != null) {
      addAll(out, seen, planRules);
    }
    for (Endpoint e : endpoints) {
      if (e.matches(request.method(), request.path())) {
        addAll(out, seen, e.rules);
      }
    }
    return out;
  }

  private static void addAll(List<Rule> out, Set<String> seen, List<Rule> rules) {
    for (Rule r : rules) {
      if (seen.add(r.limit().name())) {
        out.add(r);
      }
    }
  }

  private static final class Endpoint {
    final String method;
    final PathPattern path;
    final List<Rule> rules;

    Endpoint(String method, PathPattern path, List<Rule> rules) {
      this.method = method;
      this.path = path;
      this.rules = rules;
    }

    /** A GET endpoint holds for HEAD too: HEAD is GET without the body, answered by the GET handler. */
    boolean matches(String requestMethod, String requestPath) {
      return (method.equals("*") || method.equalsIgnoreCase(requestMethod)
          || (method.equals("GET") && "HEAD".equalsIgnoreCase(requestMethod))) && path.matches(requestPath);
    }
  }

  /** Builds a {@link Rules}. */
  public static final class Builder {
    private final List<Rule> always = new ArrayList<>();
    private final Map<String, List<Rule>> plans = new LinkedHashMap<>();
    private final List<Endpoint> endpoints = new ArrayList<>();
    private final Map<String, Limit> limits = new LinkedHashMap<>();
    private String defaultPlan;

    /** Rules applied to every request. */
    public Builder always(Rule... rules) {
      always.addAll(checked("always", rules));
      return this;
    }

    /** Rules of a plan (tier), e.g. free, pro, enterprise. */
    public Builder plan(String plan, Rule... rules) {
      if (plan == null || plan.isEmpty()) {
        throw new IllegalArgumentException("plan: must not be null or empty");
      }
      if (plans.containsKey(plan)) {
        throw new IllegalArgumentException("plan: \"" + plan + "\" is defined twice");
      }
      plans.put(plan, checked("plan " + plan, rules));
      return this;
    }

    /** The plan used for requests without a plan or with an unknown one. */
    public Builder defaultPlan(String plan) {
      this.defaultPlan = plan;
      return this;
    }

    /** Rules of an endpoint: method ({@code *} for any) and path pattern (see the class doc). */
    public Builder endpoint(String method, String pathPattern, Rule... rules) {
      if (method == null || !(method.equals("*") || method.matches("[A-Za-z]+"))) {
        throw new IllegalArgumentException("method: must be an HTTP method or '*', got " + method);
      }
      endpoints.add(new Endpoint(method.toUpperCase(Locale.ROOT), PathPattern.parse(pathPattern),
          checked("endpoint " + method + " " + pathPattern, rules)));
      return this;
    }

    private List<Rule> checked(String where, Rule... rules) {
      if (rules == null || rules.length == 0) {
        throw new IllegalArgumentException("rules: " + where + " has no rules");
      }
      for (Rule r : rules) {
        if (r == null) {
          throw new IllegalArgumentException("rules: " + where + " has a null rule");
        }
        Limit known = limits.putIfAbsent(r.limit().name(), r.limit());
        if (known != null && !known.equals(r.limit())) {
          throw new IllegalArgumentException("rules: two different limits are named \"" + r.limit().name()
              + "\": " + known + " and " + r.limit());
        }
      }
      return List.of(rules);
    }

    public Rules build() {
      if (defaultPlan != null && !plans.containsKey(defaultPlan)) {
        throw new IllegalArgumentException("defaultPlan: \"" + defaultPlan + "\" is not a defined plan");
      }
      if (always.isEmpty() && plans.isEmpty() && endpoints.isEmpty()) {
        throw new IllegalArgumentException("rules: no rules defined");
      }
      return new Rules(this);
    }
  }
}
