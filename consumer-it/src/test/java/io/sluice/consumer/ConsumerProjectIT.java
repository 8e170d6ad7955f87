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
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a Sluice user gets from a Maven repository, checked on what this build publishes.
 *
 * <p>First, {@code ./mvnw -DskipTests -pl :consumer-it -am install} with a scratch local repository
 * ({@code target/scratch-repository}) in front of this build's own, which is chained behind it read-only
 * ({@code maven.repo.local.tail}): the published modules (this module's dependencies), their parent and the BOM
 * are installed there, with their sources and javadoc jars, and nothing is written into {@code ~/.m2}; third-party
 * artifacts are read from it. The modules are already built by the reactor, so this mostly packages again.
 *
 * <p>Then the checks of that repository as Maven Central would serve it, and the build of {@code src/consumer},
 * a Spring Boot application that imports {@code sluice-bom} and depends on {@code sluice-spring-boot-starter}
 * without a version: Sluice's artifacts come from the scratch repository as a remote ({@code file://}),
 * third-party ones again from this build's local repository (its {@code io/sluice} left out), chained
 * read-only behind an empty one.
 */
class ConsumerProjectIT {

  private final String version = property("sluice.version");
  private final Path repository = Path.of(property("sluice.scratch.repository"));
  private final Path sluice = repository.resolve("io/sluice");
  private final Path target = Path.of(property("sluice.consumer.target"));

  /** Installs the published artifacts into the scratch repository, once for both tests. */
  @BeforeAll
  static void install() throws Exception {
    Path repository = Path.of(property("sluice.scratch.repository"));
    delete(repository);
    Path root = Path.of(property("sluice.root"));
    List<String> command = maven(root, repository);
    command.addAll(List.of("-DskipTests", "-pl", ":consumer-it", "-am", "install"));
    run(command, root, Path.of(property("sluice.consumer.target")).resolve("install.log"));
  }

  /** {@code ./mvnw} with this local repository in front of this build's, offline when this build is. */
  private static List<String> maven(Path root, Path localRepository) throws IOException {
    List<String> command = new ArrayList<>(List.of(root.resolve("mvnw").toString(), "-B", "-Dstyle.color=never",
        "-Dmaven.repo.local=" + localRepository,
        "-Dmaven.repo.local.tail=" + thirdPartyRepository()));
    if (property("sluice.offline").equals("offline:true")) {
      // offline as this build is; the consumer's one remote, the scratch repository, is a file:// one
      command.addAll(List.of("-o", "-Daether.offline.protocols=file"));
    }
    return command;
  }

  /** Runs a build to its end and answers its log; fails with the log's end when the build does. */
  private static String run(List<String> command, Path directory, Path log) throws Exception {
    Files.createDirectories(log.getParent());
    Process build = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true)
        .redirectOutput(log.toFile()).start();
    if (!build.waitFor(15, TimeUnit.MINUTES)) {
      build.destroyForcibly();
      throw new AssertionError(String.join(" ", command) + " did not end in 15 minutes; its log: " + log);
    }
    String output = read(log);
    assertThat(build.exitValue()).as("%s (log: %s), ending:%n%s", String.join(" ", command), log, tail(output, 80))
        .isZero();
    return output;
  }

  @Test
  void everyInstalledModuleIsInTheBomWithItsPomJarSourcesAndJavadoc() throws IOException {
    String bom = read(artifact("sluice-bom", ".pom"));
    assertThat(bom).as("the BOM is imported alone: no parent, whose dependency management would come along")
        .doesNotContain("<parent>");
    Set<String> managed = managedSluiceArtifacts(bom);

    Set<String> installed;
    try (Stream<Path> dirs = Files.list(sluice)) {
      installed = dirs.map(d -> d.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
    }
    assertThat(installed).as("consumer-it was in the installing reactor, with maven.install.skip")
        .doesNotContain("consumer-it");
    Set<String> libraries = new TreeSet<>(installed);
    libraries.removeAll(Set.of("sluice-parent", "sluice-bom"));
    assertThat(managed).as("sluice-bom manages exactly the published libraries").isEqualTo(libraries);
    assertThat(managed).contains("limiter-node", "limiter-sync", "limiter-sync-redis", "limiter-sync-hazelcast",
        "limiter-http", "sluice-spring-boot-starter");

    for (String module : installed) {
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

  /** A module of the build is either in sluice-bom (published) or skips install and deploy (not published). */
  @Test
  void everyModuleIsPublishedOrSkipsInstallAndDeploy() throws IOException {
    Path root = Path.of(property("sluice.root"));
    Set<String> managed = managedSluiceArtifacts(read(root.resolve("sluice-bom/pom.xml")));
    Matcher modules = Pattern.compile("<module>([^<]+)</module>").matcher(read(root.resolve("pom.xml")));
    List<String> checked = new ArrayList<>();
    while (modules.find()) {
      String pom = read(root.resolve(modules.group(1)).resolve("pom.xml"));
      Matcher id = Pattern.compile("</parent>\\s*<artifactId>([^<]+)</artifactId>").matcher(pom);
      assertThat(id.find()).as(modules.group(1) + "'s artifactId").isTrue();
      String artifactId = id.group(1);
      boolean skips = pom.contains("<maven.install.skip>true</maven.install.skip>")
          && pom.contains("<maven.deploy.skip>true</maven.deploy.skip>");
      if (artifactId.equals("sluice-bom")) {
        assertThat(skips).as("sluice-bom is published").isFalse();
      } else {
        assertThat(managed.contains(artifactId)).as(artifactId + ": in sluice-bom, or skips install and deploy")
            .isNotEqualTo(skips);
      }
      checked.add(artifactId);
    }
    assertThat(checked).contains("limiter-node", "limiter-cli", "benchmarks", "consumer-it");
  }

  @Test
  void aSpringBootProjectOnTheBomAndTheStarterBuildsAndItsTestsPass() throws Exception {
    Path project = target.resolve("consumer");
    Path localRepository = target.resolve("consumer-repository");
    delete(project);
    delete(localRepository);
    copy(Path.of(property("sluice.consumer.source")), project);
    // its own project root, so that ./mvnw does not take the enclosing Sluice checkout for one
    Files.createDirectories(project.resolve(".mvn"));

    List<String> command = maven(Path.of(property("sluice.root")), localRepository);
    command.add("-Dsluice.version=" + version);
    command.add("-Dsluice.repository=" + repository.toUri());
    for (String setting : property("sluice.consumer.properties").split(",")) {
      command.add("-D" + setting);
    }
    command.add("test");
    String output = run(command, project, target.resolve("consumer-build.log"));

    // its tests ran, and passed
    Path report = project.resolve("target/surefire-reports/TEST-example.consumer.ConsumerApplicationTest.xml");
    assertThat(report).as(tail(output, 80)).isRegularFile();
    String xml = read(report);
    assertThat(output).contains("BUILD SUCCESS");
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
    int from = bom.indexOf("<dependencyManagement>");
    assertThat(from).as("sluice-bom's dependencyManagement").isNotNegative();
    Matcher m = Pattern.compile("<groupId>io\\.sluice</groupId>\\s*<artifactId>([^<]+)</artifactId>")
        .matcher(bom.substring(from));
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

  /**
   * This build's local repository without Sluice's own artifacts ({@code io/sluice}), as symbolic links:
   * a Sluice that a developer installed there (same version) must not stand in for the scratch
   * repository's, which is what the consumer build is to prove it can use. Nothing is written into it.
   */
  private static Path thirdPartyRepository() throws IOException {
    Path local = Path.of(property("sluice.local.repository"));
    Path view = Path.of(property("sluice.consumer.target")).resolve("third-party-repository");
    delete(view);
    Files.createDirectories(view.resolve("io"));
    linkAllBut(local, view, "io");
    if (Files.isDirectory(local.resolve("io"))) {
      linkAllBut(local.resolve("io"), view.resolve("io"), "sluice");
    }
    return view;
  }

  private static void linkAllBut(Path from, Path to, String leftOut) throws IOException {
    try (Stream<Path> entries = Files.list(from)) {
      for (Path e : entries.collect(Collectors.toList())) {
        String name = e.getFileName().toString();
        if (!name.equals(leftOut)) {
          Files.createSymbolicLink(to.resolve(name), e);
        }
      }
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
