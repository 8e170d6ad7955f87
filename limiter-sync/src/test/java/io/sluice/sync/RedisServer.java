package io.sluice.sync;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A real {@code redis-server} process on a free loopback port, for integration tests: found on the
 * PATH (or at {@code $SLUICE_REDIS_SERVER}); no persistence; stopped by {@link #close()}.
 * {@code ./run-tests} installs Debian's redis-server when it is missing. Public: other modules' tests use
 * it through this module's test-jar.
 */
public final class RedisServer implements AutoCloseable {
  private final Process process;
  private final int port;
  private final Path log;

  private RedisServer(Process process, int port, Path log) {
    this.process = process;
    this.port = port;
    this.log = log;
  }

  public static RedisServer start() {
    String binary = System.getenv().getOrDefault("SLUICE_REDIS_SERVER", "redis-server");
    IOException last = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      int port = freePort();
      try {
        Path log = Files.createTempFile("redis-" + port + "-", ".log");
        Process p = new ProcessBuilder(List.of(binary, "--port", Integer.toString(port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "yes",
            "--dir", System.getProperty("java.io.tmpdir")))
            .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        RedisServer server = new RedisServer(p, port, log);
        if (server.awaitReady(Duration.ofSeconds(10))) {
          return server;
        }
        server.close();
        last = new IOException("redis-server did not start on port " + port + ": " + server.output());
      } catch (IOException e) {
        last = e;
      }
    }
    throw new IllegalStateException("cannot start " + binary + " (install Debian's redis-server, or run"
        + " ./run-tests which does): " + (last == null ? "" : last.getMessage()), last);
  }

  private static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException("no free loopback port", e);
    }
  }

  private boolean awaitReady(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        return false;
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
        s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
        byte[] buf = new byte[7];
        int n = s.getInputStream().read(buf);
        if (n > 0 && new String(buf, 0, n, StandardCharsets.US_ASCII).startsWith("+PONG")) {
          return true;
        }
      } catch (IOException notYet) {
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

  public int port() {
    return port;
  }

  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  public String output() {
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
      if (!process.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    new File(log.toString()).delete();
  }
}
