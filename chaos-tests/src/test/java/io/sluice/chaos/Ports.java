package io.sluice.chaos;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

final class Ports {
  private Ports() {
  }

  /** A loopback port free right now (whoever binds it next may race us: callers retry). */
  static int free() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException("no free loopback port", e);
    }
  }
}
