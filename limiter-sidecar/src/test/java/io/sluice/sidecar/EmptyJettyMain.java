package io.sluice.sidecar;

import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * The load benchmark's baseline ({@code benchmarks/run-sidecar.sh}): what Jetty serves on this machine
 * with nothing to do. Same Jetty, same thread pool, connector and HTTP settings as the sidecar
 * ({@link SluiceServer#jetty}); the handler answers every request 200 with no body and does not read
 * the request's (Jetty discards it to keep the connection alive). Run from the sidecar's test classes
 * next to {@code sluice.jar}:
 *
 * <pre>{@code java -cp limiter-cli/target/sluice.jar:limiter-sidecar/target/test-classes \
 *     io.sluice.sidecar.EmptyJettyMain PORT [MAX_THREADS]}</pre>
 *
 * Prints {@code empty jetty: listening on PORT} once it serves; stops on SIGTERM.
 */
public final class EmptyJettyMain {
  private EmptyJettyMain() {
  }

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    int maxThreads = args.length > 1 ? Integer.parseInt(args[1]) : ServeConfig.DEFAULT_MAX_THREADS;
    Server server = start(port, maxThreads);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        server.stop();
      } catch (Exception ignored) {
        // on the way out
      }
    }));
    System.out.println("empty jetty: listening on " + port(server));
    server.join();
  }

  /** The empty handler's server, started on {@code port} (0: a free one). */
  static Server start(int port, int maxThreads) throws Exception {
    Server server = SluiceServer.jetty(maxThreads, "127.0.0.1", port);
    server.setHandler(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) {
        response.setStatus(200);
        callback.succeeded();
        return true;
      }
    });
    server.setStopTimeout(2_000);
    server.start();
    return server;
  }

  static int port(Server server) {
    return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
  }
}
