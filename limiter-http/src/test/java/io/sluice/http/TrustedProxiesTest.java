package io.sluice.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class TrustedProxiesTest {
  private static String client(TrustedProxies proxies, String peer, String... xff) {
    return proxies.clientAddress(peer, Collections.enumeration(List.of(xff)));
  }

  /** An IPv6 client is keyed by its /64 (it usually holds all of it), IPv4 by its address. */
  @Test
  void ipv6ClientsAreKeyedByTheirNetwork() {
    String a = IpAddresses.clientKey(IpAddresses.canonical(IpAddresses.parse("2001:db8:1:2::1")), 64);
    String b = IpAddresses.clientKey(IpAddresses.canonical(IpAddresses.parse("2001:db8:1:2:ffff:ffff:ffff:fffe")), 64);
    String other = IpAddresses.clientKey(IpAddresses.canonical(IpAddresses.parse("2001:db8:1:3::1")), 64);
    assertThat(a).isEqualTo(b).isEqualTo("2001:db8:1:2:0:0:0:0/64");
    assertThat(other).isNotEqualTo(a);
    assertThat(IpAddresses.clientKey("2001:db8:1:2:0:0:0:1", 128)).isEqualTo("2001:db8:1:2:0:0:0:1");
    assertThat(IpAddresses.clientKey("203.0.113.9", 64)).isEqualTo("203.0.113.9");
    assertThat(IpAddresses.clientKey("not-an-address", 64)).isEqualTo("not-an-address");
  }

  @Test
  void anUntrustedPeerIsTheClient() {
    TrustedProxies p = TrustedProxies.of(List.of("10.0.0.0/8"));
    assertThat(client(p, "192.0.2.1", "203.0.113.5")).isEqualTo("192.0.2.1");
    assertThat(client(TrustedProxies.of(List.of()), "10.0.0.1", "203.0.113.5")).isEqualTo("10.0.0.1");
  }

  @Test
  void hopsAreWalkedFromTheRightSkippingTrustedOnes() {
    TrustedProxies p = TrustedProxies.of(List.of("10.0.0.0/8", "192.168.1.1"));
    assertThat(client(p, "10.0.0.1", "1.1.1.1, 203.0.113.5, 192.168.1.1, 10.9.9.9")).isEqualTo("203.0.113.5");
    // several fields are one list, in order
    assertThat(client(p, "10.0.0.1", "1.1.1.1, 203.0.113.5", "10.2.2.2")).isEqualTo("203.0.113.5");
    // every hop trusted: the leftmost is the best we know
    assertThat(client(p, "10.0.0.1", "10.1.1.1, 10.2.2.2")).isEqualTo("10.1.1.1");
    // no header: the proxy itself
    assertThat(client(p, "10.0.0.1")).isEqualTo("10.0.0.1");
  }

  @Test
  void garbageStopsTheWalkAtTheTrustedProxyThatHandedItOver() {
    TrustedProxies p = TrustedProxies.of(List.of("10.0.0.0/8"));
    assertThat(client(p, "10.0.0.1", "203.0.113.5, unknown")).isEqualTo("10.0.0.1");
    assertThat(client(p, "10.0.0.1", "203.0.113.5, evil.example.com, 10.3.3.3")).isEqualTo("10.3.3.3");
    assertThat(client(p, "10.0.0.1", "")).isEqualTo("10.0.0.1");
    assertThat(client(p, "10.0.0.1", "999.1.1.1")).isEqualTo("10.0.0.1");
  }

  @Test
  void portsBracketsAndIpv6AreUnderstoodAndCanonicalised() {
    TrustedProxies p = TrustedProxies.of(List.of("10.0.0.0/8", "fd00::/8"));
    assertThat(client(p, "10.0.0.1", "203.0.113.5:4711")).isEqualTo("203.0.113.5");
    assertThat(client(p, "10.0.0.1", "[2001:db8::1]:443")).isEqualTo("2001:db8:0:0:0:0:0:1");
    assertThat(client(p, "fd00::5", "2001:DB8:0::1")).isEqualTo("2001:db8:0:0:0:0:0:1");
    assertThat(client(p, "10.0.0.1", "fd12::1, 10.1.1.1")).isEqualTo("fd12:0:0:0:0:0:0:1");
  }

  @Test
  void theWalkIsBounded() {
    TrustedProxies p = TrustedProxies.of(List.of("10.0.0.0/8"));
    StringBuilder chain = new StringBuilder("203.0.113.5");
    for (int i = 0; i < 40; i++) {
      chain.append(", 10.0.0.").append(i + 1);
    }
    // 40 trusted hops: the walk stops after MAX_HOPS, at a proxy, never at the claimed client
    assertThat(client(p, "10.0.0.1", chain.toString())).startsWith("10.0.0.");
  }

  @Test
  void cidrsMatchByPrefix() {
    assertThat(Cidr.parse("10.0.0.0/8").contains(IpAddresses.parse("10.255.1.2"))).isTrue();
    assertThat(Cidr.parse("10.0.0.0/8").contains(IpAddresses.parse("11.0.0.1"))).isFalse();
    assertThat(Cidr.parse("192.168.0.0/23").contains(IpAddresses.parse("192.168.1.200"))).isTrue();
    assertThat(Cidr.parse("192.168.0.0/23").contains(IpAddresses.parse("192.168.2.1"))).isFalse();
    assertThat(Cidr.parse("0.0.0.0/0").contains(IpAddresses.parse("8.8.8.8"))).isTrue();
    assertThat(Cidr.parse("0.0.0.0/0").contains(IpAddresses.parse("::1"))).isFalse();
    assertThat(Cidr.parse("2001:db8::/32").contains(IpAddresses.parse("2001:db8:ffff::1"))).isTrue();
    assertThat(Cidr.parse("127.0.0.1").contains(IpAddresses.parse("127.0.0.2"))).isFalse();
    assertThatThrownBy(() -> Cidr.parse("10.0.0.1:80")).hasMessageStartingWith("trustedProxies:");
    assertThatThrownBy(() -> Cidr.parse("::1/129")).hasMessageContaining("0 to 128");
    assertThatThrownBy(() -> Cidr.parse("localhost")).hasMessageStartingWith("trustedProxies:");
  }

  @Test
  void namesAreNeverResolved() {
    assertThat(IpAddresses.parse("localhost")).isNull();
    assertThat(IpAddresses.parse("abc:def:xyz")).isNull();
    assertThat(IpAddresses.parse("fe80::1%eth0")).isNull();
    assertThat(IpAddresses.parse("01.2.3.4")).isNull();
  }
}
