package io.sluice.sync.spi;

import java.util.Objects;

/**
 * The store's answer to a claim of tokens of a regional token bucket ({@link TokenStore#claimRegionalTokens}):
 * the grant, and the share record the key holds after it (for the node to pass back on its next claim
 * of the key, as {@link ExactStore#acquireRegional} takes it).
 *
 * @param grant the tokens granted, in the units of the regional bucket (a permit is one window's length
 *     in microseconds): {@link TokenGrant#backlogBefore()} in those units
 * @param record the key's share record; {@link ShareRecord#NONE} where it holds none
 */
public record RegionalGrant(TokenGrant grant, ShareRecord record) {
  public RegionalGrant {
    Objects.requireNonNull(grant, "grant");
    Objects.requireNonNull(record, "record");
  }
}
