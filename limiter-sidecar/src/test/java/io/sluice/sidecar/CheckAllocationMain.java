package io.sluice.sidecar;

import io.sluice.node.LimitSpec;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Bytes the sidecar allocates per {@code POST /check}, measured in its own JVM: what
 * {@code ThreadMXBean.getThreadAllocatedBytes} counted for every thread but this one (the client)
 * over a run of keep-alive checks from one socket, thread by thread, divided by the checks (a thread
 * that ends during the run loses its last bytes from the count, a few at most). It counts Jetty's
 * work (parsing, headers, buffers), the handler's and the limiter's, and the background threads'
 * (flusher, Lettuce) over the run; not the client's. Allocation is deterministic enough that no
 * repetition is needed for the figure, unlike time.
 *
 * <pre>{@code java -cp limiter-cli/target/sluice.jar:limiter-sidecar/target/test-classes \
 *     io.sluice.sidecar.CheckAllocationMain redis://127.0.0.1:PORT [CHECKS]}</pre>
 *
 * Prints one line per case: the empty Jetty handler of {@link EmptyJettyMain} (Jetty's own share), allowed
 * checks over 10,000 keys of {@code open=1000/1m}, denied checks over 100 spent keys of {@code tight=10/1h}.
 */
public final class CheckAllocationMain {
  private CheckAllocationMain() {
  }

  public static void main(String[] args) throws Exception {
    String redis = args[0];
    int checks = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
    ServeConfig config = ServeConfig.builder().limit(LimitSpec.parse("open=1000/1m"))
        .limit(LimitSpec.parse("tight=10/1h")).redis(redis).port(0).keyPrefix("alloc-" + ProcessHandle.current().pid())
        .build();
    // Jetty's own share, for reference: the empty handler of the load benchmark, same client, same bodies
    org.eclipse.jetty.server.Server empty = EmptyJettyMain.start(0, ServeConfig.DEFAULT_MAX_THREADS);
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), EmptyJettyMain.port(empty))) {
      socket.setTcpNoDelay(true);
      measure(new Client(socket), "open", 10_000, checks, "empty Jetty handler (same requests)");
    } finally {
      empty.stop();
    }
    try (SluiceServer server = SluiceServer.start(config);
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      socket.setTcpNoDelay(true);
      Client client = new Client(socket);
      measure(client, "open", 10_000, checks, "allowed (10k keys, open=1000/1m)");
      measure(client, "tight", 100, checks, "denied (100 keys, tight=10/1h)");
    }
  }

  private static void measure(Client client, String limit, int keys, int checks, String what) throws Exception {
    client.run(limit, keys, checks); // warm-up: compiled code, keys known, tight keys spent
    Map<Long, Long> before = allocatedByOthers();
    int statusSum = client.run(limit, keys, checks);
    Map<Long, Long> after = allocatedByOthers();
    long bytes = 0;
    for (Map.Entry<Long, Long> t : after.entrySet()) {
      // per thread: a pool thread that ended meanwhile must not take its whole life's bytes off the sum
      bytes += t.getValue() - before.getOrDefault(t.getKey(), 0L);
    }
    System.out.printf("%s: %d bytes per request (%d requests, mean status %d)%n", what, bytes / checks,
        checks, statusSum / checks);
  }

  /** Bytes allocated so far by each live thread but this one, by thread id. */
  private static Map<Long, Long> allocatedByOthers() {
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long self = Thread.currentThread().getId();
    long[] ids = Arrays.stream(threads.getAllThreadIds()).filter(id -> id != self).toArray();
    long[] bytes = threads.getThreadAllocatedBytes(ids);
    Map<Long, Long> out = new HashMap<>();
    for (int i = 0; i < ids.length; i++) {
      if (bytes[i] >= 0) { // -1: the thread ended meanwhile
        out.put(ids[i], bytes[i]);
      }
    }
    return out;
  }

  /** HTTP/1.1 over one kept-alive socket, one request at a time, reading each answer by its length. */
  private static final class Client {
    private final OutputStream out;
    private final InputStream in;
    private final byte[] buffer = new byte[8192];

    Client(Socket socket) throws Exception {
      this.out = socket.getOutputStream();
      this.in = socket.getInputStream();
    }

    /** Sends {@code n} checks over {@code keys} keys of {@code limit}; returns the sum of the statuses. */
    int run(String limit, int keys, int n) throws Exception {
      int statuses = 0;
      for (int i = 0; i < n; i++) {
        byte[] body = ("{\"key\":\"user-" + (i % keys) + "\",\"limit\":\"" + limit + "\"}")
            .getBytes(StandardCharsets.UTF_8);
        // one write, as load generators send a request (the empty handler does not wait for a late body)
        byte[] head = ("POST /check HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "
            + body.length + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
        byte[] request = Arrays.copyOf(head, head.length + body.length);
        System.arraycopy(body, 0, request, head.length, body.length);
        out.write(request);
        out.flush();
        statuses += readAnswer();
      }
      return statuses;
    }

    private int readAnswer() throws Exception {
      int size = 0;
      int headerEnd;
      while ((headerEnd = indexOfBlankLine(size)) < 0) {
        size = fill(size);
      }
      String head = new String(buffer, 0, headerEnd + 2, StandardCharsets.ISO_8859_1); // with the last CRLF
      int status = Integer.parseInt(head.substring(9, 12));
      int at = head.toLowerCase().indexOf("content-length:");
      int length = at < 0 ? 0 : Integer.parseInt(head.substring(at + 15, head.indexOf('\r', at)).trim());
      int total = headerEnd + 4 + length;
      while (size < total) {
        size = fill(size);
      }
      if (size > total) {
        throw new IllegalStateException("an answer that was not asked for");
      }
      return status;
    }

    private int fill(int size) throws Exception {
      int n = in.read(buffer, size, buffer.length - size);
      if (n < 0) {
        throw new IllegalStateException("connection closed");
      }
      return size + n;
    }

    private int indexOfBlankLine(int size) {
      for (int i = 0; i + 3 < size; i++) {
        if (buffer[i] == '\r' && buffer[i + 1] == '\n' && buffer[i + 2] == '\r' && buffer[i + 3] == '\n') {
          return i;
        }
      }
      return -1;
    }
  }
}
