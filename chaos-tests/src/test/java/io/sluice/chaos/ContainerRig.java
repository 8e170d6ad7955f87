package io.sluice.chaos;

import eu.rekawek.toxiproxy.Proxy;
import eu.rekawek.toxiproxy.ToxiproxyClient;
import java.io.File;
import java.io.IOException;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.toxiproxy.ToxiproxyContainer;

/**
 * {@link ChaosRig} on Docker (Testcontainers): a Redis container and a Toxiproxy container on one
 * network; proxies listen on the Toxiproxy container's ports 8666 and up (Testcontainers maps them)
 * and reach Redis by its network alias, so a restarted Redis container is found again. The test reads
 * counts through a proxy of its own that no scenario touches. Not run where Docker is absent.
 */
final class ContainerRig implements ChaosRig {
  private static final int FIRST_PROXY_PORT = 8666;
  private static final int PROXY_PORTS = 32; // 8666-8697, the ports the Toxiproxy container exposes

  private final Network network;
  private final GenericContainer<?> redis;
  private final ToxiproxyContainer toxiproxy;
  private final ToxiproxyClient client;
  private final String observerUri;
  private int nextPort = FIRST_PROXY_PORT;

  private ContainerRig(Network network, GenericContainer<?> redis, ToxiproxyContainer toxiproxy) throws IOException {
    this.network = network;
    this.redis = redis;
    this.toxiproxy = toxiproxy;
    this.client = new ToxiproxyClient(toxiproxy.getHost(), toxiproxy.getControlPort());
    this.observerUri = link("observer").uri();
  }

  /** Whether a Docker engine answers; looks for a socket or DOCKER_HOST before asking Testcontainers. */
  static boolean dockerAvailable() {
    if (System.getenv("DOCKER_HOST") == null && !new File("/var/run/docker.sock").exists()) {
      return false;
    }
    try {
      return DockerClientFactory.instance().isDockerAvailable();
    } catch (RuntimeException e) {
      return false;
    }
  }

  @SuppressWarnings("resource") // closed in close()
  static ContainerRig start() {
    Network network = Network.newNetwork();
    GenericContainer<?> redis = new GenericContainer<>("redis:7.2")
        .withNetwork(network).withNetworkAliases("redis").withExposedPorts(6379)
        .withCommand("redis-server", "--save", "", "--appendonly", "no");
    ToxiproxyContainer toxiproxy = new ToxiproxyContainer("ghcr.io/shopify/toxiproxy:2.12.0").withNetwork(network);
    try {
      redis.start();
      toxiproxy.start();
      return new ContainerRig(network, redis, toxiproxy);
    } catch (IOException | RuntimeException e) {
      toxiproxy.stop();
      redis.stop();
      network.close();
      throw new IllegalStateException("cannot start the Redis and Toxiproxy containers: " + e.getMessage(), e);
    }
  }

  @Override
  public String backend() {
    return "containers";
  }

  @Override
  public String redisUri() {
    return observerUri;
  }

  @Override
  public Link link(String name) throws IOException {
    if (nextPort >= FIRST_PROXY_PORT + PROXY_PORTS) {
      throw new IllegalStateException("links: the Toxiproxy container exposes " + PROXY_PORTS + " proxy ports, all used");
    }
    int port = nextPort++;
    Proxy proxy = client.createProxy(name, "0.0.0.0:" + port, "redis:6379");
    return new Link(proxy, "redis://" + toxiproxy.getHost() + ":" + toxiproxy.getMappedPort(port));
  }

  @Override
  public void resetFaults() throws IOException {
    client.reset();
  }

  @Override
  public void stopRedis() {
    redis.getDockerClient().stopContainerCmd(redis.getContainerId()).exec();
  }

  @Override
  public void startRedis() {
    redis.getDockerClient().startContainerCmd(redis.getContainerId()).exec();
  }

  @Override
  public void freezeRedis() {
    redis.getDockerClient().pauseContainerCmd(redis.getContainerId()).exec();
  }

  @Override
  public void thawRedis() {
    redis.getDockerClient().unpauseContainerCmd(redis.getContainerId()).exec();
  }

  @Override
  public void close() {
    try {
      toxiproxy.stop();
    } finally {
      try {
        redis.stop();
      } finally {
        network.close();
      }
    }
  }
}
