package io.sluice.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.Limit;
import io.sluice.sync.spi.StoreKeys;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Each (limit, domain, descriptor path) has a store key of its own. */
class RlsLimitersTest {
  @Test
  void keysAreUnambiguous() {
    // pairs that a plain join (domain_key_value, as the reference server's cache keys) would mix up
    List<String> keys = List.of(
        RlsLimiters.key("a_b", RlsConfigTest.entries("c", "d")),
        RlsLimiters.key("a", RlsConfigTest.entries("b_c", "d")),
        RlsLimiters.key("a", RlsConfigTest.entries("b", "c_d")),
        RlsLimiters.key("a", RlsConfigTest.entries("b", "c", "d", "")),
        RlsLimiters.key("a", RlsConfigTest.entries("b", "c|1:d=0:")),
        RlsLimiters.key("a|1:b=1:c", RlsConfigTest.entries("d", "")),
        RlsLimiters.key("a", RlsConfigTest.entries("b=1:c", "")),
        RlsLimiters.key("a", RlsConfigTest.entries("b", "=1:c")),
        RlsLimiters.key("", RlsConfigTest.entries("a", "b", "c", "d")),
        RlsLimiters.key("a", RlsConfigTest.entries("b", "c", "d", "e")),
        RlsLimiters.key("a", RlsConfigTest.entries("d", "e", "b", "c")));
    assertThat(new HashSet<>(keys)).hasSize(keys.size());
    assertThat(RlsLimiters.key("edge", RlsConfigTest.entries("api_key", "alice")))
        .isEqualTo("4:edge|7:api_key=5:alice");
  }

  @Test
  void limitNamesAreValidAndDistinctPerRateAndUnit() {
    Set<String> names = new HashSet<>();
    for (RlsUnit unit : RlsUnit.values()) {
      for (long rpu : new long[] {1, 5, 50, RlsLimit.MAX_REQUESTS_PER_UNIT}) {
        Limit l = RlsLimiters.limit(rpu, unit);
        assertThat(l.name()).doesNotContain("#").hasSizeLessThanOrEqualTo(64);
        assertThat(StoreKeys.storeName(l)).isEqualTo(l.name());
        assertThat(l.capacity()).isEqualTo(rpu);
        names.add(l.name());
      }
    }
    assertThat(names).hasSize(16);
    assertThat(new String(StoreKeys.counterKey("sluice", RlsLimiters.limit(5, RlsUnit.MINUTE), "4:edge|7:api_key=5:alice"),
        StandardCharsets.UTF_8)).isEqualTo("sluice:{16:rls-5-per-minute:4:edge|7:api_key=5:alice}");
  }
}
