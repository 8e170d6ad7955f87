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
 * {@code ./run-tests} installs Debian's redis-server when it is missing. Where it is missing and a
 * local Docker engine answers, a Redis container (Testcontainers) stands in for the plain servers
 * ({@link #start()}; servers on a given port or with extra options need the binary). Public for the
 * other modules' tests (limiter-sync publishes its test classes as a test-jar).
 */
public final class RedisServer implements AutoCloseable {
  private final Process process;
  private final int port;
  private final Path log;
  /** The container standing in for the process, or null. */
  private final RedisContainer container;

  private RedisServer(Process process, int port, Path log) {
    this.process = process;
    this.port = port;
    this.log = log;
    this.container = null;
  }

  private RedisServer(RedisContainer container) {
    this.process = null;
    this.port = container.port();
    this.log = null;
    this.container = container;
  }

  public static RedisServer start() {
    return start(0, List.of(), List.of());
  }

  /**
   * A fresh server on {@code port} (0: a free one), e.g. on the port of one that was stopped: with no
   * persistence, that is a restart that lost every key and script.
   */
  public static RedisServer start(int fixedPort) {
    return start(fixedPort, List.of(), List.of());
  }

  /**
   * A server with more options: {@code leading} goes first (a config file, for Sentinel), then the
   * usual options, then {@code extra} (ACL users, TLS). The server counts as up once its plain port
   * answers PING, with PONG or with an authentication error.
   */
  public static RedisServer start(List<String> leading, List<String> extra) {
    return start(0, leading, extra);
  }

  private static RedisServer start(int fixedPort, List<String> leading, List<String> extra) {
    String binary = System.getenv().getOrDefault("SLUICE_REDIS_SERVER", "redis-server");
    if (fixedPort == 0 && leading.isEmpty() && extra.isEmpty() && !onPath(binary)) {
      RedisServer container = containerIfDocker();
      if (container != null) {
        return container;
      }
    }
    IOException last = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      int port = fixedPort != 0 ? fixedPort : freePort();
      try {
        Path log = Files.createTempFile("redis-" + port + "-", ".log");
        List<String> command = new java.util.ArrayList<>();
        command.add(binary);
        command.addAll(leading);
        command.addAll(List.of("--port", Integer.toString(port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "yes",
            "--dir", System.getProperty("java.io.tmpdir")));
        command.addAll(extra);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
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

  /** A Redis container when Docker answers; null when it does not or Testcontainers is not on the classpath. */
  private static RedisServer containerIfDocker() {
    try {
      return RedisContainer.dockerAvailable() ? new RedisServer(RedisContainer.start()) : null;
    } catch (LinkageError noTestcontainers) {
      return null; // a module that uses this fixture without Testcontainers: the binary is required
    }
  }

  /** Whether the binary is a path to an executable or an executable on the PATH. */
  private static boolean onPath(String binary) {
    if (binary.contains(File.separator)) {
      return new File(binary).canExecute();
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (!dir.isEmpty() && new File(dir, binary).canExecute()) {
        return true;
      }
    }
    return false;
  }

  /** A loopback port nothing listens on right now. */
  public static int freePort() {
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
        byte[] buf = new byte[16];
        int n = s.getInputStream().read(buf);
        String answer = n > 0 ? new String(buf, 0, n, StandardCharsets.US_ASCII) : "";
        if (answer.startsWith("+PONG") || answer.startsWith("-NOAUTH")) {
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

  /**
   * Freezes the server ({@code SIGSTOP}; a container is paused): connections stay open and nothing is
   * answered, as when Redis hangs on a slow disk, a fork or a debugger. {@link #thaw()} resumes it.
   */
  public void freeze() {
    if (container != null) {
      container.pause();
      return;
    }
    signal("-STOP");
  }

  /** Resumes a frozen server ({@code SIGCONT}). */
  public void thaw() {
    if (container != null) {
      container.unpause();
      return;
    }
    signal("-CONT");
  }

  private void signal(String signal) {
    try {
      int exit = new ProcessBuilder("kill", signal, Long.toString(process.pid())).inheritIO().start().waitFor();
      if (exit != 0) {
        throw new IllegalStateException("kill " + signal + " " + process.pid() + " exited with " + exit);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot signal redis-server: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while signalling redis-server", e);
    }
  }

  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  public String output() {
    if (container != null) {
      return container.logs();
    }
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "(no output: " + e.getMessage() + ")";
    }
  }

  @Override
  public void close() {
    if (container != null) {
      container.close();
      return;
    }
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
