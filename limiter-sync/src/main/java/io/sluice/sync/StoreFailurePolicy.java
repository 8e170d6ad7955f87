package io.sluice.sync;

/** What a node decides while the circuit breaker around its store is open. */
public enum StoreFailurePolicy {
  /** Allow every request (admissions are still counted and flushed once the store is back). */
  FAIL_OPEN,
  /** Deny every request. */
  FAIL_CLOSED,
  /**
   * Each node enforces its share: what was free when the store last answered (the whole limit in a
   * window it never answered for) divided by the active nodes (as last seen through the registry),
   * for what it admitted that the store has not acknowledged. Nodes cut off together stay within the
   * limit with no store at all; on a fixed window a node keeps to its share for a while after the
   * store is back (see the README), so that returning nodes do not spend what the others still on
   * theirs admitted. A node cut off alone while the others reach the store adds its share to the limit.
   */
  LOCAL_SHARE
}
