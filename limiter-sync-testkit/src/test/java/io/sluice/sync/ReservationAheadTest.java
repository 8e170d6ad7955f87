package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Reservation mode, a small limit shared by several nodes: a node whose part of what is left is a
 * permit or less asks for its request's permits only, nothing ahead. A key asked again within a sync
 * interval asked for twice as much ahead each time, and with eight nodes on a limit of 10 the permits
 * held ahead by one node were the ones another node's requests were denied (the accuracy kit's small
 * limits at 8 nodes: 2.3% of requests denied that the exact algorithm admitted, 0.02% now).
 */
class ReservationAheadTest {
  private static final long SECOND = 1_000_000_000L;

  @Test
  void aNodeTakesNothingAheadOfItsRequestsWhenItsPartIsAPermit() {
    Limit limit = Limit.fixedWindow("ahead").limit(10).window(Duration.ofSeconds(1)).build();
    MemoryStore store = new MemoryStore();
    ManualTicker ticker = new ManualTicker(1_000 * SECOND);
    SyncedLimiter.Builder b = SyncedLimiter.builder(limit, store).ticker(ticker).autoSync(false)
        .activeNodes(() -> 8).reservation();
    try (SyncedLimiter first = b.nodeId("a").build(); SyncedLimiter second = b.nodeId("b").build()) {
      // within a sync interval of one another: asking ahead, the second and fourth requests would each
      // have taken a permit more, and the fourth's would have been left over
      for (int i = 0; i < 4; i++) {
        assertThat(first.tryAcquire("k")).isTrue();
        ticker.advance(Duration.ofMillis(1));
      }
      assertThat(store.count("ahead", "k", 1_000)).as("granted to the first node").isEqualTo(4);
      int admitted = 0;
      for (int i = 0; i < 10; i++) {
        if (second.tryAcquire("k")) {
          admitted++;
        }
      }
      assertThat(admitted).as("the rest of the limit, for the second node's requests").isEqualTo(6);
    }
  }

  /**
   * A node that counts itself alone before the registry has confirmed it (its count from one answer,
   * or none yet) may be the first of several started together: it asks as one of two, an eighth of its
   * even share of what is left, not half of it, which it would hold from the nodes started beside it.
   * Confirmed alone (here: told its count), half. A key at 2,000 a second on a limit of 1,000: after 600
   * decisions the unconfirmed node holds 11 ahead, the confirmed one 56.
   */
  @Test
  void aNodeAloneBeforeTheRegistryHasConfirmedItAsksAsOneOfTwo() {
    Limit limit = Limit.fixedWindow("unconfirmed").limit(1_000).window(Duration.ofSeconds(1)).build();
    MemoryStore store = new MemoryStore();
    ManualTicker ticker = new ManualTicker(1_000 * SECOND);
    SyncedLimiter.Builder b = SyncedLimiter.builder(limit, store).ticker(ticker).autoSync(false).batchSize(1_000)
        .reservation();
    try (SyncedLimiter unconfirmed = b.nodeId("a").build();
        SyncedLimiter confirmed = b.nodeId("b").activeNodes(() -> 1).build()) {
      // 2,000 a second for 300 ms, synced every 100 ms
      for (int i = 1; i <= 600; i++) {
        assertThat(unconfirmed.tryAcquire("k")).isTrue();
        assertThat(confirmed.tryAcquire("k2")).isTrue();
        ticker.advance(Duration.ofNanos(500_000));
        if (i % 200 == 0) {
          unconfirmed.syncNow();
          confirmed.syncNow();
        }
      }
      long heldUnconfirmed = store.count("unconfirmed", "k", 1_000) - 600;
      long heldConfirmed = store.count("unconfirmed", "k2", 1_000) - 600;
      // (about 400 left: an eighth of half of it is 25; here 11 against 56, 81 before)
      assertThat(heldUnconfirmed).as("held ahead by the unconfirmed node").isLessThanOrEqualTo(25);
      assertThat(heldConfirmed).as("held ahead by the node confirmed alone").isGreaterThan(2 * heldUnconfirmed);
    }
  }

