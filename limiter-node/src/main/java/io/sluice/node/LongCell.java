package io.sluice.node;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/** One long, changed by CAS: the state of the bucket and fixed-window algorithms (24 bytes). */
final class LongCell extends KeyState {
  private static final VarHandle VALUE;

  static {
    try {
      VALUE = MethodHandles.lookup().findVarHandle(LongCell.class, "value", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  volatile long value;

  LongCell(long value) {
    this.value = value;
  }

  boolean cas(long expected, long next) {
    return VALUE.compareAndSet(this, expected, next);
  }
}
