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

  public Delta(Counter counter, String key, long window, long amount) {
    if (counter == null) {
      throw new IllegalArgumentException("counter: must not be null");
    }
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("key: must not be null or empty");
    }
    if (amount < 0 || amount >= Counter.LUA_MAX_EXACT) {
      throw new IllegalArgumentException("amount: must be between 0 and 2^53, got " + amount);
    }
    this.counter = counter;
    this.key = key;
    this.window = window;
    this.amount = amount;
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

  @Override
  public String toString() {
    return counter.limit().name() + "/" + key + (counter.kind() == Counter.Kind.WINDOW ? "@" + window : "")
        + " +" + amount;
  }
}
