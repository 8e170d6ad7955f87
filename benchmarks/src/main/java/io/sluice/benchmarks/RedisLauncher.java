package io.sluice.benchmarks;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Starts a throw-away {@code redis-server} on a free loopback port, with no persistence, for the
 * distributed benchmark; {@link #close()} stops it. Its log goes to a temporary file, shown when it
 * fails to start.
 */
final class RedisLauncher implements AutoCloseable {
  private final Process process;
  private final int port;
  private final Path log;

  private RedisLauncher(Process process, int port, Path log) {
    this.process = process;
    this.port = port;
    this.log = log;
  }

  /** Starts {@code redis-server} (from PATH, or the given binary) and waits until it answers PING. */
  static RedisLauncher start(String binary) throws IOException, InterruptedException {
    int port = freeLoopbackPort();
    Path log = Files.createTempFile("sluice-bench-redis-", ".log");
    List<String> command = List.of(binary, "--port", Integer.toString(port), "--bind", "127.0.0.1",
        "--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "yes",
        "--dir", System.getProperty("java.io.tmpdir"));
    Process p;
    try {
      p = new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(log.toFile())
          .start();
    } catch (IOException e) {
      throw new IOException("cannot start " + binary + " (is redis-server installed? `apt-get install redis-server`): "
          + e.getMessage(), e);
    }
    RedisLauncher launcher = new RedisLauncher(p, port, log);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new IOException("redis-server exited with " + p.exitValue() + ":\n" + launcher.logText());
      }
      if (ping(port)) {
        return launcher;
      }
      Thread.sleep(50);
    }
    launcher.close();
    throw new IOException("redis-server did not answer PING on 127.0.0.1:" + port + " within 10 s:\n" + launcher.logText());
  }

  int port() {
    return port;
  }

  String uri() {
    return "redis://127.0.0.1:" + port;
  }

  private String logText() {
    try {
      return Files.readString(log, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  private static int freeLoopbackPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    }
  }

  private static boolean ping(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
      s.setSoTimeout(500);
      OutputStream out = s.getOutputStream();
      out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      byte[] buf = new byte[64];
      int n = in.read(buf);
      return n > 0 && new String(buf, 0, n, StandardCharsets.US_ASCII).startsWith("+PONG");
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    File f = log.toFile();
    if (!f.delete()) {
      f.deleteOnExit();
    }
  }
}
