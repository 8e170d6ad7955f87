package io.sluice.node;

/** A limit and how to key a request for it, e.g. a per-IP limit keyed by the {@code "ip"} identity. */
public final class Rule {
  private final Limit limit;
  private final KeyResolver keyResolver;

  private Rule(Limit limit, KeyResolver keyResolver) {
    this.limit = limit;
    this.keyResolver = keyResolver;
  }

  public static Rule of(Limit limit, KeyResolver keyResolver) {
    if (limit == null) {
      throw new IllegalArgumentException("limit: must not be null");
    }
    if (keyResolver == null) {
      throw new IllegalArgumentException("keyResolver: must not be null");
    }
    return new Rule(limit, keyResolver);
  }

  /** A rule keyed by the request's identity of the given dimension. */
  public static Rule of(Limit limit, String dimension) {
    return of(limit, KeyResolver.identity(dimension));
  }

  public Limit limit() {
    return limit;
  }

  public KeyResolver keyResolver() {
    return keyResolver;
  }

  @Override
  public String toString() {
    return limit.toString();
  }
}
