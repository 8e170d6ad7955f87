package io.sluice.http;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Pattern;

/**
 * IP literals as they appear in {@code getRemoteAddr()} and {@code X-Forwarded-For}: IPv4, IPv6
 * (bare or in brackets), either with a port. Never resolves a name: anything that is not a literal
 * is rejected, so an attacker's header cannot make the filter do DNS lookups.
 */
final class IpAddresses {
  private static final Pattern IPV4 =
      Pattern.compile("(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");
  private static final Pattern IPV6_CHARS = Pattern.compile("[0-9A-Fa-f:.]{2,45}");
  private static final Pattern PORT = Pattern.compile("\\d{1,5}");

  private IpAddresses() {
  }

  /** The address of an IP literal (with an optional port), or null if it is not one. */
  static InetAddress parse(String text) {
    if (text == null) {
      return null;
    }
    String s = text.trim();
    if (s.isEmpty() || s.length() > 64) {
      return null;
    }
    if (s.charAt(0) == '[') {
      int close = s.indexOf(']');
      if (close < 0) {
        return null;
      }
      String rest = s.substring(close + 1);
      if (!rest.isEmpty() && !(rest.charAt(0) == ':' && PORT.matcher(rest.substring(1)).matches())) {
        return null;
      }
      return parseV6(s.substring(1, close));
    }
    int colon = s.indexOf(':');
    if (colon < 0) {
      return parseV4(s);
    }
    if (s.indexOf(':', colon + 1) < 0) {
      // one colon: IPv4 with a port
      return PORT.matcher(s.substring(colon + 1)).matches() ? parseV4(s.substring(0, colon)) : null;
    }
    return parseV6(s);
  }

  /** The canonical text of an address: one key per client, whatever spelling it came in. */
  static String canonical(InetAddress address) {
    return address.getHostAddress();
  }

  /**
   * The key of a client address: an IPv4 address itself; an IPv6 address as its network of
   * {@code v6PrefixLength} bits ({@code 2001:db8:1:2:0:0:0:0/64}), so that a client cannot take a fresh
   * budget per address of the network it holds. Text that is not an address comes back unchanged.
   */
  static String clientKey(String canonical, int v6PrefixLength) {
    InetAddress a = canonical == null ? null : parse(canonical);
    if (!(a instanceof java.net.Inet6Address) || v6PrefixLength >= 128) {
      return canonical;
    }
    byte[] bytes = a.getAddress();
    for (int bit = v6PrefixLength; bit < 128; bit++) {
      bytes[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
    }
    try {
      return InetAddress.getByAddress(bytes).getHostAddress() + "/" + v6PrefixLength;
    } catch (java.net.UnknownHostException impossible) {
      throw new IllegalStateException(impossible);
    }
  }

  private static InetAddress parseV4(String s) {
    if (!IPV4.matcher(s).matches()) {
      return null;
    }
    try {
      return InetAddress.getByName(s); // a literal: no lookup
    } catch (UnknownHostException e) {
      return null;
    }
  }

  private static InetAddress parseV6(String s) {
    if (!IPV6_CHARS.matcher(s).matches() || s.indexOf(':') < 0) {
      return null; // no zone ids, no names
    }
    try {
      // in brackets the JDK accepts only an IPv6 literal and never falls back to a name lookup
      return InetAddress.getByName("[" + s + "]");
    } catch (UnknownHostException e) {
      return null;
    }
  }
}
