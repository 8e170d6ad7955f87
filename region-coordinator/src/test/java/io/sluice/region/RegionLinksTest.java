package io.sluice.region;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.sync.spi.Counter;
import io.sluice.sync.spi.StoreUnavailableException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RegionLinksTest {
  /** A region link that counts the calls made on it, and fails them while {@code down}. */
  private static final class CountingRegion implements RegionClient {
    int calls;
    boolean down;

    @Override
    public long epoch() {
      calls++;
      if (down) {
        throw new StoreUnavailableException("down (test)", null);
      }
      return 0;
    }

    @Override
    public List<String> keys(Limit limit, long window, int maxKeys) {
      calls++;
      return List.of();
    }

    @Override
    public List<RegionShareStore.KeyState> read(Limit limit, long window, List<String> keys) {
      calls++;
      return List.of();
    }

    @Override
    public RegionShareStore.WriteResult write(long epoch, Counter counter, long window, long nowMicros, Duration ttl,
        List<RegionShareStore.ShareWrite> writes) {
      calls++;
      return null;
    }

    @Override
    public void close() {
    }
  }

  @Test
  void aReplicaStandingByUsesEveryLinkOnceASecondWithoutCountingWhatFails() {
    List<Region> regions = List.of(Region.of("a", "redis://127.0.0.1:1"), Region.of("b", "redis://127.0.0.1:1"));
    CountingRegion a = new CountingRegion();
    CountingRegion b = new CountingRegion();
    b.down = true;
    try (RegionLinks links = new RegionLinks(regions, r -> r.name().equals("a") ? a : b)) {
      long t = 5_000_000_000L;
      links.keepWarm(t);
      assertThat(a.calls).as("the first round standing by connects").isEqualTo(1);
      assertThat(b.calls).isEqualTo(1);
      links.keepWarm(t + 250_000_000L);
      links.keepWarm(t + 999_000_000L);
      assertThat(a.calls).as("not at every round").isEqualTo(1);
      links.keepWarm(t + 1_000_000_000L);
      assertThat(a.calls).isEqualTo(2);
      assertThat(b.calls).as("a region down is tried again").isEqualTo(2);
      assertThat(links.regionErrors()).as("region errors are the leader's").isZero();
    }
  }
}
