package io.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The metadata the configuration processor generated from SluiceProperties, as IDEs read it. */
class ConfigurationMetadataTest {

  @Test
  void theMainKeysAreDescribed() throws IOException {
    String metadata = null;
    for (URL url : Collections.list(getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json"))) {
      try (InputStream in = url.openStream()) {
        String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        if (text.contains("io.sluice.spring.SluiceProperties")) {
          metadata = text;
        }
      }
    }
    assertThat(metadata).as("Sluice's generated metadata on the classpath").isNotNull();
    Set<String> names = new LinkedHashSet<>();
    Matcher m = Pattern.compile("\"name\"\\s*:\\s*\"(sluice[^\"]*)\"").matcher(metadata);
    while (m.find()) {
      names.add(m.group(1));
    }
    assertThat(names).contains("sluice.enabled", "sluice.rules-file", "sluice.limits", "sluice.rules.always",
        "sluice.rules.plans", "sluice.rules.default-plan", "sluice.rules.endpoints", "sluice.store.redis-uri",
        "sluice.store.key-prefix", "sluice.sync.node-id", "sluice.sync.batch-size", "sluice.sync.sync-interval",
        "sluice.sync.on-store-failure", "sluice.sync.max-keys", "sluice.filter.enabled", "sluice.filter.order",
        "sluice.filter.url-patterns", "sluice.filter.api-key-header", "sluice.filter.trusted-proxies");
    // each with its description (from the field's comment) and type
    assertThat(metadata).containsPattern("\"name\"\\s*:\\s*\"sluice.sync.batch-size\"[^}]*\"description\"\\s*:\\s*\"Permits a key");
    assertThat(metadata).containsPattern(
        "\"name\"\\s*:\\s*\"sluice.sync.on-store-failure\"[^}]*\"type\"\\s*:\\s*\"io.sluice.sync.StoreFailurePolicy\"");
  }

  @Test
  void theHealthIndicatorsSwitchIsDescribed() throws IOException {
    // the README names management.health.sluice.enabled: an IDE should know it rather than flag it unknown
    String metadata = null;
    for (URL url : Collections.list(getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json"))) {
      try (InputStream in = url.openStream()) {
        String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        if (text.contains("io.sluice.spring.SluiceProperties")) {
          metadata = text;
        }
      }
    }
    assertThat(metadata).containsPattern(
        "\"name\"\\s*:\\s*\"management.health.sluice.enabled\"[^}]*\"type\"\\s*:\\s*\"java.lang.Boolean\"");
  }
}
