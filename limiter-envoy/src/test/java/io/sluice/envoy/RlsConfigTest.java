package io.sluice.envoy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RlsConfigTest {
  /** The reference server's README examples 2, 3 and 7, and a wildcard, in one domain each. */
  static final String MESSAGING = String.join("\n",
      "# only 5 marketing messages a day to a number, 100 of any kind",
      "domain: messaging",
      "descriptors:",
      "  - key: message_type",
      "    value: marketing",
      "    descriptors:",
      "      - key: to_number",
      "        rate_limit:",
      "          unit: day",
      "          requests_per_unit: 5",
      "  - key: to_number",
      "    rate_limit:",
      "      unit: day",
      "      requests_per_unit: 100",
      "");

  static final String EDGE = String.join("\n",
      "domain: edge_proxy_per_ip",
      "descriptors:",
      "  - key: remote_address",
      "    detailed_metric: true",
      "    rate_limit:",
      "      unit: second",
      "      requests_per_unit: 10",
      "  - key: remote_address",
      "    value: 50.0.0.5",
      "    rate_limit:",
      "      unit: second",
      "      requests_per_unit: 0",
      "  - key: path",
      "    value: /api/*",
      "    rate_limit: {unit: minute, requests_per_unit: 20}",
      "  - key: internal",
      "    rate_limit:",
      "      unlimited: true",
      "  - key: new_rule",
      "    shadow_mode: true",
      "    rate_limit: {unit: hour, requests_per_unit: 3, name: new_rule}",
      "  - key: placeholder",
      "");

  static List<RateLimitDescriptor.Entry> entries(String... kv) {
    List<RateLimitDescriptor.Entry> out = new ArrayList<>();
    for (int i = 0; i < kv.length; i += 2) {
      out.add(RateLimitDescriptor.Entry.newBuilder().setKey(kv[i]).setValue(kv[i + 1]).build());
    }
    return out;
  }

  @Test
  void nestedDescriptorsFollowTheRequestsEntriesInOrder() {
    RlsConfig c = RlsConfig.parse("messaging.yaml", MESSAGING);
    assertThat(c.domains()).containsExactly("messaging");
    RlsLimit five = c.match("messaging", entries("message_type", "marketing", "to_number", "2061111111"));
    assertThat(five).isNotNull();
    assertThat(five.requestsPerUnit()).isEqualTo(5);
    assertThat(five.unit()).isEqualTo(RlsUnit.DAY);
    RlsLimit hundred = c.match("messaging", entries("to_number", "2061111111"));
    assertThat(hundred.requestsPerUnit()).isEqualTo(100);
    // the placeholder alone has no limit; a value the file does not name matches nothing at that level
    assertThat(c.match("messaging", entries("message_type", "marketing"))).isNull();
    assertThat(c.match("messaging", entries("message_type", "transactional", "to_number", "1"))).isNull();
    // the entries in another order are another path
    assertThat(c.match("messaging", entries("to_number", "1", "message_type", "marketing"))).isNull();
    // deeper than the file: no limit (the reference server's example 4)
    assertThat(c.match("messaging", entries("to_number", "1", "extra", "x"))).isNull();
    assertThat(c.match("other", entries("to_number", "1"))).isNull();
  }

  @Test
  void aKeyWithItsValueIsMatchedBeforeAWildcardBeforeTheKeyAlone() {
    RlsConfig c = RlsConfig.parse("edge.yaml", EDGE);
    assertThat(c.match("edge_proxy_per_ip", entries("remote_address", "50.0.0.1")).requestsPerUnit()).isEqualTo(10);
    assertThat(c.match("edge_proxy_per_ip", entries("remote_address", "50.0.0.5")).requestsPerUnit()).isEqualTo(0);
    assertThat(c.match("edge_proxy_per_ip", entries("path", "/api/users")).requestsPerUnit()).isEqualTo(20);
    assertThat(c.match("edge_proxy_per_ip", entries("path", "/web/users"))).isNull();
    assertThat(c.match("edge_proxy_per_ip", entries("internal", "x")).unlimited()).isTrue();
    RlsLimit shadow = c.match("edge_proxy_per_ip", entries("new_rule", "k"));
    assertThat(shadow.shadowMode()).isTrue();
    assertThat(shadow.name()).isEqualTo("new_rule");
    assertThat(c.match("edge_proxy_per_ip", entries("placeholder", "x"))).isNull();
  }

  @Test
  void replacesAndNamesAreRead() {
    RlsConfig c = RlsConfig.parse("example7.yaml", String.join("\n",
        "domain: example7",
        "descriptors:",
        "  - key: key_1",
        "    value: value_1",
        "    descriptors:",
        "      - key: user",
        "        value: bkthomps",
        "        rate_limit: {name: specific_limit, requests_per_unit: 5, unit: second}",
        "  - key: key_2",
        "    value: value_2",
        "    descriptors:",
        "      - key: user",
        "        value: bkthomps",
        "        rate_limit:",
        "          replaces:",
        "            - name: specific_limit",
        "          requests_per_unit: 10",
        "          unit: second",
        ""));
    RlsLimit replacing = c.match("example7", entries("key_2", "value_2", "user", "bkthomps"));
    assertThat(replacing.replaces()).containsExactly("specific_limit");
    assertThat(c.limits()).hasSize(2);
  }

  @Test
  void filesAndDirectoriesLoadOneDomainEach(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("a.yaml"), MESSAGING);
    Files.writeString(dir.resolve("b.yml"), EDGE);
    Files.writeString(dir.resolve("notes.txt"), "not a config");
    RlsConfig c = RlsConfig.load(List.of(dir));
    assertThat(c.domains()).containsExactlyInAnyOrder("messaging", "edge_proxy_per_ip");

    Files.writeString(dir.resolve("c.yaml"), "domain: messaging\n");
    assertThatThrownBy(() -> RlsConfig.load(List.of(dir)))
        .hasMessage(dir.resolve("c.yaml") + ":1: domain: \"messaging\" is configured in " + dir.resolve("a.yaml")
            + " already");
    assertThatThrownBy(() -> RlsConfig.load(List.of(dir.resolve("missing.yaml"))))
        .hasMessageStartingWith(dir.resolve("missing.yaml") + ": cannot read the file");
  }

  /** Each bad file and the exact message: file, line, the field's path, what is wrong. */
  @Test
  void errorsNameTheFileLineAndField() {
    Map<String, String> cases = Map.ofEntries(
        Map.entry("descriptors:\n  - key: a\n", "f.yaml:1: domain: required"),
        Map.entry("domain: \"\"\n", "f.yaml:1: domain: must not be empty"),
        Map.entry("", "f.yaml:1: domain: required (the file is empty)"),
        Map.entry("domain: d\ndescriptors:\n  - value: v\n    rate_limit: {unit: second, requests_per_unit: 1}\n",
            "f.yaml:3: descriptors[0].key: required, must not be empty"),
        Map.entry("domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: fortnight\n      requests_per_unit: 1\n",
            "f.yaml:5: descriptors[0].rate_limit.unit: must be second, minute, hour or day, got \"fortnight\""),
        Map.entry("domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: month\n      requests_per_unit: 1\n",
            "f.yaml:5: descriptors[0].rate_limit.unit: must be second, minute, hour or day, got \"month\""),
        Map.entry("domain: d\ndescriptors:\n  - key: a\n    descriptors:\n      - key: b\n        rate_limit:\n"
            + "          unit: second\n          requests_per_unit: -3\n",
            "f.yaml:8: descriptors[0].descriptors[0].rate_limit.requests_per_unit: must be a whole number from 0 to"
                + " 2147483647, got \"-3\""),
        Map.entry("domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n      requests_per_unit: lots\n",
            "f.yaml:6: descriptors[0].rate_limit.requests_per_unit: must be a whole number from 0 to 2147483647,"
                + " got \"lots\""),
        Map.entry("domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n",
            "f.yaml:5: descriptors[0].rate_limit.requests_per_unit: required (0 refuses every request)"),
        Map.entry("domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n"
            + "      requests_per_unit: 4294967295\n",
            "f.yaml:6: descriptors[0].rate_limit.requests_per_unit: must be a whole number from 0 to 2147483647,"
                + " got \"4294967295\""),
        Map.entry("domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      requests_per_unit: 4\n",
            "f.yaml:5: descriptors[0].rate_limit.unit: required (second, minute, hour or day), or unlimited: true"),
        Map.entry("domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unlimited: true\n      unit: second\n",
            "f.yaml:6: descriptors[0].rate_limit.unit: must not be given with unlimited: true"),
        Map.entry("domain: d\ndescriptors:\n  - key: a\n    rate_limt:\n      unit: second\n",
            "f.yaml:4: descriptors[0].rate_limt: unknown field (known here: descriptors, detailed_metric, key,"
                + " rate_limit, shadow_mode, value)"),
        Map.entry("domain: d\ndescriptors:\n  - key: a\n    value: b\n  - key: a\n    value: b\n",
            "f.yaml:5: descriptors[1]: duplicate descriptor: key \"a\" with value \"b\" is in this list already"),
        Map.entry("domain: d\ndescriptors:\n  - key: a\n  - key: a\n",
            "f.yaml:4: descriptors[1]: duplicate descriptor: key \"a\" without a value is in this list already"),
        Map.entry("domain: d\ndescriptors:\n  - key: a\n    shadow_mode: maybe\n",
            "f.yaml:4: descriptors[0].shadow_mode: must be true or false, got \"maybe\""),
        Map.entry("domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      name: x\n      unit: second\n"
            + "      requests_per_unit: 1\n      replaces:\n        - name: x\n",
            "f.yaml:9: descriptors[0].rate_limit.replaces[0].name: a limit cannot replace itself (\"x\")"),
        Map.entry("domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n"
            + "      requests_per_unit: 1\n      replaces:\n        - {}\n",
            "f.yaml:8: descriptors[0].rate_limit.replaces[0].name: required, must not be empty"),
        Map.entry("domain: d\ndescriptors:\n  key: a\n", "f.yaml:3: descriptors: must be a list of descriptors"),
        Map.entry("domain: d\ndescriptors:\n  - key: [a, b]\n",
            "f.yaml:3: descriptors[0].key: must be a single value, not a list or mapping"),
        Map.entry("- domain: d\n", "f.yaml:1: (top level): must be a mapping (field: value)"),
        Map.entry("domain: d\ndomain: e\n", "f.yaml:2: domain: given twice"));
    for (Map.Entry<String, String> c : cases.entrySet()) {
      assertThatThrownBy(() -> RlsConfig.parse("f.yaml", c.getKey()))
          .as("%s", c.getKey())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(c.getValue());
    }
  }

  @Test
  void malformedYamlNamesTheLine() {
    assertThatThrownBy(() -> RlsConfig.parse("f.yaml", "domain: d\ndescriptors:\n  - key: a\n   value: [\n"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("f.yaml:")
        .hasMessageContaining("not valid YAML");
  }

  @Test
  void valuesAreTheScalarsTextAndAnEmptyValueIsNoValue() {
    RlsConfig c = RlsConfig.parse("f.yaml", String.join("\n",
        "domain: d",
        "descriptors:",
        "  - key: code",
        "    value: 010",
        "    rate_limit: {unit: second, requests_per_unit: 7}",
        "  - key: flag",
        "    value: \"\"",
        "    rate_limit: {unit: second, requests_per_unit: 8}",
        "  - key: on",
        "    rate_limit: {unit: SECOND, requests_per_unit: 9}",
        ""));
    assertThat(c.match("d", entries("code", "010")).requestsPerUnit()).isEqualTo(7);
    assertThat(c.match("d", entries("code", "10"))).isNull();
    assertThat(c.match("d", entries("flag", "anything")).requestsPerUnit()).isEqualTo(8);
    assertThat(c.match("d", entries("on", "x")).requestsPerUnit()).isEqualTo(9);
  }
}
