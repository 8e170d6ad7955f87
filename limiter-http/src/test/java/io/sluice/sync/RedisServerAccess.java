package io.sluice.sync;

/**
 * Test-only bridge to limiter-sync's package-private {@link RedisServer} fixture (shipped in its
 * test-jar): a real redis-server on a free loopback port.
 */
public final class RedisServerAccess implements AutoCloseable {
  private final RedisServer server;

  private RedisServerAccess(RedisServer server) {
    this.server = server;
  }

  public static RedisServerAccess start() {
    return new RedisServerAccess(RedisServer.start());
  }

  public String uri() {
    return server.uri();
  }

  public int port() {
    return server.port();
  }

  @Override
  public void close() {
    server.close();
  }
}
