package io.sluice.node;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/** Two longs, each changed by CAS on its own: the two window slots of the sliding window counter. */
final class PairCell extends KeyState {
  private static final VarHandle EVEN;
  private static final VarHandle ODD;

  static {
    try {
      EVEN = MethodHandles.lookup().findVarHandle(PairCell.class, "even", long.class);
      ODD = MethodHandles.lookup().findVarHandle(PairCell.class, "odd", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  volatile long even;
  volatile long odd;

  PairCell(long even, long odd) {
    this.even = even;
    this.odd = odd;
  }

  long get(long window) {
    return (window & 1) == 0 ? even : odd;
  }

  boolean cas(long window, long expected, long next) {
    return (window & 1) == 0 ? EVEN.compareAndSet(this, expected, next) : ODD.compareAndSet(this, expected, next);
  }
}
