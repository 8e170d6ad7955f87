package io.sluice.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * What a Sluice user gets from a Maven repository, checked on what this build publishes.
 *
 * <p>Every published module deploys, at its {@code verify}, what {@code deploy} would publish into a scratch
 * repository under the root's {@code target/} (the parent pom's {@code scratch-repository} execution). This
 * test reads that repository as Maven Central would serve it, then builds {@code src/consumer}, a Spring Boot
 * application that imports {@code sluice-bom} and depends on {@code sluice-spring-boot-starter} without a
 * version, with the project's own {@code ./mvnw}: Sluice's artifacts come from the scratch repository as a
 * remote ({@code file://}); third-party ones from this build's local repository, chained read-only behind an
 * empty local repository of the consumer's ({@code maven.repo.local.tail}), so the consumer build writes
 * nothing into {@code ~/.m2}.
 */
class ConsumerProjectIT {

  /** Modules that are not libraries: never published. */
  private static final Set<String> NOT_PUBLISHED = Set.of("limiter-cli", "benchmarks", "chaos-tests",
      "servlet-example", "spring-boot-servlet-example", "consumer-it");

  private final String version = property("sluice.version");
  private final Path repository = Path.of(property("sluice.scratch.repository"));
  private final Path sluice = repository.resolve("io/sluice");

  @Test
  void everyPublishedModuleIsInTheBomWithItsPomJarSourcesAndJavadoc() throws IOException {
    String bom = read(artifact("sluice-bom", ".pom"));
    assertThat(bom).as("the BOM is imported alone: no parent, whose dependency management would come along")
        .doesNotContain("<parent>");
    Set<String> managed = managedSluiceArtifacts(bom);

    Set<String> deployed;
    try (Stream<Path> dirs = Files.list(sluice)) {
      deployed = dirs.filter(d -> Files.isRegularFile(d.resolve(version).resolve(d.getFileName() + "-" + version + ".pom")))
          .map(d -> d.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
    }
    assertThat(deployed).as("deployed at " + version + " in " + sluice).doesNotContainAnyElementsOf(NOT_PUBLISHED);
    Set<String> libraries = new TreeSet<>(deployed);
    libraries.removeAll(Set.of("sluice-parent", "sluice-bom"));
    assertThat(managed).as("sluice-bom manages exactly the published libraries").isEqualTo(libraries);
    assertThat(managed).contains("limiter-node", "limiter-sync", "limiter-sync-redis", "limiter-sync-hazelcast",
        "limiter-http", "sluice-spring-boot-starter");

    for (String module : deployed) {
      String pom = read(artifact(module, ".pom"));
      assertThat(pom).as(module + "'s pom").doesNotContain("${revision}");
      assertThat(pom).as(module + "'s pom names its version").contains(version);
    }
    String parent = read(artifact("sluice-parent", ".pom"));
    assertThat(parent).contains("<licenses>", "Apache-2.0", "<scm", "<developers>", "<url>");

    for (String module : managed) {
      assertThat(artifact(module, ".jar")).isRegularFile();
      assertThat(entries(artifact(module, "-sources.jar"))).as(module + " sources")
          .anyMatch(e -> e.endsWith(".java"));
      assertThat(entries(artifact(module, "-javadoc.jar"))).as(module + " javadoc")
          .contains("index.html").anyMatch(e -> e.startsWith("io/sluice/") && e.endsWith(".html"));
    }
  }

  @Test
  void aSpringBootProjectOnTheBomAndTheStarterBuildsAndItsTestsPass() throws Exception {
    Path target = Path.of(property("sluice.consumer.target"));
    Path project = target.resolve("consumer");
    Path localRepository = target.resolve("consumer-repository");
    delete(project);
    delete(localRepository);
    copy(Path.of(property("sluice.consumer.source")), project);
    // its own project root, so that ./mvnw does not take the enclosing Sluice checkout for one
    Files.createDirectories(project.resolve(".mvn"));

    Path root = Path.of(property("sluice.root"));
    List<String> command = new ArrayList<>(List.of(root.resolve("mvnw").toString(), "-B",
        "-Dstyle.color=never",
        "-Dmaven.repo.local=" + localRepository,
        "-Dmaven.repo.local.tail=" + property("sluice.local.repository"),
        "-Dsluice.version=" + version,
        "-Dsluice.repository=" + repository.toUri()));
    for (String setting : property("sluice.consumer.properties").split(",")) {
      command.add("-D" + setting);
    }
    if (Boolean.parseBoolean(property("sluice.offline"))) {
      // offline as this build is: no remote but the scratch repository, which is a file:// one
      command.addAll(List.of("-o", "-Daether.offline.protocols=file"));
    }
    command.add("test");

    Path log = target.resolve("consumer-build.log");
    Process build = new ProcessBuilder(command).directory(project.toFile()).redirectErrorStream(true)
        .redirectOutput(log.toFile()).start();
    if (!build.waitFor(15, TimeUnit.MINUTES)) {
      build.destroyForcibly();
      throw new AssertionError("the consumer build did not end in 15 minutes; its log: " + log);
    }
    String output = read(log);
    assertThat(build.exitValue()).as("the consumer build (%s), ending:%n%s", log, tail(output, 80)).isZero();

    // its tests ran, and passed
    Path report = project.resolve("target/surefire-reports/TEST-example.consumer.ConsumerApplicationTest.xml");
    assertThat(report).as(tail(output, 80)).isRegularFile();
    String xml = read(report);
    assertThat(attribute(xml, "tests")).isEqualTo(3);
    assertThat(attribute(xml, "failures") + attribute(xml, "errors") + attribute(xml, "skipped")).isZero();

    // the starter came from the scratch repository, downloaded into the consumer's own local repository
    Path starter = localRepository.resolve("io/sluice/sluice-spring-boot-starter/" + version);
    assertThat(starter.resolve("sluice-spring-boot-starter-" + version + ".jar")).isRegularFile();
    assertThat(read(starter.resolve("_remote.repositories"))).contains("sluice-scratch");
  }

  private Path artifact(String module, String suffix) {
    return sluice.resolve(module).resolve(version).resolve(module + "-" + version + suffix);
  }

  private static Set<String> managedSluiceArtifacts(String bom) {
    Set<String> managed = new TreeSet<>();
    Matcher m = Pattern.compile("<groupId>io\\.sluice</groupId>\\s*<artifactId>([^<]+)</artifactId>").matcher(bom);
    while (m.find()) {
      managed.add(m.group(1));
    }
    return managed;
  }

  private static List<String> entries(Path jar) throws IOException {
    assertThat(jar).isRegularFile();
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      return zip.stream().map(e -> e.getName()).collect(Collectors.toList());
    }
  }

  private static int attribute(String xml, String name) {
    Matcher m = Pattern.compile("<testsuite [^>]*\\b" + name + "=\"(\\d+)\"").matcher(xml);
    assertThat(m.find()).as(name + " in the surefire report").isTrue();
    return Integer.parseInt(m.group(1));
  }

  private static String tail(String text, int lines) {
    List<String> all = text.lines().collect(Collectors.toList());
    return String.join(System.lineSeparator(), all.subList(Math.max(0, all.size() - lines), all.size()));
  }

  private static String property(String name) {
    String value = System.getProperty(name);
    assertThat(value).as("system property " + name + " (set by consumer-it's pom)").isNotBlank();
    return value;
  }

  private static String read(Path file) throws IOException {
    return Files.readString(file, StandardCharsets.UTF_8);
  }

  private static void copy(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      files.forEach(f -> {
        try {
          Path dest = to.resolve(from.relativize(f).toString());
          if (Files.isDirectory(f)) {
            Files.createDirectories(dest);
          } else {
            Files.copy(f, dest, StandardCopyOption.REPLACE_EXISTING);
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }
  }

  private static void delete(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path f : files.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
        Files.delete(f);
      }
    }
  }
}
