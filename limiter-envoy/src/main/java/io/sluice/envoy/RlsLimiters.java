package io.sluice.envoy;

import io.sluice.node.Limit;
import io.sluice.sync.SyncConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.CounterStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One {@link SyncedLimiter} per distinct limit ({@code requests_per_unit} per {@code unit}, a fixed
 * window), created on first use over one store with one shared {@link SyncConfig}. Each holds a
 * flusher and its key table, so requests' own limit overrides must not grow them without end: a rate
 * only an override asks for gets a limiter only while fewer than {@code maxLimits} exist, while the
 * configuration's own rates (at most {@code maxLimits}, checked when it is loaded) always get theirs.
 *
 * <p>A limiter's name is {@code rls-<requests_per_unit>-per-<unit>} (a valid limit name: no '#', at
 * most 64 characters), and the key of a descriptor in it is the domain and the request's entries,
 * each length-prefixed ({@link #key}): the store key {@code <prefix>:{<n>:rls-5-per-minute:<key>}} is
 * then one counter per domain, descriptor path and limit, and no two of them can be read the same
 * way. Shadow mode is applied by the service on the decision, so a shadow and an enforced limit of
 * the same rate share a limiter (never a counter: their descriptor paths differ).
 *
 * <p>Concurrency: gRPC's executor threads call {@link #get} at once. A limiter that exists is read
 * from the concurrent map without a lock; building one, and {@code closed}, are guarded by this
 * object's monitor, so a rate gets one limiter however many requests ask for it first, and none is
 * built after {@link #close} (which closes the limiters outside the monitor: a close flushes).
 */
final class RlsLimiters implements AutoCloseable {
  private final CounterStore store;
  private final SyncConfig config;
  private final int maxLimits;
  private final ConcurrentHashMap<Rate, SyncedLimiter> limiters = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** A distinct limit. */
  record Rate(long requestsPerUnit, RlsUnit unit) {
  }

  RlsLimiters(CounterStore store, SyncConfig config, int maxLimits) {
    if (maxLimits < 1) {
      throw new IllegalArgumentException("maxLimits: must be at least 1, got " + maxLimits);
    }
    this.store = store;
    this.config = config;
    this.maxLimits = maxLimits;
  }

  /** The limit name of a rate: {@code rls-5-per-minute}. */
  static String name(long requestsPerUnit, RlsUnit unit) {
    return "rls-" + requestsPerUnit + "-per-" + unit.name().toLowerCase(java.util.Locale.ROOT);
  }

  /** The Sluice limit of a rate: a fixed window of {@code requestsPerUnit} per unit. */
  static Limit limit(long requestsPerUnit, RlsUnit unit) {
    return Limit.fixedWindow(name(requestsPerUnit, unit)).limit(requestsPerUnit).window(unit.window()).build();
  }

  /**
   * The limiter of this rate (at least 1 per unit), built on first use.
   *
   * @param bounded whether a new limiter counts against {@code maxLimits}: true for a rate only a
   *     request's own limit override asks for, false for a rate of the configuration in use (else the
   *     overrides, or the rates of an earlier configuration, could take every place and lock the
   *     configured limits out)
   * @throws TooManyLimitsException when {@code bounded}, {@code maxLimits} limiters exist and this rate is new
   */
  SyncedLimiter get(long requestsPerUnit, RlsUnit unit, boolean bounded) {
    Rate rate = new Rate(requestsPerUnit, unit);
    SyncedLimiter l = limiters.get(rate);
    if (l != null) {
      return l;
    }
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("closed");
      }
      l = limiters.get(rate);
      if (l == null) {
        if (bounded && limiters.size() >= maxLimits) {
          throw new TooManyLimitsException(limiters.size(), maxLimits, name(requestsPerUnit, unit));
        }
        l = SyncedLimiter.of(limit(requestsPerUnit, unit), store, config);
        limiters.put(rate, l);
      }
      return l;
    }
  }

  /** The limiters built so far. */
  List<SyncedLimiter> all() {
    return new ArrayList<>(limiters.values());
  }

  int size() {
    return limiters.size();
  }

  /**
   * A descriptor's key within its limiter: the domain, then each entry's key and value, every part
   * prefixed by its length in UTF-16 units ({@code 9:messaging|12:message_type=9:marketing}), so
   * that no two (domain, entries) give the same key whatever characters they hold.
   */
  static String key(String domain, List<io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor.Entry> entries) {
    StringBuilder sb = new StringBuilder(domain.length() + 32 * entries.size());
    sb.append(domain.length()).append(':').append(domain);
    for (var e : entries) {
      sb.append('|').append(e.getKey().length()).append(':').append(e.getKey())
          .append('=').append(e.getValue().length()).append(':').append(e.getValue());
    }
    return sb.toString();
  }

  /** Flushes every limiter's unsent permits to the store and stops them. */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    for (SyncedLimiter l : limiters.values()) {
      l.close();
    }
  }

  /** More distinct limits asked for than the bound allows. */
  static final class TooManyLimitsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TooManyLimitsException(int inUse, int max, String name) {
      super("too many distinct limits: " + inUse + " are in use, " + name + " would be one more (--max-limits "
          + max + ")", null, false, false);
    }
  }
}
