package io.sluice.region;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Bad configuration fails at build time with the field named. */
class CoordinatorConfigTest {
  private static GlobalQuota.Builder quota(String name) {
    return GlobalQuota.builder(name).quota(1_000).window(Duration.ofSeconds(10));
  }

  private static CoordinatorConfig.Builder regions() {
    return CoordinatorConfig.builder().region(Region.of("eu", "redis://127.0.0.1:1"))
        .region(Region.of("us", "redis://127.0.0.1:2"));
  }

  @Test
  void floorsAboveTheQuotaAreRefused() {
    assertThatThrownBy(() -> regions().quota(quota("q").floor("eu", 600).floor("us", 500).build()).build())
        .hasMessage("quotas[q].floor: the regions' floors sum to 1100, more than the quota 1000");
  }

  @Test
  void floorsOfUnknownRegionsAreRefused() {
    assertThatThrownBy(() -> regions().quota(quota("q").floor("asia", 10).build()).build())
        .hasMessageStartingWith("quotas[q].floor: unknown region asia");
  }

  @Test
  void duplicateNamesAreRefused() {
    assertThatThrownBy(() -> regions().quota(quota("q").build()).quota(quota("q").build()).build())
        .hasMessage("quotas: duplicate quota name q");
    assertThatThrownBy(() -> regions().region(Region.of("eu", "redis://127.0.0.1:3")).quota(quota("q").build()).build())
        .hasMessage("regions: duplicate region name eu");
  }

  @Test
  void fieldsAreNamed() {
    assertThatThrownBy(() -> GlobalQuota.builder("q").window(Duration.ofSeconds(1)).build()).hasMessageStartingWith("quota:");
    assertThatThrownBy(() -> GlobalQuota.builder("q").quota(0)).hasMessageStartingWith("quota:");
    assertThatThrownBy(() -> GlobalQuota.builder("bad name")).hasMessageStartingWith("name:");
    assertThatThrownBy(() -> GlobalQuota.builder("q").floorFraction(2)).hasMessageStartingWith("floorFraction:");
    assertThatThrownBy(() -> Region.of("eu", "")).hasMessageStartingWith("region.redis:");
    assertThatThrownBy(() -> regions().build()).hasMessageStartingWith("quotas:");
    assertThatThrownBy(() -> CoordinatorConfig.builder().quota(quota("q").build()).build())
        .hasMessageStartingWith("regions:");
    assertThatThrownBy(() -> CoordinatorConfig.builder().smoothing(0)).hasMessageStartingWith("smoothing:");
    // a token bucket's burst is split between the regions too
    assertThatThrownBy(() -> regions().quota(quota("b").tokenBucket(1).build()).build())
        .hasMessageStartingWith("quotas[b].regions: must be at most the burst 1 of limit b");
    assertThatThrownBy(() -> GlobalQuota.builder("b").quota(10).window(Duration.ofSeconds(1)).tokenBucket(0))
        .hasMessageStartingWith("burst:");
    assertThatThrownBy(() -> quota("b").slidingWindow().tokenBucket(10).build())
        .hasMessageStartingWith("tokenBucket: a quota is a token bucket or a sliding window");
    assertThatThrownBy(() -> CoordinatorConfig.builder().cluster("c", 65535, 2)).hasMessageStartingWith("cluster.port:");
  }

  @Test
  void keyPatternsAreGlobs() {
    GlobalQuota q = quota("q").keyPattern("tenant-*.api").build();
    assertThat(q.matches("tenant-42.api")).isTrue();
    assertThat(q.matches("tenant-.api")).isTrue();
    assertThat(q.matches("tenant-42.apix")).isFalse();
    assertThat(q.matches("xtenant-42.api")).isFalse();
    assertThat(quota("r").keyPattern("a.b").build().matches("axb")).isFalse(); // '.' is literal
    assertThat(quota("s").build().matches("anything at all")).isTrue();
  }

  @Test
  void defaultFloorIsATenthOfTheStaticShare() {
    GlobalQuota q = quota("q").floor("us", 7).build();
    assertThat(q.floor("eu", 2)).isEqualTo(50);
    assertThat(q.floor("us", 2)).isEqualTo(7);
  }
}
