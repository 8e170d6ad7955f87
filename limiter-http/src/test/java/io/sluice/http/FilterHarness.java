package io.sluice.http;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.security.Principal;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A real Jetty servlet container on a free loopback port: a test "login" filter that takes the user
 * from {@code X-Test-User} (standing in for the application's authentication), then the rate limit
 * filter, then a servlet that answers 200 "ok" and counts the requests that reached it.
 */
final class FilterHarness implements AutoCloseable {
  private final Server server;
  private final ServerConnector connector;
  final AtomicInteger served = new AtomicInteger();

  FilterHarness(RateLimitFilter filter) throws Exception {
    server = new Server();
    connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.setContextPath("/");
    Filter login = (request, response, chain) -> {
      HttpServletRequest req = (HttpServletRequest) request;
      String user = req.getHeader("X-Test-User");
      chain.doFilter(user == null ? req : new HttpServletRequestWrapper(req) {
        @Override
        public Principal getUserPrincipal() {
          return () -> user;
        }
      }, response);
    };
    context.addFilter(new FilterHolder(login), "/*", EnumSet.of(DispatcherType.REQUEST));
    context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
    context.addServlet(new ServletHolder(new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        served.incrementAndGet();
        resp.setContentType("text/plain");
        resp.getWriter().write("ok");
      }
    }), "/*");
    server.setHandler(context);
    server.start();
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + connector.getLocalPort() + path);
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }
}
