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
