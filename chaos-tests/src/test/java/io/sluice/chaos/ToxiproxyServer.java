package io.sluice.chaos;

import eu.rekawek.toxiproxy.ToxiproxyClient;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code toxiproxy-server} process with its API on a free loopback port. The binary is looked
 * for in this order: system property {@code toxiproxy.server}, environment {@code TOXIPROXY_SERVER},
 * {@code toxiproxy-server} on the PATH, then {@code server} in Go's bin folder ({@code $GOBIN},
 * {@code $GOPATH/bin}, {@code ~/go/bin}) where {@code go install .../toxiproxy/v2/cmd/server} puts it;
 * {@code ./run-tests} installs it there when it is missing.
 */
final class ToxiproxyServer implements AutoCloseable {
  private final Process process;
  private final int port;
  private final Path log;

  private ToxiproxyServer(Process process, int port, Path log) {
    this.process = process;
    this.port = port;
    this.log = log;
  }

  static ToxiproxyServer start() {
    String binary = binary();
    IOException last = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      int port = Ports.free();
      try {
        Path log = Files.createTempFile("toxiproxy-" + port + "-", ".log");
        Process p = new ProcessBuilder(List.of(binary, "-host", "127.0.0.1", "-port", Integer.toString(port)))
            .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        ToxiproxyServer server = new ToxiproxyServer(p, port, log);
        if (server.awaitReady(Duration.ofSeconds(10))) {
          return server;
        }
        String output = server.output();
        server.close();
        last = new IOException("toxiproxy-server did not answer on port " + port + ": " + output);
      } catch (IOException e) {
        last = e;
      }
    }
    throw new IllegalStateException("cannot start " + binary + ": " + (last == null ? "" : last.getMessage()), last);
  }

  /** The binary to run, or an error that says how to install it. */
  static String binary() {
    List<String> candidates = new ArrayList<>();
    String property = System.getProperty("toxiproxy.server");
    if (property != null && !property.isBlank()) {
      candidates.add(property);
    }
    String env = System.getenv("TOXIPROXY_SERVER");
    if (env != null && !env.isBlank()) {
      candidates.add(env);
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (!dir.isEmpty()) {
        candidates.add(dir + File.separator + "toxiproxy-server");
      }
    }
    String gobin = System.getenv("GOBIN");
    if (gobin != null && !gobin.isBlank()) {
      candidates.add(gobin + File.separator + "server");
    }
    String gopath = System.getenv("GOPATH");
    if (gopath != null && !gopath.isBlank()) {
      for (String dir : gopath.split(File.pathSeparator)) {
        candidates.add(dir + File.separator + "bin" + File.separator + "server");
      }
    }
    candidates.add(System.getProperty("user.home") + File.separator + "go" + File.separator + "bin" + File.separator + "server");
    for (String c : candidates) {
      File f = new File(c);
      if (f.isFile() && f.canExecute()) {
        return f.getPath();
      }
    }
    throw new IllegalStateException("toxiproxy-server not found (looked at " + candidates + "); run ./run-tests, which"
        + " installs it, or: go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0");
  }

  private boolean awaitReady(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    ToxiproxyClient client = client();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        return false;
      }
      try {
        client.version();
        return true;
      } catch (IOException | RuntimeException notYet) {
        // not listening yet
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return false;
  }

  ToxiproxyClient client() {
    return new ToxiproxyClient("127.0.0.1", port);
  }

  String output() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "(no output: " + e.getMessage() + ")";
    }
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    new File(log.toString()).delete();
  }
}
