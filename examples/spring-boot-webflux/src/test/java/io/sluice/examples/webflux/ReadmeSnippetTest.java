package io.sluice.examples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The root README's async snippet is this example's code between its "README: async" markers, which
 * TwoInstancesIT runs: the two stay one text.
 */
class ReadmeSnippetTest {

  @Test
  void theReadmesAsyncSnippetIsTheExamplesCode() throws IOException {
    String text = Files.readString(Path.of("../../README.md"), StandardCharsets.UTF_8);
    int marker = text.indexOf("<!-- async snippet: examples/spring-boot-webflux -->");
    assertThat(marker).as("the README's async snippet").isNotNegative();
    int start = text.indexOf("```java\n", marker) + "```java\n".length();
    String snippet = text.substring(start, text.indexOf("```", start));
    String source = Files.readString(Path.of("src/main/java/io/sluice/examples/webflux/ExampleApplication.java"),
        StandardCharsets.UTF_8);
    int from = source.indexOf("\n", source.indexOf("// README: async (begin)")) + 1;
    int to = source.lastIndexOf("\n", source.indexOf("// README: async (end)")) + 1;
    String code = source.substring(from, to).lines().map(l -> l.startsWith("  ") ? l.substring(2) : l)
        .collect(java.util.stream.Collectors.joining("\n", "", "\n"));
    assertThat(snippet).isEqualTo(code);
  }
}
