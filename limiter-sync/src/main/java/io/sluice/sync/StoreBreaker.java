package io.sluice.sync;

/**
 * The circuit breaker in front of one limiter's store calls, as an operator or a health check sees it
 * ({@link SyncedLimiter#storeBreaker()}): its state, its recent calls, a hand to force it open (store
 * maintenance) and close it again, and a listener for its changes. Its settings are a
 * {@link StoreBreakerConfig}. Thread-safe.
 */
public interface StoreBreaker {

  /** The breaker's states. */
  enum State {
    /** Calls go to the store. */
    CLOSED,
    /** Calls are kept out after failures or slow calls; the failure policy decides until it half opens. */
    OPEN,
    /** A few calls are let through to try the store. */
    HALF_OPEN,
    /** Held open by {@link #forceOpen()} until {@link #reset()}. */
    FORCED_OPEN
  }

  /** Told of each change of state, on the thread whose call made it. */
  @FunctionalInterface
  interface Listener {
    /**
     * {@code failureRate} and {@code slowCallRate}: in % of the calls the breaker measures over when it
     * changed (-1 while fewer than its minimum were made).
     */
    void changed(State from, State to, float failureRate, float slowCallRate);
  }

  State state();

  /** Whether the store is kept out: open or forced open. */
  default boolean keepsStoreOut() {
    State s = state();
    return s == State.OPEN || s == State.FORCED_OPEN;
  }

  /** Failed or timed-out calls among those the breaker measures over now. */
  int failedCalls();

  /** Calls that passed among those the breaker measures over now. */
  int successfulCalls();

  /** Keeps the store out until {@link #reset()}: the failure policy decides meanwhile. */
  void forceOpen();

  /** Closed again, its measurements cleared. */
  void reset();

  /**
   * Adds a listener. (Each call then also builds an event inside the breaker, a small cost per store
   * call: add listeners where they are needed, not by default.)
   */
  void onStateChange(Listener listener);
}
