package io.sluice.http;

import java.util.Collections;
import java.util.List;

/**
 * The client address key of a request, as {@link RateLimitFilter} reads it (the {@code ip} identity),
 * for HTTP stacks other than the servlet API (a WebFlux filter, say): the first untrusted hop of
 * {@code X-Forwarded-For} walking leftwards from the TCP peer (see {@link
 * RateLimitFilterConfig.Builder#trustedProxies}), an IPv6 address as its network of the configured
 * prefix length. Immutable and thread-safe; no servlet class is needed to load it.
 */
public final class ClientAddresses {
  private final TrustedProxies proxies;
  private final int ipv6PrefixLength;

  private ClientAddresses(TrustedProxies proxies, int ipv6PrefixLength) {
    this.proxies = proxies;
    this.ipv6PrefixLength = ipv6PrefixLength;
  }

  /**
   * @param trustedProxies the networks whose hops are believed (CIDR or address), none by default
   * @param ipv6PrefixLength the bits of an IPv6 address that make one client (1 to 128; 64 by default)
   * @throws IllegalArgumentException naming the field, for a bad network or length
   */
  public static ClientAddresses of(List<String> trustedProxies, int ipv6PrefixLength) {
    if (trustedProxies == null) {
      throw new IllegalArgumentException("trustedProxies: must not be null");
    }
    if (ipv6PrefixLength < 1 || ipv6PrefixLength > 128) {
      throw new IllegalArgumentException("ipv6PrefixLength: must be between 1 and 128, got " + ipv6PrefixLength);
    }
    return new ClientAddresses(TrustedProxies.of(trustedProxies.stream().map(String::trim).toList()), ipv6PrefixLength);
  }

  /**
   * The client's key.
   *
   * @param remoteAddress the TCP peer's address, as text
   * @param forwardedFor every {@code X-Forwarded-For} field of the request, in order (may be empty)
   */
  public String clientKey(String remoteAddress, List<String> forwardedFor) {
    return IpAddresses.clientKey(proxies.clientAddress(remoteAddress,
        forwardedFor == null ? null : Collections.enumeration(forwardedFor)), ipv6PrefixLength);
  }
}
