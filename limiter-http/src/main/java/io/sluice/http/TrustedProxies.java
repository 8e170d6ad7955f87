package io.sluice.http;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;

/**
 * Finds the client's address behind proxies. {@code X-Forwarded-For} is trivially spoofed: a client
 * may send any list it likes, and each proxy only appends the address it saw. So the list is read
 * from the right, and a hop is believed only if the address to its right (at first the TCP peer) is a
 * trusted proxy: the client is the first untrusted address, walking leftwards from the peer.
 *
 * <ul>
 *   <li>A peer that is not a trusted proxy is the client, whatever the header says.</li>
 *   <li>A malformed hop stops the walk: the client is the trusted proxy that handed it over, so
 *       garbage in the header never yields a fresh key.</li>
 *   <li>At most {@link #MAX_HOPS} hops are read; past them the last one read is the client.</li>
 * </ul>
 */
final class TrustedProxies {
  /** Hops read from the right of the header at most: real proxy chains are short. */
  static final int MAX_HOPS = 16;

  private final List<Cidr> networks;

  private TrustedProxies(List<Cidr> networks) {
    this.networks = List.copyOf(networks);
  }

  static TrustedProxies of(List<String> cidrs) {
    List<Cidr> parsed = new ArrayList<>(cidrs.size());
    for (String c : cidrs) {
      parsed.add(Cidr.parse(c));
    }
    return new TrustedProxies(parsed);
  }

  boolean isEmpty() {
    return networks.isEmpty();
  }

  List<String> networks() {
    List<String> out = new ArrayList<>(networks.size());
    for (Cidr c : networks) {
      out.add(c.toString());
    }
    return out;
  }

  boolean trusts(InetAddress address) {
    for (Cidr c : networks) {
      if (c.contains(address)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The client's address, canonical text.
   *
   * @param remoteAddr the TCP peer as the container reports it
   * @param forwardedFor every {@code X-Forwarded-For} field of the request, in order (may be null)
   */
  String clientAddress(String remoteAddr, Enumeration<String> forwardedFor) {
    InetAddress peer = IpAddresses.parse(remoteAddr);
    if (peer == null) {
      return remoteAddr; // not an IP peer (a Unix socket, say): the container's word is all there is
    }
    if (networks.isEmpty() || forwardedFor == null || !trusts(peer)) {
      return IpAddresses.canonical(peer);
    }
    List<String> hops = new ArrayList<>();
    while (forwardedFor.hasMoreElements()) {
      String field = forwardedFor.nextElement();
      if (field != null) {
        for (String hop : field.split(",", -1)) {
          hops.add(hop);
        }
      }
    }
    InetAddress client = peer;
    int read = 0;
    for (int i = hops.size() - 1; i >= 0 && read < MAX_HOPS; i--, read++) {
      InetAddress hop = IpAddresses.parse(hops.get(i));
      if (hop == null) {
        break;
      }
      client = hop;
      if (!trusts(hop)) {
        break;
      }
    }
    return IpAddresses.canonical(client);
  }
}
