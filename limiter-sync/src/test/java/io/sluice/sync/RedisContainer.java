package io.sluice.sync;

import java.io.File;
import java.net.InetAddress;
import java.net.UnknownHostException;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;

/**
 * A Redis container (Testcontainers) for {@link RedisServer} where no redis-server binary is
 * installed and a local Docker engine answers. Only a loopback-mapped port is accepted: the tests
 * reach Redis on 127.0.0.1, never another host. Kept apart so that Testcontainers is loaded only
 * when a container is wanted.
 */
final class RedisContainer implements AutoCloseable {
  private final GenericContainer<?> container;

  private RedisContainer(GenericContainer<?> container) {
    this.container = container;
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

  @SuppressWarnings("resource") // closed by close()
  static RedisContainer start() {
    GenericContainer<?> c = new GenericContainer<>("redis:7.2").withExposedPorts(6379)
        .withCommand("redis-server", "--save", "", "--appendonly", "no");
    c.start();
    try {
      if (!InetAddress.getByName(c.getHost()).isLoopbackAddress()) {
        c.stop();
        throw new IllegalStateException("the Docker engine maps ports on " + c.getHost()
            + ", not on loopback: install redis-server instead (./run-tests does)");
      }
    } catch (UnknownHostException e) {
      c.stop();
      throw new IllegalStateException("cannot resolve the Docker host " + c.getHost(), e);
    }
    return new RedisContainer(c);
  }

  int port() {
    return container.getMappedPort(6379);
  }

  String logs() {
    return container.getLogs();
  }

  void pause() {
    container.getDockerClient().pauseContainerCmd(container.getContainerId()).exec();
  }

  void unpause() {
    container.getDockerClient().unpauseContainerCmd(container.getContainerId()).exec();
  }

  @Override
  public void close() {
    container.stop();
  }
}