  /**
   * A node the registry has confirmed alone asks for its next grant at a sync, before the one it holds
   * runs out, and its decisions do not wait for the store. The flusher asks ahead for the keys whose
   * rate it has measured, and it measures a key where it syncs it: a view that only spent grants had
   * nothing to send, so it was never measured, and every grant was asked for by a decision that found
   * the last one spent (the accuracy kit, one node: 35-39% of decisions waited on sparse keys, 9% now,
   * store calls 362-388 -> 184-240 per 1,000). A key at 100 a second on a limit of 10,000 per 10 s,
   * synced every 100 ms: of its last 200 decisions, 33 waited before, none now. (With other nodes a
   * grant held ahead is budget their requests are denied: there decisions still ask as they need.)
   */
  @Test
  void aNodeConfirmedAloneAsksForItsNextGrantAtASync() {
    Limit limit = Limit.fixedWindow("alone").limit(10_000).window(Duration.ofSeconds(10)).build();
    ManualTicker ticker = new ManualTicker(1_000 * 10 * SECOND);
    try (SyncedLimiter node = SyncedLimiter.builder(limit, new MemoryStore()).ticker(ticker).autoSync(false)
        .activeNodes(() -> 1).reservation().build()) {
      long waitedBefore = 0;
      for (int i = 1; i <= 300; i++) {
        if (i == 101) {
          waitedBefore = node.waitedDecisions();
        }
        assertThat(node.tryAcquire("k")).isTrue();
        ticker.advance(Duration.ofMillis(10));
        if (i % 10 == 0) {
          node.syncNow();
        }
      }
      assertThat(node.waitedDecisions() - waitedBefore).as("of the last 200 decisions, those that waited for a grant")
          .isZero();
    }
  }

  /**
   * Grants are taken first come, first served, so what nodes hold ahead of their requests when the
   * budget runs out is what the other nodes' requests are denied: each node takes at once at most an
   * eighth of its even share of what is left (half of it let five nodes spend a limit of 20 with 10
   * used, and a key at half its limit was denied).
   */
  @Test
  void whatNodesHoldAheadIsASmallPartOfTheLimit() {
    Limit limit = Limit.fixedWindow("held").limit(100).window(Duration.ofSeconds(1)).build();
    MemoryStore store = new MemoryStore();
    ManualTicker ticker = new ManualTicker(1_000 * SECOND);
    SyncedLimiter.Builder b = SyncedLimiter.builder(limit, store).ticker(ticker).autoSync(false)
        .activeNodes(() -> 5).reservation();
    SyncedLimiter[] nodes = new SyncedLimiter[5];
    try {
      for (int n = 0; n < nodes.length; n++) {
        nodes[n] = b.nodeId("n" + n).build();
      }
      // a key at 1,000 a second over five nodes: 10 requests each, 1 ms apart
      int admitted = 0;
      long mostHeld = 0;
      for (int i = 0; i < 50; i++) {
        if (nodes[i % 5].tryAcquire("k")) {
          admitted++;
        }
        mostHeld = Math.max(mostHeld, store.count("held", "k", 1_000) - admitted);
        ticker.advance(Duration.ofMillis(1));
      }
      assertThat(admitted).isEqualTo(50);
      assertThat(mostHeld).as("granted and not used yet, over all nodes, at most").isLessThanOrEqualTo(100 / 8);
    } finally {
      for (SyncedLimiter n : nodes) {
        if (n != null) {
          n.close();
        }
      }
    }
  }

  /**
   * Requests that cost more than a node would take ahead of them (its grant ahead at most the batch
   * size, 100 permits, against requests of 1,000): a grant ahead pays for none of them alone, and
   * held between a node's requests it is budget another node's request is denied for, while it fits
   * what the exact algorithm has free. Found by the accuracy kit on seeds it does not run (large limit,
   * costs 1-2,000, sliding window, 3 nodes: 1.5-1.9% of requests denied that the exact algorithm
   * admitted, each node holding 100 ahead at the limit; 0-1.3% now). Two nodes, alternating requests of
   * 1,000 on a fixed window of 10,000: the tenth fits exactly, and is admitted only if nothing is held
   * ahead.
   */
  @Test
  void aNodeTakesNothingAheadThatPaysForLessThanOneRequest() {
    Limit limit = Limit.fixedWindow("costly").limit(10_000).window(Duration.ofSeconds(1)).build();
    MemoryStore store = new MemoryStore();
    ManualTicker ticker = new ManualTicker(1_000 * SECOND);
    SyncedLimiter.Builder b = SyncedLimiter.builder(limit, store).ticker(ticker).autoSync(false)
        .activeNodes(() -> 2).reservation();
    try (SyncedLimiter first = b.nodeId("a").build(); SyncedLimiter second = b.nodeId("b").build()) {
      for (int i = 0; i < 10; i++) {
        assertThat((i % 2 == 0 ? first : second).tryAcquire("k", 1_000)).as("request %d of 1,000", i + 1).isTrue();
        ticker.advance(Duration.ofMillis(5));
      }
      assertThat(store.count("costly", "k", 1_000)).as("granted: what was admitted, nothing held ahead").isEqualTo(10_000);
    }
  }
}
