package io.sluice.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link SyncConfig}: defaults, copies, the checks that name their field, one config for several limits. */
class SyncConfigTest {
  private final ManualTicker ticker = new ManualTicker(0);

  @Test
  void defaultsAreTheDocumentedOnes() {
    SyncConfig c = SyncConfig.ofDefaults();
    assertThat(c.batchSize()).isEmpty();
    assertThat(c.bucketBatchSize()).as("buckets in exact mode").isEqualTo(1);
    assertThat(c.syncInterval()).isEqualTo(Duration.ofMillis(100));
    assertThat(c.maxError()).isEqualTo(0.005);
    assertThat(c.onStoreFailure()).isEqualTo(StoreFailurePolicy.LOCAL_SHARE);
    assertThat(c.claimTimeout()).isEqualTo(Duration.ofMillis(200));
    assertThat(c.flushTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.reservation()).isFalse();
    assertThat(c.regions()).isZero();
    assertThat(c.activeNodes()).isEmpty();
    assertThat(c.nodeId()).matches("node-[0-9a-f]{8}");
    assertThat(SyncConfig.ofDefaults().nodeId()).isNotEqualTo(c.nodeId());
  }

  @Test
  void aCopyKeepsEverySettingAndChangesOnlyWhatItIsTold() {
    SyncConfig base = SyncConfig.custom().nodeId("n1").batchSize(50).syncInterval(Duration.ofMillis(40))
        .maxError(0.01).onStoreFailure(StoreFailurePolicy.FAIL_CLOSED).maxKeys(1_000).reservation(true).minNodes(3)
        .claimTimeout(Duration.ofMillis(70)).flushTimeout(Duration.ofSeconds(1)).heartbeatInterval(Duration.ofMillis(300))
        .hotKeys(5, 10, 2).autoSync(false).bucketBatchSize(30).build();
    SyncConfig copy = SyncConfig.from(base).syncInterval(Duration.ofMillis(20)).build();
    assertThat(copy.syncInterval()).isEqualTo(Duration.ofMillis(20));
    assertThat(base.syncInterval()).as("the base is immutable").isEqualTo(Duration.ofMillis(40));
    assertThat(copy.nodeId()).isEqualTo("n1");
    assertThat(copy.batchSize()).contains(50L);
    assertThat(copy.maxError()).isEqualTo(0.01);
    assertThat(copy.onStoreFailure()).isEqualTo(StoreFailurePolicy.FAIL_CLOSED);
    assertThat(copy.maxKeys()).isEqualTo(1_000);
    assertThat(copy.minNodes()).isEqualTo(3);
    assertThat(copy.reservation()).isTrue();
    assertThat(copy.claimTimeout()).isEqualTo(Duration.ofMillis(70));
    assertThat(copy.flushTimeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(copy.heartbeatInterval()).isEqualTo(Duration.ofMillis(300));
    assertThat(copy.hotKeyFactor()).isEqualTo(5);
    assertThat(copy.minHotRate()).isEqualTo(10);
    assertThat(copy.hotBatchMultiplier()).isEqualTo(2);
    assertThat(copy.autoSync()).isFalse();
    assertThat(copy.bucketBatchSize()).isEqualTo(30);
    assertThat(base.toBuilder().build().toString()).isEqualTo(base.toString());
  }

  @Test
  void everySetterNamesItsFieldWhenItRefusesAValue() {
    SyncConfig.Builder b = SyncConfig.custom();
    assertThatThrownBy(() -> b.batchSize(0)).hasMessage("batchSize: must be at least 1, got 0");
    assertThatThrownBy(() -> b.bucketBatchSize(0)).hasMessage("bucketBatchSize: must be at least 1, got 0");
    assertThatThrownBy(() -> b.syncInterval(Duration.ZERO)).hasMessageStartingWith("syncInterval: must be positive");
    assertThatThrownBy(() -> b.maxError(0)).hasMessageStartingWith("maxError: must be in (0, 1]");
    assertThatThrownBy(() -> b.nodeId("a b")).hasMessageStartingWith("nodeId: ");
    assertThatThrownBy(() -> b.maxKeys(0)).hasMessageStartingWith("maxKeys: ");
    assertThatThrownBy(() -> b.minNodes(0)).hasMessage("minNodes: must be between 1 and 4095, got 0");
    assertThatThrownBy(() -> b.claimTimeout(Duration.ofMillis(-1))).hasMessageStartingWith("claimTimeout: ");
    assertThatThrownBy(() -> b.flushTimeout(null)).hasMessageStartingWith("flushTimeout: ");
    assertThatThrownBy(() -> b.heartbeatInterval(Duration.ZERO)).hasMessageStartingWith("heartbeatInterval: ");
    assertThatThrownBy(() -> b.onStoreFailure(null)).hasMessageStartingWith("onStoreFailure: ");
    assertThatThrownBy(() -> b.hotKeys(0.5, 1, 1)).hasMessageStartingWith("hotKeys.factor: ");
    assertThatThrownBy(() -> b.regionalQuota(-1)).hasMessageStartingWith("regionalQuota: ");
    assertThatThrownBy(() -> SyncConfig.from(null)).hasMessageStartingWith("base: ");
  }

  @Test
  void oneConfigServesAWindowLimitAndABucket() {
    SyncConfig shared = SyncConfig.custom().batchSize(20).ticker(ticker).autoSync(false).nodeId("a").build();
    Limit window = Limit.fixedWindow("w").limit(100).window(Duration.ofSeconds(1)).build();
    Limit bucket = Limit.tokenBucket("b").capacity(10).refill(5, Duration.ofSeconds(1)).build();
    try (MemoryStore store = new MemoryStore();
        SyncedLimiter w = SyncedLimiter.of(window, store, shared);
        SyncedLimiter b = SyncedLimiter.of(bucket, store, shared)) {
      assertThat(w.batchSize()).isEqualTo(20);
      assertThat(b.batchSize()).as("a bucket is shared in exact mode whatever the config says").isEqualTo(1);
      assertThat(w.config()).isSameAs(shared);
      assertThat(w.nodeId()).isEqualTo("a");
      for (int i = 0; i < 10; i++) {
        assertThat(b.tryAcquire("k")).isTrue();
      }
      assertThat(b.tryAcquire("k")).as("the bucket's eleventh token").isFalse();
    }
  }

  /**
   * A shared config's bucket batch size batches the buckets built with it (token claims: far fewer
   * store calls than decisions), the window limits keep their own batch size, and a bucket's own
   * builder still decides for itself, exact mode included.
   */
  @Test
  void aConfigsBucketBatchSizeBatchesTheBucketsBuiltWithIt() {
    SyncConfig shared = SyncConfig.custom().batchSize(20).bucketBatchSize(50).ticker(ticker).autoSync(false)
        .nodeId("a").build();
    Limit window = Limit.fixedWindow("w").limit(100).window(Duration.ofSeconds(1)).build();
    Limit bucket = Limit.tokenBucket("b").capacity(1_000).refill(100, Duration.ofSeconds(1)).build();
    try (MemoryStore store = new MemoryStore();
        SyncedLimiter w = SyncedLimiter.of(window, store, shared);
        SyncedLimiter b = SyncedLimiter.of(bucket, store, shared);
        SyncedLimiter exact = SyncedLimiter.builder(bucket, store).config(shared).batchSize(1).build()) {
      assertThat(w.batchSize()).isEqualTo(20);
      assertThat(b.batchSize()).isEqualTo(50);
      assertThat(exact.batchSize()).as("the bucket's own builder says exact").isEqualTo(1);
      long before = store.calls();
      for (int i = 0; i < 200; i++) {
        assertThat(b.tryAcquire("k")).isTrue();
      }
      assertThat(store.calls() - before).as("store calls for 200 decisions on claimed tokens").isLessThan(20);
    }
  }

  @Test
  void whatDependsOnTheLimitIsCheckedWhenTheLimiterIsBuilt() {
    Limit window = Limit.fixedWindow("w").limit(100).window(Duration.ofSeconds(1)).build();
    SyncConfig slow = SyncConfig.custom().syncInterval(Duration.ofMillis(600)).autoSync(false).build();
    try (MemoryStore store = new MemoryStore()) {
      assertThatThrownBy(() -> SyncedLimiter.of(window, store, slow))
          .hasMessageStartingWith("syncInterval: at most half the window 1s of limit w");
      assertThatThrownBy(() -> SyncedLimiter.of(window, store, null)).hasMessage("config: must not be null");
    }
  }

  @Test
  void aConfigGivenToTheBuilderReplacesWhatWasSetBefore() {
    Limit window = Limit.fixedWindow("w").limit(100).window(Duration.ofSeconds(1)).build();
    SyncConfig c = SyncConfig.custom().nodeId("from-config").autoSync(false).build();
    try (MemoryStore store = new MemoryStore();
        SyncedLimiter node = SyncedLimiter.builder(window, store).nodeId("set-before").batchSize(7).config(c)
            .build()) {
      assertThat(node.nodeId()).isEqualTo("from-config");
      assertThat(node.batchSize()).isEqualTo(SyncConfig.DEFAULT_BATCH_SIZE);
    }
  }
}
