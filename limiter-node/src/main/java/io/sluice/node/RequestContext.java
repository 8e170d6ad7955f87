package io.sluice.node;

import java.util.HashMap;
import java.util.Map;

/**
 * What the rules need to know of a request: the caller's plan (tier), the endpoint (method and path)
 * and its identities by dimension ({@code "api-key"}, {@code "user"}, {@code "ip"}, ...). Immutable.
 */
public final class RequestContext {
  private final String plan;
  private final String method;
  private final String path;
  private final Map<String, String> identities;

  private RequestContext(Builder b) {
    this.plan = b.plan;
    this.method = b.method;
    this.path = b.path;
    this.identities = Map.copyOf(b.identities);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The plan, or null to use the rules' default plan. */
  public String plan() {
    return plan;
  }

  public String method() {
    return method;
  }

  public String path() {
    return path;
  }

  /** The identity of the given dimension, or null if the request has none. */
  public String identity(String dimension) {
    return identities.get(dimension);
  }

  /** Builds a {@link RequestContext}. */
  public static final class Builder {
    private String plan;
    private String method = "GET";
    private String path = "/";
    private final Map<String, String> identities = new HashMap<>();

    public Builder plan(String plan) {
      this.plan = plan;
      return this;
    }

    public Builder endpoint(String method, String path) {
      if (method == null || method.isEmpty()) {
        throw new IllegalArgumentException("method: must not be null or empty");
      }
      if (path == null || !path.startsWith("/")) {
        throw new IllegalArgumentException("path: must start with '/', got " + path);
      }
      this.method = method;
      this.path = path;
      return this;
    }

    /** Sets the identity of a dimension; a null or empty value is ignored (the request has none). */
    public Builder identity(String dimension, String value) {
      if (dimension == null || dimension.isEmpty()) {
        throw new IllegalArgumentException("dimension: must not be null or empty");
      }
      if (value != null && !value.isEmpty()) {
        identities.put(dimension, value);
      }
      return this;
    }

    public RequestContext build() {
      return new RequestContext(this);
    }
  }
}
