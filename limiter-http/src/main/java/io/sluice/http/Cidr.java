package io.sluice.http;

import java.net.InetAddress;

/** An IPv4 or IPv6 network, {@code 10.0.0.0/8} or {@code fd00::/8}; a bare address is a /32 or /128. */
final class Cidr {
  private final byte[] network;
  private final int prefix;
  private final String text;

  private Cidr(byte[] network, int prefix, String text) {
    this.network = network;
    this.prefix = prefix;
    this.text = text;
  }

  static Cidr parse(String text) {
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException("trustedProxies: a network must not be empty");
    }
    String s = text.trim();
    int slash = s.indexOf('/');
    String addressPart = slash < 0 ? s : s.substring(0, slash);
    boolean withPort = addressPart.indexOf(':') >= 0 && addressPart.indexOf(':') == addressPart.lastIndexOf(':')
        || addressPart.startsWith("[") && !addressPart.endsWith("]");
    InetAddress address = withPort ? null : IpAddresses.parse(addressPart);
    if (address == null) {
      throw new IllegalArgumentException("trustedProxies: \"" + text + "\" is not an IP address or CIDR network"
          + " (e.g. 10.0.0.0/8, 127.0.0.1, fd00::/8)");
    }
    byte[] bytes = address.getAddress();
    int bits = bytes.length * 8;
    int prefix = bits;
    if (slash >= 0) {
      String p = s.substring(slash + 1);
      if (!p.matches("\\d{1,3}") || Integer.parseInt(p) > bits) {
        throw new IllegalArgumentException("trustedProxies: prefix length of \"" + text + "\" must be 0 to " + bits);
      }
      prefix = Integer.parseInt(p);
    }
    for (int i = 0; i < bytes.length; i++) {
      bytes[i] &= mask(i, prefix);
    }
    return new Cidr(bytes, prefix, s);
  }

  boolean contains(InetAddress address) {
    byte[] a = address.getAddress();
    if (a.length != network.length) {
      return false;
    }
    for (int i = 0; i < a.length; i++) {
      if ((a[i] & mask(i, prefix)) != network[i]) {
        return false;
      }
    }
    return true;
  }

  private static byte mask(int byteIndex, int prefix) {
    int bits = Math.max(0, Math.min(8, prefix - byteIndex * 8));
    return (byte) (0xFF00 >>> bits);
  }

  @Override
  public String toString() {
    return text;
  }
}
