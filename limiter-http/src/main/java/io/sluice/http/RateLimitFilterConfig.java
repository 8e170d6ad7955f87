package io.sluice.http;

import io.sluice.node.RequestLimiter;
import jakarta.servlet.http.HttpServletRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Settings of a {@link RateLimitFilter}. Immutable; each builder setter checks its value and names
 * the setting in its message.
 *
 * <pre>{@code
 * RateLimitFilterConfig config = RateLimitFilterConfig.builder(requestLimiter)
 *     .apiKeyHeader("X-API-Key")
 *     .trustedProxies("10.0.0.0/8", "127.0.0.1")   // the load balancers in front of this service
 *     .planResolver(PlanResolver.header("X-Plan"))   // only if a gateway sets it, never the client
 *     .build();
 * }</pre>
 */
public final class RateLimitFilterConfig {
  public static final String DEFAULT_API_KEY_HEADER = "X-API-Key";
  public static final String DEFAULT_FORWARDED_FOR_HEADER = "X-Forwarded-For";
  /** Longest identity (API key, user name) taken as a key; longer ones are answered 400. */
  public static final int DEFAULT_MAX_KEY_LENGTH = 256;

  private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}");
  private static final Pattern DIMENSION = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");
  private static final List<String> BUILT_IN = List.of(RateLimitFilter.API_KEY, RateLimitFilter.USER,
      RateLimitFilter.IP, RateLimitFilter.CLIENT);

  private final RequestLimiter limiter;
  private final String apiKeyHeader;
  private final String forwardedForHeader;
  private final TrustedProxies trustedProxies;
  private final PlanResolver planResolver;
  private final int maxKeyLength;
  private final int ipv6PrefixLength;
  private final Map<String, Function<HttpServletRequest, String>> identities;

  private RateLimitFilterConfig(Builder b) {
    this.limiter = b.limiter;
    this.apiKeyHeader = b.apiKeyHeader;
    this.forwardedForHeader = b.forwardedForHeader;
    this.trustedProxies = TrustedProxies.of(b.trustedProxies);
    this.planResolver = b.planResolver;
    this.maxKeyLength = b.maxKeyLength;
    this.ipv6PrefixLength = b.ipv6PrefixLength;
    this.identities = Map.copyOf(b.identities);
  }

  public static Builder builder(RequestLimiter limiter) {
    return new Builder(limiter);
  }

  public RequestLimiter limiter() {
    return limiter;
  }

  /** The header carrying the API key, or null when API keys are not read. */
  public String apiKeyHeader() {
    return apiKeyHeader;
  }

  public String forwardedForHeader() {
    return forwardedForHeader;
  }

  /** The proxies whose {@code X-Forwarded-For} hops are believed (CIDR networks). */
  public List<String> trustedProxies() {
    return trustedProxies.networks();
  }

  public PlanResolver planResolver() {
    return planResolver;
  }

  public int maxKeyLength() {
    return maxKeyLength;
  }

  /** IPv6 clients are keyed by their network of this prefix length (64 by default; 128: each address). */
  int ipv6PrefixLength() {
    return ipv6PrefixLength;
  }

  TrustedProxies proxies() {
    return trustedProxies;
  }

  Map<String, Function<HttpServletRequest, String>> identities() {
    return identities;
  }

  /** Builds a {@link RateLimitFilterConfig} over one {@link RequestLimiter}; unset values keep their defaults. */
  public static final class Builder {
    private final RequestLimiter limiter;
    private String apiKeyHeader = DEFAULT_API_KEY_HEADER;
    private String forwardedForHeader = DEFAULT_FORWARDED_FOR_HEADER;
    private List<String> trustedProxies = List.of();
    private PlanResolver planResolver = PlanResolver.defaultPlan();
    private int maxKeyLength = DEFAULT_MAX_KEY_LENGTH;
    private int ipv6PrefixLength = 64;
    private final Map<String, Function<HttpServletRequest, String>> identities = new LinkedHashMap<>();

    Builder(RequestLimiter limiter) {
      if (limiter == null) {
        throw new IllegalArgumentException("limiter: must not be null");
      }
      this.limiter = limiter;
    }

    /** The header carrying the API key (identity {@code "api-key"}); null to not read API keys. */
    public Builder apiKeyHeader(String header) {
      if (header != null && !HEADER_NAME.matcher(header).matches()) {
        throw new IllegalArgumentException("apiKeyHeader: not a header name: " + header);
      }
      this.apiKeyHeader = header;
      return this;
    }

    /** The header proxies append the client address to; {@code X-Forwarded-For} by default. */
    public Builder forwardedForHeader(String header) {
      if (header == null || !HEADER_NAME.matcher(header).matches()) {
        throw new IllegalArgumentException("forwardedForHeader: not a header name: " + header);
      }
      this.forwardedForHeader = header;
      return this;
    }

    /**
     * The proxies (load balancers, gateways) in front of this service, as CIDR networks or single
     * addresses. Only hops added by these are believed; with none (the default) the forwarded-for
     * header is ignored and the TCP peer is the client.
     */
    public Builder trustedProxies(String... networks) {
      if (networks == null) {
        throw new IllegalArgumentException("trustedProxies: must not be null");
      }
      return trustedProxies(Arrays.asList(networks));
    }

    /**
     * How IPv6 clients are keyed for the {@code ip} identity: by their network of this prefix length.
     * Default 64: a client usually holds a whole /64, so keying each address would let it take a fresh
     * budget by changing its source address. 128 keys every address on its own. IPv4 is per address.
     */
    public Builder ipv6PrefixLength(int bits) {
      if (bits < 1 || bits > 128) {
        throw new IllegalArgumentException("ipv6PrefixLength: must be between 1 and 128, got " + bits);
      }
      this.ipv6PrefixLength = bits;
      return this;
    }

    public Builder trustedProxies(List<String> networks) {
      if (networks == null) {
        throw new IllegalArgumentException("trustedProxies: must not be null");
      }
      List<String> copy = new ArrayList<>(networks.size());
      for (String n : networks) {
        Cidr.parse(n); // fails here, naming the bad entry
        copy.add(n.trim());
      }
      this.trustedProxies = List.copyOf(copy);
      return this;
    }

    public Builder planResolver(PlanResolver resolver) {
      if (resolver == null) {
        throw new IllegalArgumentException("planResolver: must not be null");
      }
      this.planResolver = resolver;
      return this;
    }

    /** Longest API key or user name taken as a key; a longer one is answered 400 (keys are kept). */
    public Builder maxKeyLength(int length) {
      if (length < 1 || length > 8_192) {
        throw new IllegalArgumentException("maxKeyLength: must be 1 to 8192, got " + length);
      }
      this.maxKeyLength = length;
      return this;
    }

    /**
     * One more identity dimension for the rules (a tenant, an organisation...), read from the request;
     * the resolver returns null when the request has none.
     */
    public Builder identity(String dimension, Function<HttpServletRequest, String> resolver) {
      if (dimension == null || !DIMENSION.matcher(dimension).matches()) {
        throw new IllegalArgumentException("identity: dimension must be 1 to 64 characters of [A-Za-z0-9_.:-], got "
            + dimension);
      }
      if (BUILT_IN.contains(dimension)) {
        throw new IllegalArgumentException("identity: \"" + dimension + "\" is built in (" + BUILT_IN + ")");
      }
      if (resolver == null) {
        throw new IllegalArgumentException("identity: resolver of \"" + dimension + "\" must not be null");
      }
      identities.put(dimension, resolver);
      return this;
    }

    public RateLimitFilterConfig build() {
      return new RateLimitFilterConfig(this);
    }
  }
}
