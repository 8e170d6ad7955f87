package io.sluice.sync.spi;

import java.util.Objects;

/**
 * The store's answer to one exact decision of a regional token bucket ({@link
 * ExactStore#acquireRegional}): the decision, and the share record the key holds after it (for the node
 * to pass back on its next decision of the key, see there).
 *
 * @param result the decision
 * @param record the key's share record; {@link ShareRecord#NONE} where it holds none
 */
public record RegionalDecision(ExactResult result, ShareRecord record) {
  public RegionalDecision {
    Objects.requireNonNull(result, "result");
    Objects.requireNonNull(record, "record");
  }
}
