package io.sluice.sync;

/**
 * Permits one node admitted for one key of one limit since its last flush. For a window counter,
 * {@code window} is the index of the window they were admitted in (windows aligned to the epoch);
 * for GCRA it is unused.
 */
public final class Delta {
  private final Counter counter;
  private final String key;
  private final long window;
  private final long amount;
  private final long denied;

  public Delta(Counter counter, String key, long window, long amount) {
    this(counter, key, window, amount, 0);
  }

  /**
   * With {@code denied}: permits asked for and refused since the last flush, the demand a region
   * coordinator weighs (regional counters only; other stores and counters ignore it).
   */
  public Delta(Counter counter, String key, long window, long amount, long denied) {
    if (counter == null) {
      throw new IllegalArgumentException("counter: must not be null");
    }
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("key: must not be null or empty");
    }
    if (amount < 0 || amount >= Counter.LUA_MAX_EXACT) {
      throw new IllegalArgumentException("amount: must be between 0 and 2^53, got " + amount);
    }
    if (denied < 0 || denied >= Counter.LUA_MAX_EXACT) {
      throw new IllegalArgumentException("denied: must be between 0 and 2^53, got " + denied);
    }
    this.counter = counter;
    this.key = key;
    this.window = window;
    this.amount = amount;
    this.denied = denied;
  }

  public Counter counter() {
    return counter;
  }

  public String key() {
    return key;
  }

  public long window() {
    return window;
  }

  public long amount() {
    return amount;
  }

  public long denied() {
    return denied;
  }

  @Override
  public String toString() {
    return counter.limit().name() + "/" + key + (counter.kind() == Counter.Kind.WINDOW ? "@" + window : "")
        + " +" + amount;
  }
}
