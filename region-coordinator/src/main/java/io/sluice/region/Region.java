package io.sluice.region;

import io.sluice.sync.redis.RedisStoreConfig;


/** One region: a name and the Redis its nodes keep their counts in (standalone or Sentinel). */
public final class Region {
  private final String name;
  private final RedisStoreConfig redis;

  private Region(String name, RedisStoreConfig redis) {
    this.name = name;
    this.redis = redis;
  }

  public static Region of(String name, String redisUri) {
    if (redisUri == null || redisUri.isEmpty()) {
      throw new IllegalArgumentException("region.redis: must not be empty for region " + name);
    }
    return of(name, RedisStoreConfig.builder(redisUri).build());
  }

  public static Region of(String name, RedisStoreConfig redis) {
    if (name == null || !name.matches("[A-Za-z0-9_.-]{1,64}")) {
      throw new IllegalArgumentException("region.name: must be 1 to 64 characters of [A-Za-z0-9_.-], got " + name);
    }
    if (redis == null) {
      throw new IllegalArgumentException("region.redis: must not be null for region " + name);
    }
    if (redis.cluster()) {
      throw new IllegalArgumentException("region.redis: a region's Redis must be standalone or Sentinel, not a"
          + " cluster, for region " + name);
    }
    return new Region(name, redis);
  }

  public String name() {
    return name;
  }

  public RedisStoreConfig redis() {
    return redis;
  }

  @Override
  public String toString() {
    return name;
  }
}
