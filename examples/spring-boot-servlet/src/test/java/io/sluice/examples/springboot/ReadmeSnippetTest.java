package io.sluice.examples.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The root README's application.yml is this example's, which TwoInstancesIT runs: the two stay one text. */
class ReadmeSnippetTest {

  @Test
  void theReadmesApplicationYmlIsTheOneTheItRuns() throws IOException {
    Path readme = Path.of("../../README.md");
    String text = Files.readString(readme, StandardCharsets.UTF_8);
    int section = text.indexOf("## Spring Boot (sluice-spring-boot-starter)");
    assertThat(section).as("the README's Spring Boot section").isNotNegative();
    int start = text.indexOf("```yaml\n", section) + "```yaml\n".length();
    int end = text.indexOf("```", start);
    String snippet = text.substring(start, end);
    String yml = Files.readString(Path.of("src/main/resources/application.yml"), StandardCharsets.UTF_8);
    assertThat(snippet).isEqualTo(yml);
  }
}
