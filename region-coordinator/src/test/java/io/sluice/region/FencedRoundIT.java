package io.sluice.region;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Counter;
import io.sluice.node.ManualTicker;
import io.sluice.region.RegionShareStore.KeyState;
import io.sluice.region.RegionShareStore.ShareWrite;
import io.sluice.region.RegionShareStore.WriteResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A leader that a region refuses (it accepted a newer epoch) stops its round there: no further writes
 * with a withdrawn epoch, nothing replicated, no summary of a round it did not finish. Regions here are
 * in memory (the coordinator's replicas are a real Hazelcast cluster of one).
 */
class FencedRoundIT {
  /** A region that accepts every write until told to refuse, and remembers each write's epoch. */
  private static final class FakeRegion implements RegionClient {
    volatile long newerEpoch; // 0: accept
    final List<Long> writeEpochs = new ArrayList<>();

    @Override
    public long epoch() {
      return newerEpoch;
    }

    @Override
    public List<String> keys(Limit limit, long window, int maxKeys) {
      return List.of("tenant-1");
    }

    @Override
    public List<KeyState> read(Limit limit, long window, List<String> keys) {
      return List.of(new KeyState("tenant-1", 10, 5, 0, -1, -1, -1, -1, 0, 0, 0));
    }

    @Override
    public synchronized WriteResult write(long epoch, Counter counter, long window, long nowMicros, Duration ttl,
        List<ShareWrite> writes) {
      writeEpochs.add(epoch);
      long[] shares = writes.stream().mapToLong(ShareWrite::share).toArray();
      long[] next = writes.stream().mapToLong(ShareWrite::nextShare).toArray();
      return newerEpoch > epoch ? new WriteResult(false, newerEpoch, shares, next) : new WriteResult(true, epoch, shares, next);
    }

    @Override
    public void close() {
    }
  }

  @Test
  void aRefusedLeaderStopsItsRound() {
    GlobalQuota api = GlobalQuota.builder("api").quota(6_000).window(Duration.ofSeconds(10)).keyPattern("tenant-*").build();
    CoordinatorConfig config = CoordinatorConfig.builder().cluster("fenced-" + UUID.randomUUID(), 5901, 20)
        .region(Region.of("a", "redis://127.0.0.1:1")).region(Region.of("b", "redis://127.0.0.1:1"))
        .region(Region.of("c", "redis://127.0.0.1:1")).quota(api).build();
    FakeRegion[] regions = {new FakeRegion(), new FakeRegion(), new FakeRegion()};
    List<Region> order = config.regions();
    ManualTicker ticker = new ManualTicker(Duration.ofHours(490_000).toNanos());
    try (RegionCoordinator coordinator = new RegionCoordinator(config, ticker, r -> regions[order.indexOf(r)], false)) {
      assertThat(coordinator.round()).isTrue();
      long epoch = coordinator.epoch();
      assertThat(epoch).isPositive();
      RegionCoordinator.QuotaSummary before = coordinator.lastRound().get("api");

      regions[1].newerEpoch = epoch + 1; // a newer leader wrote to region b
      ticker.advance(Duration.ofSeconds(1));
      assertThat(coordinator.round()).as("a fenced round is not a finished one").isFalse();
      assertThat(coordinator.fenced()).isTrue();
      assertThat(coordinator.lastRound().get("api")).as("no summary of the round it did not finish").isSameAs(before);
      for (FakeRegion r : regions) {
        assertThat(r.writeEpochs).as("no write after the refusal with a withdrawn epoch").doesNotContain(0L);
      }
      assertThat(coordinator.regionErrors()).isZero();
    }
  }
}
