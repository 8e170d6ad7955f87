package io.sluice.sync.internal;

import io.sluice.sync.spi.ShareRecord;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A regional token bucket's share records, per key, as this node last read them from the store: each
 * decision or claim passes the key's back ({@code ExactStore#acquireRegional}, {@code
 * TokenStore#claimRegionalTokens}), so that a region whose Redis lost the key (a key lives through its
 * lease) gives it back the record, and its bucket refills at the share the coordinator counts the region
 * at, with no fresh burst. Kept for as long as the lease covers the key, whether or not the key is still
 * asked for: a record forgotten with an idle key (a token claim's holding swept after 400 ms) left a key
 * lost later to come back as a full bucket at the static share.
 *
 * <p>Bounded by the limiter's key table: a full table first forgets the records whose leases have ended,
 * and takes no new key while none has. Concurrency: a concurrent map; a key's record is replaced whole.
 */
final class ShareRecords {
  private final ConcurrentHashMap<String, ShareRecord> records = new ConcurrentHashMap<>();
  private final int maxRecords;

  ShareRecords(int maxRecords) {
    this.maxRecords = maxRecords;
  }

  /** The record this node last read for {@code key}, or {@link ShareRecord#NONE}. */
  ShareRecord known(String key) {
    return records.getOrDefault(key, ShareRecord.NONE);
  }

  /** Keeps the record {@code key} holds as the store answered it ({@code known}: the one passed with the call). */
  void remember(String key, ShareRecord known, ShareRecord read) {
    if (read.equals(known)) {
      return;
    }
    if (read.window() < 0) {
      records.remove(key);
      return;
    }
    if (records.size() >= maxRecords && !records.containsKey(key)) {
      records.values().removeIf(r -> r.leaseEnd() < read.window());
      if (records.size() >= maxRecords) {
        return;
      }
    }
    records.put(key, read);
  }
}
