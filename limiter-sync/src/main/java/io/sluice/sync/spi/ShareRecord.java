package io.sluice.sync.spi;

/**
 * A region's share record of one key of a regional quota, as the region coordinator last wrote it and
 * a node last read it: the window it was written for, the share there, the share of the later windows
 * of its lease, and the lease's last window. {@link #NONE} where the key has none (no coordinator, or a
 * region whose Redis lost it).
 *
 * @param window the window index the record was written for; -1 for none
 * @param share the region's share of that window (a token-bucket quota's: its refill per window)
 * @param later the share of the windows after it, up to {@code leaseEnd}
 * @param leaseEnd the last window the record covers; past it the region enforces the static share
 */
public record ShareRecord(long window, long share, long later, long leaseEnd) {
  /** No record. */
  public static final ShareRecord NONE = new ShareRecord(-1, -1, -1, -1);
}
