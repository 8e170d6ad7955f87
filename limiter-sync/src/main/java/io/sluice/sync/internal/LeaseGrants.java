package io.sluice.sync.internal;

/**
 * Reservation mode: what one node holds of the store's grants on a key ({@link KeyView#grants}), under
 * the view's monitor.
 * A grant is for one window: what is left of it is never carried over; a sliding window's is given
 * back, since the window gone by still weighs.
 */
final class LeaseGrants {
  /** Permits granted for the view's window and not used yet. */
  private long held;
  /**
   * Sliding window: permits granted on the window before the view's that this node did not use, 0
   * for none. The store counted them with the grant, and as the previous window's count they would
   * weigh in this one: the decision that rolls the view into this window gives them back at once,
   * under the same monitor (WindowLeases#giveBackLeftover).
   */
  private long leftover;
  /** A grant was asked for and not answered yet. */
  private boolean wanted;
  /** Budget left in the window when the store last answered (-1 before). */
  private long lastRemaining = -1;

  long held() {
    return held;
  }

  /** Permits granted (or given back by a release) into the view's window. */
  void add(long permits) {
    held += permits;
  }

  /** An admission paid by what is held. */
  void use(long permits) {
    held -= permits;
  }

  /** What the window gone by's grant left unused, handed over to be given back: none is left here. */
  long takeLeftover() {
    long back = leftover;
    leftover = 0;
    return back;
  }

  /** Permits of the window gone by's grant are left to give back. */
  boolean hasLeftover() {
    return leftover > 0;
  }

  boolean wanted() {
    return wanted;
  }

  void wanted(boolean wanted) {
    this.wanted = wanted;
  }

  long lastRemaining() {
    return lastRemaining;
  }

  void lastRemaining(long remaining) {
    lastRemaining = remaining;
  }

  /** The view moves to a new window; {@code keepLeftover}: the one it leaves still weighs (sliding, next window). */
  void roll(boolean keepLeftover) {
    leftover = keepLeftover ? held : 0;
    held = 0;
    lastRemaining = -1;
  }
}
