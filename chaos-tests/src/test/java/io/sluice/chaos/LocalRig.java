package io.sluice.chaos;

import eu.rekawek.toxiproxy.Proxy;
import eu.rekawek.toxiproxy.ToxiproxyClient;
import io.sluice.sync.RedisServer;
import java.io.IOException;

/** {@link ChaosRig} on local processes: limiter-sync's {@link RedisServer} and a {@link ToxiproxyServer}. */
final class LocalRig implements ChaosRig {
  private final ToxiproxyServer toxiproxy;
  private final ToxiproxyClient client;
  private RedisServer redis;
  private final int redisPort;

  private LocalRig(RedisServer redis, ToxiproxyServer toxiproxy) {
    this.redis = redis;
    this.redisPort = redis.port();
    this.toxiproxy = toxiproxy;
    this.client = toxiproxy.client();
  }

  static LocalRig start() {
    RedisServer redis = RedisServer.start();
    try {
      return new LocalRig(redis, ToxiproxyServer.start());
    } catch (RuntimeException e) {
      redis.close();
      throw e;
    }
  }

  @Override
  public String backend() {
    return "local processes";
  }

  @Override
  public String redisUri() {
    return "redis://127.0.0.1:" + redisPort;
  }

  @Override
  public Link link(String name) throws IOException {
    IOException last = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      int port = Ports.free();
      try {
        Proxy proxy = client.createProxy(name, "127.0.0.1:" + port, "127.0.0.1:" + redisPort);
        return new Link(proxy, "redis://127.0.0.1:" + port);
      } catch (IOException e) {
        last = e; // the port was taken meanwhile
      }
    }
    throw last;
  }

  @Override
  public void resetFaults() throws IOException {
    client.reset();
  }

  @Override
  public void stopRedis() {
    redis.close();
  }

  @Override
  public void startRedis() {
    redis = RedisServer.start(redisPort);
  }

  @Override
  public void freezeRedis() {
    redis.freeze();
  }

  @Override
  public void thawRedis() {
    redis.thaw();
  }

  @Override
  public void close() {
    try {
      toxiproxy.close();
    } finally {
      redis.close();
    }
  }
}
