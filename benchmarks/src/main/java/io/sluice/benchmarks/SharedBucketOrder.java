package io.sluice.benchmarks;

import io.sluice.node.Limit;
import io.sluice.node.RateLimiter;
import io.sluice.node.Ticker;
import io.sluice.sync.SyncConfig;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.redis.RedisCounterStore;
import io.sluice.sync.redis.RedisStoreConfig;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Two nodes sharing a batched token bucket on the wall clock, as a user runs them: two {@link
 * SyncedLimiter}s (nodes web-1 and web-2, token claims of up to 100 tokens) on one real redis-server
 * share a bucket of 200 a second (burst 200); one thread per node asks for one key about 300 times a
 * second (the two together three times the rate), and an in-process {@link RateLimiter} decides the
 * same requests at the same moments (one clock reading for both, the two decisions under one lock, so
 * the two nodes never have store calls under way at once; and with a ticker of its own, a node does not
 * set its clock to the store's). Prints, for the approximate and the reservation mode (in turns, each
 * run starting with the other), the requests the exact bucket admitted and the node denied (false
 * denials) and the reverse, what each admitted, decisions the failure policy made, and store calls
 * per 1,000 decisions.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.sluice.benchmarks.SharedBucketOrder [seconds] [runs]
 * </pre>
 *
 * starts its own redis-server on a free loopback port ({@code SLUICE_REDIS_SERVER} or {@code
 * redis-server} on the PATH). Defaults: 10 s, 3 runs.
 */
public final class SharedBucketOrder {
  private static final String KEY = "user-42";
  private static final ThreadLocal<Long> MOMENT = new ThreadLocal<>();
  /** A decision's moment, read once for the node and the exact bucket; the system clock elsewhere (the flushers). */
  private static final Ticker SHARED_MOMENT = () -> {
    Long t = MOMENT.get();
    return t != null ? t : Ticker.system().read();
  };

  private SharedBucketOrder() {
  }

  public static void main(String[] args) throws Exception {
    long seconds = args.length > 0 ? Long.parseLong(args[0]) : 10;
    int runs = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    String binary = System.getenv().getOrDefault("SLUICE_REDIS_SERVER", "redis-server");
    try (RedisLauncher redis = RedisLauncher.start(binary);
        RedisCounterStore store = RedisCounterStore.connect(RedisStoreConfig.builder(redis.uri()).build())) {
      for (int run = 1; run <= runs; run++) {
        boolean first = run % 2 == 0;
        for (boolean reservation : new boolean[] {first, !first}) {
          System.out.println("run " + run + ", " + once(store, reservation, Duration.ofSeconds(seconds)));
        }
      }
    }
  }

  private static String once(RedisCounterStore store, boolean reservation, Duration length) throws InterruptedException {
    Limit bucket = Limit.tokenBucket("tier" + System.nanoTime()).capacity(200).refill(200, Duration.ofSeconds(1)).build();
    SyncConfig config = SyncConfig.custom().bucketBatchSize(100).reservation(reservation).ticker(SHARED_MOMENT).build();
    RateLimiter exact = RateLimiter.builder(bucket).ticker(SHARED_MOMENT).build();
    Tally tally = new Tally();
    try (SyncedLimiter web1 = SyncedLimiter.of(bucket, store, config.toBuilder().nodeId("web-1").build());
        SyncedLimiter web2 = SyncedLimiter.of(bucket, store, config.toBuilder().nodeId("web-2").build())) {
      long end = System.nanoTime() + length.toNanos();
      Thread t1 = new Thread(() -> drive(web1, exact, end, tally));
      Thread t2 = new Thread(() -> drive(web2, exact, end, tally));
      t1.setUncaughtExceptionHandler((t, e) -> tally.failure.compareAndSet(null, e));
      t2.setUncaughtExceptionHandler((t, e) -> tally.failure.compareAndSet(null, e));
      t1.start();
      t2.start();
      t1.join();
      t2.join();
      if (tally.failure.get() != null) {
        throw new IllegalStateException("a deciding thread failed", tally.failure.get());
      }
      long calls = web1.storeCalls() + web2.storeCalls();
      long n = tally.requests.get();
      return String.format(Locale.ROOT, "%s: %,d requests, admitted %,d, the exact bucket %,d; false denials %,d"
              + " (%.2f%%), admitted where the exact bucket denied %,d; by the failure policy %,d; store calls %.0f"
              + " per 1,000 decisions", reservation ? "reservation" : "approximate", n, tally.admitted.get(),
          tally.exactAdmitted.get(), tally.falseDenials.get(), 100.0 * tally.falseDenials.get() / n,
          tally.beyondExact.get(), web1.fallbackDecisions() + web2.fallbackDecisions(), 1000.0 * calls / n);
    }
  }

  private static void drive(SyncedLimiter node, RateLimiter exact, long end, Tally tally) {
    while (System.nanoTime() < end) {
      boolean admitted;
      boolean exactAdmitted;
      synchronized (exact) {
        MOMENT.set(Ticker.system().read());
        try {
          admitted = node.tryAcquire(KEY);
          exactAdmitted = exact.tryAcquire(KEY);
        } finally {
          MOMENT.remove();
        }
      }
      tally.requests.incrementAndGet();
      if (admitted) {
        tally.admitted.incrementAndGet();
        if (!exactAdmitted) {
          tally.beyondExact.incrementAndGet();
        }
      }
      if (exactAdmitted) {
        tally.exactAdmitted.incrementAndGet();
        if (!admitted) {
          tally.falseDenials.incrementAndGet();
        }
      }
      LockSupport.parkNanos(3_333_333); // about 300 a second
    }
  }

  private static final class Tally {
    final AtomicLong requests = new AtomicLong();
    final AtomicLong admitted = new AtomicLong();
    final AtomicLong exactAdmitted = new AtomicLong();
    final AtomicLong falseDenials = new AtomicLong();
    final AtomicLong beyondExact = new AtomicLong();
    final AtomicReference<Throwable> failure = new AtomicReference<>();
  }
}
