package io.sluice.sync;

/** What a node decides while the circuit breaker around its store is open. */
public enum StoreFailurePolicy {
  /** Allow every request (admissions are still counted and flushed once the store is back). */
  FAIL_OPEN,
  /** Deny every request. */
  FAIL_CLOSED,
  /**
   * Each node enforces its share of the limit, {@code limit / active nodes} (active nodes as last
   * seen through the registry), on its own admissions of the window: the cluster stays near its
   * limit with no store at all.
   */
  LOCAL_SHARE
}
