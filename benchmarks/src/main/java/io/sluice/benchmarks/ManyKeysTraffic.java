package io.sluice.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The distributed benchmark's many-key traffic: seeded Poisson requests over many keys of a fixed
 * window limit, spread over the nodes at random. {@link #score} compares an implementation's
 * decisions of them with the exact algorithm's, in schedule order and in the windows the nodes
 * decided them in (a fixed window admits a request while its key's count in the window stays within
 * the limit): a request decided a little after a window's edge counts in the next window for both.
 */
final class ManyKeysTraffic {
  /**
   * A traffic profile: {@code keys} keys, each asked at its own rate per second, log-uniform between
   * {@code minRate} and {@code maxRate}, under a limit of {@code limit} per window.
   */
  record Profile(String name, int keys, long limit, double minRate, double maxRate) {
    String description() {
      return String.format(java.util.Locale.ROOT, "%,d keys, limit %,d per window, each key Poisson at %s-%s requests/s"
          + " (log-uniform)", keys, limit, trim(minRate), trim(maxRate));
    }

    private static String trim(double v) {
      return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
  }

  /** Sparse keys far below their limit (the exact algorithm admits every request) and small limits, 0.1x-3x. */
  static final List<Profile> PROFILES = List.of(
      new Profile("sparse keys", 2_000, 100, 0.2, 5),
      new Profile("small limits", 500, 5, 0.5, 15));

  /** One request: when (ns from the run's start), which key, which node. */
  record Request(long atNanos, int key, int node) {
  }

  /** How an implementation's decisions compare with the exact algorithm's, over every key and window. */
  record Score(long requests, long admitted, long exactAdmitted, long falseDenials, long falseDenialsBelowHalf,
      long worstOverPermits, long keyWindowsOver, long keyWindows) {
    double falseDenialPercent() {
      return requests == 0 ? 0 : 100.0 * falseDenials / requests;
    }

    double admittedVsExactPercent() {
      return exactAdmitted == 0 ? 100 : 100.0 * admitted / exactAdmitted;
    }
  }

  final Profile profile;
  final long windowNanos;
  final int windows;
  final List<Request> requests;

  private ManyKeysTraffic(Profile profile, long windowNanos, int windows, List<Request> requests) {
    this.profile = profile;
    this.windowNanos = windowNanos;
    this.windows = windows;
    this.requests = requests;
  }

  /** The requests of a profile over {@code windows} windows for {@code nodes} nodes, from a seed. */
  static ManyKeysTraffic of(Profile p, int nodes, long windowNanos, int windows, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    long length = windowNanos * windows;
    List<Request> out = new ArrayList<>();
    double lo = Math.log(p.minRate());
    double hi = Math.log(p.maxRate());
    for (int k = 0; k < p.keys(); k++) {
      double rate = Math.exp(lo + (hi - lo) * random.nextDouble());
      // a random phase: keys do not all start at the run's first instant
      for (double t = -Math.log(1 - random.nextDouble()) / rate * 1e9; t < length;
          t += -Math.log(1 - random.nextDouble()) / rate * 1e9) {
        out.add(new Request((long) t, k, random.nextInt(nodes)));
      }
    }
    out.sort(Comparator.comparingLong(Request::atNanos));
    return new ManyKeysTraffic(p, windowNanos, windows, List.copyOf(out));
  }

  /** The same profile and windows with other requests, in time order (for tests). */
  ManyKeysTraffic with(List<Request> requests) {
    return new ManyKeysTraffic(profile, windowNanos, windows, List.copyOf(requests));
  }

  /** The key's name as the nodes see it. */
  static String key(int k) {
    return "k" + k;
  }

  /**
   * Scores {@code allowed} (per request, in schedule order), each request decided in window
   * {@code decidedIn} (from the run's first window; a late one may fall after the last). Over-admission:
   * per key and window, what was admitted beyond the limit. False denials: requests the exact algorithm
   * admitted and the implementation denied, and of those the ones on a key-window whose whole demand
   * stays within half the limit (no denial there is ever right).
   */
  Score score(boolean[] allowed, int[] decidedIn) {
    int slots = windows + 2;
    long[][] admitted = new long[profile.keys()][slots];
    long[][] demand = new long[profile.keys()][slots];
    long[][] exact = new long[profile.keys()][slots];
    boolean[] exactAllowed = new boolean[requests.size()];
    long admittedTotal = 0;
    long exactTotal = 0;
    for (int i = 0; i < requests.size(); i++) {
      Request r = requests.get(i);
      int w = Math.max(0, Math.min(slots - 1, decidedIn[i]));
      demand[r.key()][w]++;
      if (allowed[i]) {
        admitted[r.key()][w]++;
        admittedTotal++;
      }
      if (exact[r.key()][w] + 1 <= profile.limit()) {
        exact[r.key()][w]++;
        exactAllowed[i] = true;
        exactTotal++;
      }
    }
    FalseDenials denials = falseDenials(allowed, exactAllowed, decidedIn, demand);
    long worst = 0;
    long over = 0;
    long keyWindows = 0;
    for (int k = 0; k < profile.keys(); k++) {
      for (int w = 0; w < slots; w++) {
        if (demand[k][w] > 0) {
          keyWindows++;
        }
        long excess = admitted[k][w] - profile.limit();
        if (excess > 0) {
          over++;
          worst = Math.max(worst, excess);
        }
      }
    }
    return new Score(requests.size(), admittedTotal, exactTotal, denials.all(), denials.belowHalf(), worst, over,
        keyWindows);
  }

  /**
   * Scores a token bucket's decisions (capacity = the limit, refilled at the limit per window, greedy:
   * the GCRA of Sluice's buckets) against the exact bucket deciding the same requests at the moments
   * the nodes decided them ({@code decidedAtNanos}, from the run's start), in that order. Over: the
   * admitted requests replayed through the exact bucket, which goes into debt for each one it would
   * have refused; a key's worst over is its deepest debt in permits (tokens spent that the bucket
   * never had at that moment), and its key-windows over those in which the debt grew. False denials
   * and "below half" as for windows, the demand counted per window of {@code decidedIn}.
   */
  Score scoreBucket(boolean[] allowed, int[] decidedIn, long[] decidedAtNanos) {
    int slots = windows + 2;
    long limit = profile.limit();
    // one token every `interval` ns; a full bucket holds `limit` of them (GCRA: theoretical arrival times)
    double interval = (double) windowNanos / limit;
    double tolerance = interval * limit;
    Integer[] order = decisionOrder(decidedAtNanos);
    double[] exactTat = new double[profile.keys()];
    double[] replayTat = new double[profile.keys()];
    Arrays.fill(exactTat, Double.NEGATIVE_INFINITY);
    Arrays.fill(replayTat, Double.NEGATIVE_INFINITY);
    long[] worstDebt = new long[profile.keys()];
    long[][] demand = new long[profile.keys()][slots];
    boolean[][] overIn = new boolean[profile.keys()][slots];
    boolean[] exactAllowed = new boolean[requests.size()];
    long admittedTotal = 0;
    long exactTotal = 0;
    for (int i : order) {
      Request r = requests.get(i);
      double now = decidedAtNanos[i];
      int w = Math.max(0, Math.min(slots - 1, decidedIn[i]));
      demand[r.key()][w]++;
      double next = Math.max(exactTat[r.key()], now) + interval;
      if (next - now <= tolerance + 1e-6) {
        exactTat[r.key()] = next;
        exactAllowed[i] = true;
        exactTotal++;
      }
      if (allowed[i]) {
        admittedTotal++;
        double tat = Math.max(replayTat[r.key()], now) + interval;
        replayTat[r.key()] = tat;
        long debt = (long) Math.ceil((tat - now - tolerance) / interval - 1e-6);
        if (debt > 0) {
          overIn[r.key()][w] = true;
          worstDebt[r.key()] = Math.max(worstDebt[r.key()], debt);
        }
      }
    }
    FalseDenials denials = falseDenials(allowed, exactAllowed, decidedIn, demand);
    long worst = 0;
    long over = 0;
    long keyWindows = 0;
    for (int k = 0; k < profile.keys(); k++) {
      worst = Math.max(worst, worstDebt[k]);
      for (int w = 0; w < slots; w++) {
        keyWindows += demand[k][w] > 0 ? 1 : 0;
        over += overIn[k][w] ? 1 : 0;
      }
    }
    return new Score(requests.size(), admittedTotal, exactTotal, denials.all(), denials.belowHalf(), worst, over,
        keyWindows);
  }

  /** The indexes of the requests in the order the nodes decided them (schedule order on a tie). */
  private Integer[] decisionOrder(long[] decidedAtNanos) {
    Integer[] order = new Integer[requests.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, Comparator.comparingLong((Integer i) -> decidedAtNanos[i]).thenComparingInt(i -> i));
    return order;
  }

  /** False denials, and of those the ones on a key-window whose demand stays within half the limit. */
  private record FalseDenials(long all, long belowHalf) {
  }

  private FalseDenials falseDenials(boolean[] allowed, boolean[] exactAllowed, int[] decidedIn, long[][] demand) {
    int slots = windows + 2;
    long falseDenials = 0;
    long belowHalf = 0;
    for (int i = 0; i < requests.size(); i++) {
      if (exactAllowed[i] && !allowed[i]) {
        falseDenials++;
        Request r = requests.get(i);
        if (2 * demand[r.key()][Math.max(0, Math.min(slots - 1, decidedIn[i]))] <= profile.limit()) {
          belowHalf++;
        }
      }
    }
    return new FalseDenials(falseDenials, belowHalf);
  }

  /** The indexes of node {@code n}'s requests, in schedule order. */
  int[] requestsOf(int n) {
    return java.util.stream.IntStream.range(0, requests.size()).filter(i -> requests.get(i).node() == n).toArray();
  }
}
