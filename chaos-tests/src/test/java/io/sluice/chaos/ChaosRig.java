package io.sluice.chaos;

import eu.rekawek.toxiproxy.Proxy;
import java.io.IOException;

/**
 * Redis behind Toxiproxy, whichever way they run: local processes on free loopback ports
 * ({@link LocalRig}: {@code redis-server} and {@code toxiproxy-server}), or Docker containers on one
 * network ({@link ContainerRig}, Testcontainers) where a Docker engine answers. The scenarios see
 * only this interface, so the same tests run on both.
 *
 * <p>{@code -Dchaos.backend=local|containers|auto} (default auto: containers when Docker answers).
 */
interface ChaosRig extends AutoCloseable {

  static ChaosRig start() {
    String backend = System.getProperty("chaos.backend", "auto");
    switch (backend) {
      case "local":
        return LocalRig.start();
      case "containers":
        return ContainerRig.start();
      case "auto":
        return ContainerRig.dockerAvailable() ? ContainerRig.start() : LocalRig.start();
      default:
        throw new IllegalArgumentException("chaos.backend: must be local, containers or auto, got " + backend);
    }
  }

  /** "local processes" or "containers". */
  String backend();

  /** Redis as the test itself reaches it, never through a faulty link: for reading counts back. */
  String redisUri();

  /** A new proxy in front of Redis, for one node: the node connects to {@link Link#uri()}. */
  Link link(String name) throws IOException;

  /** Every proxy enabled, every toxic removed. */
  void resetFaults() throws IOException;

  /** Stops Redis; it has no persistence, so its data and scripts are gone. */
  void stopRedis();

  /** Starts Redis again at the same address, empty. */
  void startRedis();

  /** Freezes Redis (SIGSTOP; a container is paused): connections stay up, nothing is answered. */
  void freezeRedis();

  /** Resumes a frozen Redis, with its data. */
  void thawRedis();

  @Override
  void close();

  /** One node's way to Redis: the proxy that faults act on, and the URI the node connects to. */
  final class Link {
    private final Proxy proxy;
    private final String uri;

    Link(Proxy proxy, String uri) {
      this.proxy = proxy;
      this.uri = uri;
    }

    Proxy proxy() {
      return proxy;
    }

    String uri() {
      return uri;
    }
  }
}
