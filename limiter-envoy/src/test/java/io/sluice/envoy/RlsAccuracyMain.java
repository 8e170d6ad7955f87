package io.sluice.envoy;

import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Over- and under-admission of an RLS server (any: Sluice's or envoyproxy/ratelimit's), for
 * benchmarks/run-envoy.sh: ghz tallies gRPC status codes, not the answers' overall_code. Sends, at a
 * fixed rate, ShouldRateLimit calls on {@code values} descriptors {@code key=v0..} of a limit per
 * second or minute, counts OK and OVER_LIMIT answers per descriptor per window, then compares each
 * window with the exact fixed window: over = admitted beyond the limit, under = admitted short of
 * min(limit, calls answered). A call that failed (a deadline of 5 s passed, the server refused it) has no
 * answer to count: failures are reported apart, by gRPC status.
 *
 * <p>Both servers count fixed windows aligned to the epoch. A call is counted in the window it was
 * sent in, and calls are sent only from 10% to 90% into a window, so that one whose answer comes back
 * within a tenth of the window was decided in that same window; answers that came later are counted as
 * ambiguous (their window may be the next one) and reported, not judged. (A per-minute limit leaves
 * 6 s for that; a per-second one, 100 ms, which a loaded machine's latency can pass.)
 *
 * <p>Traffic: {@code uniform} (the default) sends each descriptor {@code CALLS} calls a window, at the
 * same instants; {@code zipf} sends calls one at a time, evenly spread, each on a descriptor drawn from
 * a Zipf distribution (s = 1.1, seeded) whose hottest descriptor gets {@code CALLS} a window on average
 * and most far fewer: many descriptors far below their limit, a few at or over it.
 *
 * <pre>RlsAccuracyMain HOST:PORT DOMAIN KEY LIMIT second|minute VALUES CALLS WINDOWS [uniform|zipf]</pre>
 * Prints one line of {@code name=value} pairs.
 */
public final class RlsAccuracyMain {
  private RlsAccuracyMain() {
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 8 && args.length != 9) {
      System.err.println("usage: RlsAccuracyMain HOST:PORT DOMAIN KEY LIMIT second|minute VALUES"
          + " CALLS WINDOWS [uniform|zipf]");
      System.exit(2);
    }
    String target = args[0];
    String domain = args[1];
    String key = args[2];
    long limit = Long.parseLong(args[3]);
    long window = switch (args[4]) {
      case "second" -> 1000;
      case "minute" -> 60_000;
      default -> throw new IllegalArgumentException("unit: must be second or minute, got \"" + args[4] + "\"");
    };
    int values = Integer.parseInt(args[5]);
    int rate = Integer.parseInt(args[6]);
    int windows = Integer.parseInt(args[7]);
    boolean zipf = switch (args.length == 9 ? args[8] : "uniform") {
      case "uniform" -> false;
      case "zipf" -> true;
      default -> throw new IllegalArgumentException("traffic: must be uniform or zipf, got \"" + args[8] + "\"");
    };
    int[] schedule = schedule(values, rate, zipf);
    int perInstant = zipf ? 1 : values;
    int instants = schedule.length / perInstant;

    ManagedChannel channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
    RateLimitServiceGrpc.RateLimitServiceStub stub = RateLimitServiceGrpc.newStub(channel);
    RateLimitRequest[] requests = new RateLimitRequest[values];
    for (int v = 0; v < values; v++) {
      requests[v] = RateLimitRequest.newBuilder().setDomain(domain).addDescriptors(RateLimitDescriptor.newBuilder()
          .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(key).setValue("v" + v))).build();
    }
    // per (value, window): {sent, admitted, denied}
    Map<Long, long[]> tally = new ConcurrentHashMap<>();
    Map<String, AtomicLong> errors = new ConcurrentHashMap<>();
    AtomicLong ambiguous = new AtomicLong();
    long total = (long) schedule.length * windows;
    CountDownLatch answered = new CountDownLatch((int) total);

    // one call on a value of its own first, so that the connection and the limiter exist before the first window
    RateLimitServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS).shouldRateLimit(
        RateLimitRequest.newBuilder().setDomain(domain).addDescriptors(RateLimitDescriptor.newBuilder()
            .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(key).setValue("warm-up"))).build());
    // the next window that starts at least a second from now
    long first = (System.currentTimeMillis() + 1000) / window + 1;
    for (int w = 0; w < windows; w++) {
      long current = first + w;
      for (int k = 0; k < instants; k++) {
        long at = current * window + window / 10 + k * (window * 8 / 10) / instants;
        long wait = at - System.currentTimeMillis();
        if (wait > 0) {
          Thread.sleep(wait);
        }
        for (int j = k * perInstant; j < (k + 1) * perInstant; j++) {
          int v = schedule[j];
          long id = (long) v << 32 | w;
          long[] counts = tally.computeIfAbsent(id, x -> new long[3]);
          synchronized (counts) {
            counts[0]++;
          }
          stub.withDeadlineAfter(5, TimeUnit.SECONDS).shouldRateLimit(requests[v], new StreamObserver<>() {
            @Override
            public void onNext(RateLimitResponse r) {
              if (System.currentTimeMillis() >= (current + 1) * window) {
                ambiguous.incrementAndGet();
              }
              synchronized (counts) {
                counts[r.getOverallCode() == RateLimitResponse.Code.OK ? 1 : 2]++;
              }
            }

            @Override
            public void onError(Throwable t) {
              errors.computeIfAbsent(io.grpc.Status.fromThrowable(t).getCode().name(), c -> new AtomicLong())
                  .incrementAndGet();
              answered.countDown();
            }

            @Override
            public void onCompleted() {
              answered.countDown();
            }
          });
        }
      }
    }
    boolean all = answered.await(30, TimeUnit.SECONDS);
    channel.shutdownNow();

    long sent = 0;
    long admitted = 0;
    long exact = 0;
    long over = 0;
    long under = 0;
    long windowsOver = 0;
    long windowsUnder = 0;
    for (long[] c : tally.values()) {
      sent += c[0];
      admitted += c[1];
      long due = Math.min(limit, c[1] + c[2]);
      exact += due;
      if (c[1] > limit) {
        over += c[1] - limit;
        windowsOver++;
      }
      if (c[1] < due) {
        under += due - c[1];
        windowsUnder++;
      }
    }
    System.out.println("windows=" + tally.size() + " sent=" + sent + " admitted=" + admitted + " exact=" + exact
        + " over=" + over + " under=" + under + " windows_over=" + windowsOver + " windows_under=" + windowsUnder
        + " errors=" + errors.values().stream().mapToLong(AtomicLong::get).sum() + " error_codes=" + (errors.isEmpty()
            ? "-" : errors.toString().replace(" ", "")) + " ambiguous=" + ambiguous.get() + " complete=" + all);
  }

  /**
   * The descriptors of one window's calls, in the order they are sent: uniform, {@code rate} rounds of
   * every descriptor; zipf, about {@code rate} times the Zipf weights' sum calls, each drawn (the same
   * seed every window and run, so both servers get the same calls).
   */
  static int[] schedule(int values, int rate, boolean zipf) {
    if (!zipf) {
      int[] all = new int[values * rate];
      for (int j = 0; j < all.length; j++) {
        all[j] = j % values;
      }
      return all;
    }
    double[] cdf = new double[values];
    double sum = 0;
    for (int v = 0; v < values; v++) {
      sum += Math.pow(v + 1, -1.1);
      cdf[v] = sum;
    }
    int calls = (int) Math.round(rate * sum); // the hottest's weight is 1: rate calls a window
    java.util.Random random = new java.util.Random(42);
    int[] drawn = new int[calls];
    for (int j = 0; j < calls; j++) {
      int v = java.util.Arrays.binarySearch(cdf, random.nextDouble() * sum);
      drawn[j] = Math.min(values - 1, v < 0 ? -v - 1 : v);
    }
    return drawn;
  }
}
