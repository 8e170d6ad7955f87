package io.sluice.region;

import io.sluice.node.Durations;
import io.sluice.node.Limit;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A quota defined once for every region: at most {@link #quota()} permits per {@link #window()} for
 * each key matching {@link #keyPattern()}, summed over all regions. The coordinator splits it into
 * regional shares; every node of a region enforces its share through a {@code SyncedLimiter} built
 * on {@link #limit()} with {@code regionalQuota(regions)}.
 *
 * <p>A token-bucket quota ({@link Builder#tokenBucket(long)}) refills {@link #quota()} permits per
 * {@link #window()} and holds a burst of {@link #burst()}: the coordinator splits the refill rate by
 * demand, and each region's bucket holds an even part of the burst, so the regions together admit at
 * most the burst plus the refill over any time.
 */
public final class GlobalQuota {
  private final String name;
  private final long quota;
  private final Duration window;
  private final String keyPattern;
  private final Pattern keyRegex;
  private final double floorFraction;
  private final Map<String, Long> floors;
  private final boolean sliding;
  /** A token-bucket quota's burst; 0 for a window quota. */
  private final long burst;
  private final Limit limit;

  private GlobalQuota(Builder b) {
    this.name = b.name;
    this.quota = b.quota;
    this.window = b.window;
    this.keyPattern = b.keyPattern;
    this.keyRegex = globToRegex(b.keyPattern);
    this.floorFraction = b.floorFraction;
    this.floors = Collections.unmodifiableMap(new LinkedHashMap<>(b.floors));
    this.sliding = b.sliding;
    this.burst = b.burst;
    this.limit = b.burst > 0 ? Limit.tokenBucket(b.name).capacity(b.burst).refill(b.quota, b.window).build()
        : (b.sliding ? Limit.slidingWindowCounter(b.name) : Limit.fixedWindow(b.name)).limit(b.quota)
            .window(b.window).build();
  }

  public static Builder builder(String name) {
    return new Builder(name);
  }

  public String name() {
    return name;
  }

  /** G: permits per window per key, all regions together. */
  public long quota() {
    return quota;
  }

  public Duration window() {
    return window;
  }

  /** Keys the coordinator splits by demand ({@code *} matches any run of characters); others keep G / regions. */
  public String keyPattern() {
    return keyPattern;
  }

  public boolean matches(String key) {
    return keyRegex.matcher(key).matches();
  }

  /**
   * Whether the quota is a sliding window counter (G permits in any window's length, the previous
   * window's count weighted by its part still inside) rather than a fixed window.
   */
  public boolean sliding() {
    return sliding;
  }

  /**
   * Whether the quota is a token bucket: {@link #quota()} permits of refill per {@link #window()}, its
   * rate split between the regions, and a burst of {@link #burst()} split evenly.
   */
  public boolean bucket() {
    return burst > 0;
  }

  /** A token-bucket quota's burst, all regions together; 0 for a window quota. */
  public long burst() {
    return burst;
  }

  /**
   * The limit every node of every region builds its {@code SyncedLimiter} on (a token bucket's in exact
   * mode, its default, with {@code onStoreFailure} FAIL_CLOSED or FAIL_OPEN).
   */
  public Limit limit() {
    return limit;
  }

  /**
   * The least share a region keeps of each key per window, so that a region whose demand appears
   * after a quiet spell is not refused outright until the next round: the region's own floor if set,
   * else {@code floorFraction} of the static share G / regions.
   */
  public long floor(String region, int regions) {
    Long own = floors.get(region);
    return own != null ? own : (long) Math.floor(floorFraction * (quota / regions));
  }

  Map<String, Long> floors() {
    return floors;
  }

  private static Pattern globToRegex(String glob) {
    StringBuilder regex = new StringBuilder();
    String[] parts = glob.split("\\*", -1);
    for (int i = 0; i < parts.length; i++) {
      if (i > 0) {
        regex.append(".*");
      }
      regex.append(Pattern.quote(parts[i]));
    }
    return Pattern.compile(regex.toString(), Pattern.DOTALL);
  }

  @Override
  public String toString() {
    return name + " (" + quota + " per " + (sliding ? "sliding " : "") + Durations.format(window)
        + (burst > 0 ? " token bucket, burst " + burst : "") + " for keys " + keyPattern + ")";
  }

  /** Settings of a {@link GlobalQuota}; every error names its field. */
  public static final class Builder {
    private final String name;
    private long quota = -1;
    private Duration window;
    private String keyPattern = "*";
    private double floorFraction = 0.1;
    private final Map<String, Long> floors = new LinkedHashMap<>();
    private boolean sliding;
    private long burst;

    Builder(String name) {
      if (name == null || !name.matches("[A-Za-z0-9_.-]{1,64}")) {
        throw new IllegalArgumentException("name: must be 1 to 64 characters of [A-Za-z0-9_.-], got " + name);
      }
      this.name = name;
    }

    public Builder quota(long permitsPerWindow) {
      if (permitsPerWindow < 1) {
        throw new IllegalArgumentException("quota: must be at least 1 permit per window, got " + permitsPerWindow
            + " in quota " + name);
      }
      this.quota = permitsPerWindow;
      return this;
    }

    public Builder window(Duration window) {
      if (window == null || window.toMillis() < 100) {
        throw new IllegalArgumentException("window: must be at least 100ms, got " + Durations.format(window) + " in quota " + name);
      }
      this.window = window;
      return this;
    }

    /**
     * A sliding window counter instead of a fixed window: the regions together never pass G over any
     * window's length as the counter weighs it. Shares then move within a window, as the previous
     * window's counts fade, rather than at its edge (see the README's multi-region section).
     */
    public Builder slidingWindow() {
      this.sliding = true;
      return this;
    }

    /**
     * A token bucket instead of a window: the quota becomes a refill of {@code quota} permits per
     * {@code window} (the rate the coordinator splits between regions by demand), and the bucket holds
     * up to {@code burst} permits, split evenly between the regions (a burst that moved with demand
     * could be spent twice: a region keeps what its bucket holds when its share shrinks). At least one
     * permit per region; see the README's multi-region section.
     */
    public Builder tokenBucket(long burst) {
      if (burst < 1) {
        throw new IllegalArgumentException("burst: must be at least 1 permit, got " + burst + " in quota " + name);
      }
      this.burst = burst;
      return this;
    }

    public Builder keyPattern(String glob) {
      if (glob == null || glob.isEmpty()) {
        throw new IllegalArgumentException("keyPattern: must not be empty in quota " + name);
      }
      this.keyPattern = glob;
      return this;
    }

    /** Floor of every region without its own: this fraction of G / regions (default 0.1). */
    public Builder floorFraction(double fraction) {
      if (!(fraction >= 0 && fraction <= 1)) {
        throw new IllegalArgumentException("floorFraction: must be in [0, 1], got " + fraction + " in quota " + name);
      }
      this.floorFraction = fraction;
      return this;
    }

    /** The floor of one region, in permits per window. */
    public Builder floor(String region, long permits) {
      if (region == null || region.isEmpty()) {
        throw new IllegalArgumentException("floor.region: must not be empty in quota " + name);
      }
      if (permits < 0) {
        throw new IllegalArgumentException("floor: must not be negative, got " + permits + " for region " + region
            + " in quota " + name);
      }
      floors.put(region, permits);
      return this;
    }

    public GlobalQuota build() {
      if (quota < 0) {
        throw new IllegalArgumentException("quota: must be set in quota " + name);
      }
      if (window == null) {
        throw new IllegalArgumentException("window: must be set in quota " + name);
      }
      if (burst > 0 && sliding) {
        throw new IllegalArgumentException("tokenBucket: a quota is a token bucket or a sliding window, not both,"
            + " in quota " + name);
      }
      return new GlobalQuota(this);
    }
  }
}
