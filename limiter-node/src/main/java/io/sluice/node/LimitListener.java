package io.sluice.node;

/**
 * Told when a soft limit is exceeded or a shadow limit would have denied. Called on the request's
 * thread: keep it short and never throw (exceptions are swallowed so that they cannot fail a request).
 */
@FunctionalInterface
public interface LimitListener {
  LimitListener NONE = (limit, key, decision) -> { };

  void onBreach(Limit limit, String key, Decision decision);
}
