package io.sluice.node;

/**
 * Chooses the key a limit counts a request under: the API key, the user, the client IP, a tenant, or
 * anything else. Returning null means the limit does not apply to this request (for example a
 * per-user limit on an anonymous request).
 */
@FunctionalInterface
public interface KeyResolver {

  String resolve(RequestContext request);

  /** The request's identity of the given dimension ({@code "api-key"}, {@code "ip"}, ...). */
  static KeyResolver identity(String dimension) {
    if (dimension == null || dimension.isEmpty()) {
      throw new IllegalArgumentException("dimension: must not be null or empty");
    }
    return request -> request.identity(dimension);
  }

  /** One key for every request: a global limit. */
  static KeyResolver global() {
    return request -> "*";
  }
}
