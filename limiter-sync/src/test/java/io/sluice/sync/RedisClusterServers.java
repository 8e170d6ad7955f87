package io.sluice.sync;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real Redis Cluster of three masters on free loopback ports, for integration tests: three
 * {@code redis-server} processes with cluster mode on, joined by {@code redis-cli --cluster create}
 * (both from Debian's redis packages, which {@code ./run-tests} installs). Stopped by {@link #close()}.
 */
final class RedisClusterServers implements AutoCloseable {
  private final List<Process> processes = new ArrayList<>();
  private final List<Integer> ports = new ArrayList<>();
  private final Path dir;

  private RedisClusterServers(Path dir) {
    this.dir = dir;
  }

  static RedisClusterServers start() throws IOException, InterruptedException {
    RedisClusterServers cluster = new RedisClusterServers(Files.createTempDirectory("redis-cluster-"));
    try {
      for (int i = 0; i < 3; i++) {
        int port = freePortWithFreeBus();
        Process p = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
            "--cluster-enabled", "yes", "--cluster-config-file", "nodes-" + port + ".conf",
            "--cluster-node-timeout", "2000", "--save", "", "--appendonly", "no", "--dir", cluster.dir.toString())
            .redirectErrorStream(true).redirectOutput(cluster.dir.resolve("redis-" + port + ".log").toFile()).start();
        cluster.processes.add(p);
        cluster.ports.add(port);
      }
      for (int port : cluster.ports) {
        cluster.await("-p", Integer.toString(port), "ping");
      }
      List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
      cluster.ports.forEach(p -> create.add("127.0.0.1:" + p));
      create.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
      run(create);
      for (int port : cluster.ports) {
        cluster.awaitClusterOk(port);
      }
      return cluster;
    } catch (IOException | InterruptedException | RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  String uri() {
    return "redis://127.0.0.1:" + ports.get(0);
  }

  private static int freePortWithFreeBus() throws IOException {
    for (int attempt = 0; attempt < 50; attempt++) {
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        int port = s.getLocalPort();
        if (port + 10_000 > 65_535) {
          continue;
        }
        try (ServerSocket bus = new ServerSocket(port + 10_000, 1, InetAddress.getLoopbackAddress())) {
          return bus.getLocalPort() - 10_000; // both the client port and the cluster bus port are free
        } catch (IOException busTaken) {
          // try another
        }
      }
    }
    throw new IOException("no free loopback port with a free cluster bus port");
  }

  private void await(String... args) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      List<String> command = new ArrayList<>(List.of("redis-cli"));
      command.addAll(List.of(args));
      if (output(command).contains("PONG")) {
        return;
      }
      Thread.sleep(50);
    }
    throw new IOException("redis-server did not answer " + String.join(" ", args));
  }

  private void awaitClusterOk(int port) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < deadline) {
      if (output(List.of("redis-cli", "-p", Integer.toString(port), "cluster", "info")).contains("cluster_state:ok")) {
        return;
      }
      Thread.sleep(100);
    }
    throw new IOException("cluster not ok on port " + port);
  }

  private static void run(List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException(String.join(" ", command) + " failed: " + out);
    }
  }

  private static String output(List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(5, TimeUnit.SECONDS);
    return out;
  }

  @Override
  public void close() {
    for (Process p : processes) {
      p.destroy();
    }
    for (Process p : processes) {
      try {
        if (!p.waitFor(5, TimeUnit.SECONDS)) {
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException ignored) {
      // temporary files only
    }
  }
}
