package io.sluice.sync;

import io.sluice.node.Algorithm;
import io.sluice.node.Decision;
import io.sluice.node.Limit;
import io.sluice.node.ManualTicker;
import io.sluice.node.RateLimiter;
import io.sluice.sync.sim.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A randomized differential probe of window limits (fixed window, sliding window counter) decided by
 * {@link SyncedLimiter} nodes (approximate and reservation modes, batch 1 now and then as a yardstick)
 * against the exact algorithm (limiter-node's in-process {@link RateLimiter} deciding the same
 * requests at the same instants, at the stores' microsecond resolution), on {@link AccuracyKit}'s
 * simulated clock and sync schedule (each node syncs on its own timer with a random phase, a sync a
 * decision asks for runs a simulated millisecond later), with what the kit does not drive: releases
 * after admitted decisions, nodes closing and new ones starting, a flusher that stalls, the clock
 * jumping over syncs, keys routed sticky, alternating or at random, and each decision's fields.
 *
 * <p>A case is drawn from a seed ({@link Case#draw}); {@link #run} returns what it found. Driven by
 * {@code WindowProbeTest} (only with {@code -Dsluice.probe=true}).
 */
final class WindowProbe {
  static final long START = AccuracyKit.START_NANOS;
  static final long MS = 1_000_000L;
  static final String TRACE = System.getProperty("sluice.probe.trace", "");
  /** {@code -Dsluice.probe.unitCosts=true}: every cost 1 (the same cases otherwise). */
  static final boolean UNIT_COSTS = Boolean.getBoolean("sluice.probe.unitCosts");
  /**
   * {@code -Dsluice.probe.hot=true}: keys at and above their limits (bursts at the window edges, Poisson
   * from 0.9 to 4 times the limit) and faults more often: a search for over-admission.
   */
  static final boolean HOT = Boolean.getBoolean("sluice.probe.hot");
  /**
   * -Dsluice.probe.tryAcquire=true: decisions without a release go through {@code tryAcquire} (a key's
   * credit pays without the view's monitor), so only their verdicts are checked, not their fields.
   */
  static final boolean TRY_ACQUIRE = Boolean.getBoolean("sluice.probe.tryAcquire");

  enum Kind { REQUEST, CLOSE, START, JUMP, STALL }

  /** One event of a case: a request (key, cost, routing, released when admitted) or a fault. */
  record Event(long at, Kind kind, String key, long cost, int route, boolean release, long length, int node) {
    static Event request(long at, String key, long cost, int route, boolean release) {
      return new Event(at, Kind.REQUEST, key, cost, route, release, 0, -1);
    }
  }

  /** Routing of a key's requests: to a random live node, always the same one, or the next one in turn. */
  static final int RANDOM = 0;
  static final int STICKY = 1;
  static final int ALTERNATE = 2;

  /** One case: the limit, the nodes' settings, the events in time order. */
  record Case(long seed, Limit limit, int nodes, boolean reservation, long batch, Duration sync, boolean heartbeatAtStart,
      List<Event> events, String traffic) {

    long windowNanos() {
      return limit.periodNanos();
    }

    boolean sliding() {
      return limit.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER;
    }

    @Override
    public String toString() {
      return String.format(Locale.ROOT, "seed %d: %s %d per %s, %d node%s, %s, batch %d, sync %s; %d events; %s", seed,
          sliding() ? "sliding" : "fixed", limit.capacity(), Duration.ofNanos(windowNanos()), nodes,
          nodes == 1 ? "" : "s", batch == 1 ? "exact" : reservation ? "reservation" : "approximate", batch, sync,
          events.size(), traffic);
    }

    private static long pick(SplittableRandom r, long... values) {
      return values[r.nextInt(values.length)];
    }

    /** A case drawn from {@code seed}, with the traffic the switches ask for. */
    static Case draw(long seed) {
      return draw(seed, HOT, UNIT_COSTS);
    }

    /** A case drawn from {@code seed}: with {@code hot}, keys at and above their limits; with {@code unitCosts}, every cost 1. */
    static Case draw(long seed, boolean hot, boolean unitCosts) {
      SplittableRandom r = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + 17);
      boolean sliding = r.nextBoolean();
      long limit = pick(r, 1, 2, 3, 5, 10, 37, 100, 1_000, 1_000_000);
      long window = pick(r, 100 * MS, 250 * MS, 1_000 * MS, 5_000 * MS, 60_000 * MS, 900_000 * MS, 3_600_000 * MS);
      int nodes = 1 + r.nextInt(5);
      boolean reservation = r.nextInt(3) == 0;
      long batch = r.nextInt(20) == 0 ? 1 : pick(r, 2, 3, 5, 10, 50, 100, 100, 500, 1_000);
      long sync = pick(r, 1 * MS, 10 * MS, 50 * MS, 100 * MS, 100 * MS, 250 * MS, 1_000 * MS, window / 3, window / 10,
          window / 100);
      sync = Math.max(Math.max(MS, window / 2_000), Math.min(window / 2, sync));
      sync = sync / MS * MS;
      Limit l = (sliding ? Limit.slidingWindowCounter("probe") : Limit.fixedWindow("probe")).limit(limit)
          .window(Duration.ofNanos(window)).build();
      long duration = window * (3 + r.nextInt(4));
      // the first request lands anywhere in a window
      long offset = r.nextLong(window);
      List<Event> events = new ArrayList<>();
      StringBuilder traffic = new StringBuilder();
      int keys = 1 + r.nextInt(4);
      for (int k = 0; k < keys; k++) {
        String key = "k" + k;
        int route = r.nextInt(3);
        double releaseP = r.nextInt(3) == 0 ? 0.1 + 0.4 * r.nextDouble() : 0;
        int costKind = r.nextInt(4); // 0,1: cost 1; 2: random up to the limit; 3: sometimes the whole limit
        if (unitCosts) {
          costKind = 0;
        }
        int pattern = r.nextInt(6);
        if (hot) {
          pattern = r.nextBoolean() ? 3 : 4; // (bursts at the edges, or Poisson at the limit and above)
        }
        traffic.append(key).append(':').append(new String[] {"paced~sync", "idle-gaps", "mid-window", "edges",
            "poisson", "mixed"}[pattern]).append('/').append(new String[] {"random", "sticky", "alternate"}[route])
            .append(costKind == 2 ? "/costs" : costKind == 3 ? "/full-cost" : "")
            .append(releaseP > 0 ? String.format(Locale.ROOT, "/release %.2f", releaseP) : "").append(' ');
        List<Long> times = new ArrayList<>();
        long from = START + offset;
        switch (pattern) {
          case 0 -> { // about one sync interval apart
            double f = 0.7 + 0.7 * r.nextDouble();
            for (long t = from; t < START + duration; t += Math.max(1_000, (long) (sync * f * (0.9 + 0.2 * r.nextDouble())))) {
              times.add(t);
            }
          }
          case 1 -> { // a few requests, then idle for about a sync interval, a window or several windows
            long t = from;
            while (t < START + duration) {
              int n = 1 + r.nextInt((int) Math.min(20, 2 * limit + 1));
              for (int i = 0; i < n; i++) {
                times.add(t);
                t += r.nextLong(Math.max(1, sync / 4));
              }
              long gap = pick(r, sync, sync + sync / 2, window, window + window / 3, 3 * window);
              t += gap;
            }
          }
          case 2 -> { // first seen mid-window, then steady below or around the limit
            long t = START + window * (1 + r.nextInt(2)) + window / 4 + r.nextLong(window / 2);
            double rate = limit * pickD(r, 0.05, 0.2, 0.45, 0.9, 1.5) / window; // per nano
            while (t < START + duration) {
              times.add(t);
              t += Math.max(1_000, (long) (-Math.log(1 - r.nextDouble()) / rate));
            }
          }
          case 3 -> { // bursts at window edges
            for (long w = (START + offset) / window + 1; w * window < START + duration; w++) {
              int n = (int) Math.min(200, Math.max(1, (long) (limit * pickD(r, 0.3, 0.5, 1, 2))));
              long edge = w * window;
              long spread = Math.max(1_000, Math.min(sync, window / 20));
              for (int i = 0; i < n; i++) {
                times.add(edge - spread + r.nextLong(2 * spread));
              }
            }
          }
          case 4 -> { // Poisson at a fraction or a multiple of the limit
            double rate = limit * (hot ? pickD(r, 0.9, 1, 1.2, 2, 4) : pickD(r, 0.02, 0.1, 0.3, 0.45, 1, 2, 4)) / window;
            long t = from;
            while (t < START + duration) {
              times.add(t);
              t += Math.max(1_000, (long) (-Math.log(1 - r.nextDouble()) / rate));
            }
          }
          default -> { // a slow stream with bursts now and then
            double rate = limit * pickD(r, 0.05, 0.2, 0.4) / window;
            long t = from;
            while (t < START + duration) {
              times.add(t);
              if (r.nextInt(10) == 0) {
                int n = 1 + r.nextInt((int) Math.min(50, limit));
                for (int i = 0; i < n; i++) {
                  times.add(t + r.nextLong(Math.max(1, sync)));
                }
              }
              t += Math.max(1_000, (long) (-Math.log(1 - r.nextDouble()) / rate));
            }
          }
        }
        if (times.size() > 1_500) {
          times = new ArrayList<>(times.subList(0, 1_500));
        }
        for (long t : times) {
          long cost = switch (costKind) {
            case 2 -> 1 + r.nextLong(limit);
            case 3 -> r.nextInt(4) == 0 ? limit : 1;
            default -> 1;
          };
          events.add(Event.request(t, key, cost, route, releaseP > 0 && r.nextDouble() < releaseP));
        }
      }
      // faults: nodes closing (and others starting), a node's flusher stalling, the clock jumping over syncs
      if (r.nextInt(hot ? 2 : 3) == 0) {
        int n = 1 + r.nextInt(3);
        for (int i = 0; i < n; i++) {
          long at = START + r.nextLong(duration);
          events.add(new Event(at, Kind.CLOSE, null, 0, 0, false, 0, r.nextInt(8)));
          long delay = pick(r, 0, 0, sync, window / 2);
          events.add(new Event(at + delay, Kind.START, null, 0, 0, false, 0, r.nextInt(2)));
        }
        traffic.append("churn ").append(n).append(' ');
      }
      if (r.nextInt(hot ? 2 : 4) == 0) {
        long at = START + r.nextLong(duration);
        long length = pick(r, 2 * sync, window, window + window / 2);
        events.add(new Event(at, Kind.STALL, null, 0, 0, false, length, r.nextInt(8)));
        traffic.append("stall ").append(Duration.ofNanos(length)).append(' ');
      }
      if (r.nextInt(hot ? 3 : 5) == 0) {
        long at = START + r.nextLong(duration);
        long length = pick(r, sync + sync / 2, window - window / 3, 2 * window + window / 2);
        events.add(new Event(at, Kind.JUMP, null, 0, 0, false, length, -1));
        traffic.append("jump ").append(Duration.ofNanos(length)).append(' ');
        // the clock jumps over what would have come meanwhile
        events.removeIf(e -> e.kind() == Kind.REQUEST && e.at() > at && e.at() < at + length);
        events.add(Event.request(at + length, "k0", 1, RANDOM, false));
      }
      events.sort((a, b) -> Long.compare(a.at(), b.at()));
      return new Case(seed, l, nodes, reservation, batch, Duration.ofNanos(sync), r.nextBoolean(), List.copyOf(events),
          traffic.toString().trim());
    }

    private static double pickD(SplittableRandom r, double... values) {
      return values[r.nextInt(values.length)];
    }
  }

  /** One violation found by a run. */
  record Violation(String type, String key, long window, String detail) {
    @Override
    public String toString() {
      return type + " key " + key + " window +" + window + ": " + detail;
    }
  }

  /** What a run found: the violations (first ones in detail) and the counts of each type. */
  record Result(Case c, List<Violation> violations, Map<String, Integer> counts, long requests, long nodesAdmitted,
      long exactAdmitted, double worstOver) {
    boolean clean() {
      return counts.isEmpty();
    }
  }

  private WindowProbe() {
  }

  /** Runs a case: its nodes on a fresh {@link MemoryStore}, the exact algorithm beside them. */
  static Result run(Case c) {
    Limit limit = c.limit();
    long window = c.windowNanos();
    long interval = c.sync().toNanos();
    boolean sliding = c.sliding();
    long cap = limit.capacity();
    double bound = Math.max(1, 0.005 * cap);
    MemoryStore store = new MemoryStore();
    ManualTicker ticker = new ManualTicker(START);
    ManualTicker exactTicker = new ManualTicker(START);
    RateLimiter exact = RateLimiter.builder(limit).ticker(exactTicker).build();
    SplittableRandom random = new SplittableRandom(c.seed() * 31 + 7);
    List<SyncedLimiter> all = new ArrayList<>();
    List<Integer> live = new ArrayList<>();
    List<long[]> timers = new ArrayList<>(); // per node: {next sync, asked sync, next heartbeat, stalled until, syncs since heartbeat}
    int[] started = {0};
    long[] nodeStartedAt = new long[64];
    java.util.function.LongConsumer startNode = at -> {
      SyncedLimiter.Builder b = SyncedLimiter.builder(limit, store).nodeId("probe-" + c.seed() + "-" + started[0]++)
          .ticker(ticker).autoSync(false).syncInterval(c.sync());
      if (c.batch() == 1) {
        b.batchSize(1);
      } else if (c.reservation()) {
        b.batchSize(c.batch()).reservation();
      } else {
        b.batchSize(c.batch());
      }
      SyncedLimiter node = b.build();
      all.add(node);
      live.add(all.size() - 1);
      nodeStartedAt[all.size() - 1] = at;
      timers.add(new long[] {at + random.nextLong(interval), Long.MAX_VALUE, at + 1_000 * MS, Long.MIN_VALUE, 0});
    };
    for (int i = 0; i < c.nodes(); i++) {
      startNode.accept(START);
    }
    // each node heartbeats once as its flusher starts (in turn: the first count fewer nodes than there
    // are until their next heartbeat); with heartbeatAtStart, once more, as a second later
    for (SyncedLimiter n : all) {
      n.heartbeatNow();
    }
    for (SyncedLimiter n : all) {
      if (c.heartbeatAtStart()) {
        n.heartbeatNow();
      }
    }
    Map<String, long[]> nodeCounts = new HashMap<>(); // key -> {window, kept, previous kept, released in it}
    Map<String, long[]> exactCounts = new HashMap<>();
    Map<String, Integer> turns = new HashMap<>();
    Map<String, Map<Long, long[]>> history = new HashMap<>(); // key -> window -> {kept, admitted}
    Map<String, Map<Long, Map<Integer, Long>>> releasedBy = new HashMap<>(); // key -> window -> node -> largest release
    Map<String, long[]> lastLargeDenial = new HashMap<>(); // key@node -> {time}
    long[] lastFault = {Long.MIN_VALUE};
    Map<String, double[]> worst = new HashMap<>(); // key -> {window, worst over}
    List<Violation> violations = new ArrayList<>();
    Map<String, Integer> counts = new LinkedHashMap<>();
    long nodesAdmitted = 0;
    long exactAdmitted = 0;
    long requests = 0;
    double worstOver = 0;
    long lastEventAt = START;
    try {
      for (Event e : c.events()) {
        // syncs due before this event, in time order (a stalled flusher's wait until it wakes)
        while (true) {
          int due = -1;
          long dueAt = e.at();
          for (int i : live) {
            long[] t = timers.get(i);
            long at = Math.max(Math.min(t[0], t[1]), t[3]);
            if (at <= dueAt) {
              due = i;
              dueAt = at;
            }
          }
          if (due < 0) {
            break;
          }
          advance(ticker, dueAt);
          SyncedLimiter node = all.get(due);
          long[] t = timers.get(due);
          // a heartbeat every simulated second, or every 200 syncs (the registry's TTL runs on the wall
          // clock: a node must heartbeat within 3 s of the wall clock; deterministic, so seeds replay)
          if (t[2] <= dueAt || ++t[4] >= 200) {
            node.heartbeatNow();
            t[2] = dueAt + 1_000 * MS;
            t[4] = 0;
          }
          node.takeSyncRequest();
          node.syncNow();
          while (t[0] <= dueAt) {
            t[0] += interval;
          }
          t[1] = Long.MAX_VALUE;
        }
        advance(ticker, e.at());
        long now = Math.max(e.at(), lastEventAt);
        lastEventAt = now;
        if (!TRACE.isEmpty() && e.kind() != Kind.REQUEST) {
          System.out.printf(Locale.ROOT, "trace w%d +%.3f ms: %s node %d length %.1f ms (live %s)%n",
              Math.floorDiv(now, window) - Math.floorDiv(START, window), (now - Math.floorDiv(now, window) * window) / 1e6,
              e.kind(), e.node(), e.length() / 1e6, live);
        }
        switch (e.kind()) {
          case CLOSE -> {
            if (!live.isEmpty() && (live.size() > 1 || c.events().stream().anyMatch(x -> x.kind() == Kind.START && x.at() >= now))) {
              int idx = live.remove(Math.floorMod(e.node(), live.size()));
              all.get(idx).close();
            }
            continue;
          }
          case START -> {
            startNode.accept(now);
            SyncedLimiter fresh = all.get(all.size() - 1);
            fresh.heartbeatNow(); // (as its flusher does when it starts)
            continue;
          }
          case STALL -> {
            lastFault[0] = now + e.length();
            if (!live.isEmpty()) {
              timers.get(live.get(Math.floorMod(e.node(), live.size())))[3] = now + e.length();
            }
            continue;
          }
          case JUMP -> {
            lastFault[0] = now + e.length();
            for (int i : live) {
              timers.get(i)[3] = now + e.length() + MS; // the first decision after the jump goes before any sync
            }
            continue;
          }
          default -> {
          }
        }
        if (live.isEmpty()) {
          continue;
        }
        requests++;
        String key = e.key();
        long cost = e.cost();
        int n = switch (e.route()) {
          case STICKY -> live.get(Math.floorMod(key.hashCode(), live.size()));
          case ALTERNATE -> {
            int turn = turns.merge(key, 1, Integer::sum);
            yield live.get(turn % live.size());
          }
          default -> live.get(random.nextInt(live.size()));
        };
        SyncedLimiter node = all.get(n);
        long w = Math.floorDiv(now, window);
        double prevWeight = sliding ? (double) (window - (now - w * window)) / window : 0;
        long[] nc = roll(nodeCounts.computeIfAbsent(key, k -> new long[] {w, 0, 0, 0, 0}), w);
        long[] ec = roll(exactCounts.computeIfAbsent(key, k -> new long[] {w, 0, 0, 0, 0}), w);
        double exactEstimate = ec[2] * prevWeight + ec[1];
        double nodeEstimate = nc[2] * prevWeight + nc[1];
        boolean bare = TRY_ACQUIRE && !e.release();
        Decision d = bare ? null : node.acquire(key, cost);
        boolean bareAllowed = bare && node.tryAcquire(key, cost);
        if (node.takeSyncRequest()) {
          long[] t = timers.get(n);
          t[1] = Math.min(t[1], now + MS);
        }
        advance(exactTicker, now / 1_000 * 1_000);
        Decision x = exact.acquire(key, cost);
        boolean nodeAllowed = bare ? bareAllowed : d.allowed();
        boolean exactAllowed = x.allowed();
        if (key.equals(TRACE)) {
          System.out.printf(Locale.ROOT, "trace w%d +%.3f ms node %d cost %d: %s | exact %s%s | %s"
                  + " | store %d claims %d | kept nodes %d exact %d%n",
              w - Math.floorDiv(START, window), (now - w * window) / 1e6, n, cost, nodeAllowed ? "A" : "D",
              exactAllowed ? "A" : "D", e.release() ? " (release)" : "", CoreAccess.core(node).describeView(key, now),
              store.count("probe", key, w), store.claims("probe", key, w), nc[1], ec[1]);
        }
        long relW = w - Math.floorDiv(START, window);
        // the decision's fields (tryAcquire's: a verdict only)
        if (d != null) {
          List<String> lies = new ArrayList<>();
          if (d.limit() != limit) {
            lies.add("limit " + d.limit());
          }
          if (d.remaining() > cap) {
            lies.add("remaining " + d.remaining() + " > limit " + cap);
          }
          if (nodeAllowed && d.remaining() > cap - cost) {
            lies.add("allowed cost " + cost + " with remaining " + d.remaining() + " > limit - cost");
          }
          if (!nodeAllowed && d.retryAfterNanos() <= 0) {
            lies.add("denied with retry-after " + d.retryAfterNanos());
          }
          if (!nodeAllowed && d.remaining() >= cost) {
            lies.add("denied cost " + cost + " with remaining " + d.remaining());
          }
          long maxReset = (sliding ? 2 : 1) * window;
          if (d.resetNanos() <= 0 || d.resetNanos() > maxReset) {
            lies.add("reset " + d.resetNanos() + " ns outside (0, " + maxReset + "]");
          }
          if (!nodeAllowed && d.retryAfterNanos() > d.resetNanos() + interval) {
            lies.add("retry-after " + d.retryAfterNanos() + " ns > reset " + d.resetNanos() + " ns + sync");
          }
          if (nodeAllowed && d.window() != w) {
            lies.add("allowed with window " + d.window() + ", decided in " + w);
          }
          // one node all along: it knows every permit; its remaining is at most what its own admissions leave
          double nodeAfter = nodeEstimate + (nodeAllowed ? cost : 0);
          if (all.size() == 1 && nc[3] + nc[4] == 0 && d.remaining() > Math.floor(cap - nodeAfter + 1e-9) + 1) {
            lies.add("one node: remaining " + d.remaining() + ", its admissions leave " + Math.floor(cap - nodeAfter + 1e-9)
                + " (exact algorithm " + x.remaining() + ")");
          }
          if (all.size() == 1 && !sliding && !nodeAllowed && !exactAllowed
              && d.retryAfterNanos() < x.retryAfterNanos() - interval) {
            lies.add("one node: retry-after " + d.retryAfterNanos() / 1e6 + " ms, the exact algorithm's "
                + x.retryAfterNanos() / 1e6 + " ms");
          }
          if (!lies.isEmpty()) {
            note(violations, counts, "decision", key, relW, String.join("; ", lies) + String.format(Locale.ROOT,
                " (at +%.3f ms of the window, node %d, %s; exact %s)", (now - w * window) / 1e6, n, d, x));
          }
        }
        // false denial on a key below half its limit (the exact run's and the nodes' own kept estimates)
        if (exactAllowed && !nodeAllowed && exactEstimate + cost <= cap / 2.0 && nodeEstimate + cost <= cap / 2.0) {
          long[] large = lastLargeDenial.get(key);
          String context = (nc[3] + nc[4] > 0 ? " after releases" : "")
              + (large != null && now - large[0] <= 8 * interval ? " after a large cost denied" : "")
              + (now - nodeStartedAt[n] < 1_000 * MS ? " on a node started within 1 s" : "")
              + (now <= lastFault[0] + window ? " after a stall or jump" : "");
          note(violations, counts, "false denial below half" + (context.isEmpty() ? "" : " (" + context.trim() + ")"),
              key, relW, String.format(Locale.ROOT,
              "cost %d at +%.3f ms node %d: exact kept %d (prev %d), nodes kept %d (prev %d); %s; %s;"
                  + " store %d (prev %d) claims %d",
              cost, (now - w * window) / 1e6, n, ec[1], ec[2], nc[1], nc[2], d, CoreAccess.core(node).describeView(key, now),
              store.count("probe", key, w), store.count("probe", key, w - 1), store.claims("probe", key, w)));
        }
        if (!nodeAllowed && cost > 1) {
          lastLargeDenial.put(key, new long[] {now});
        }
        if (exactAllowed) {
          exactAdmitted += cost;
          ec[1] += cost;
        }
        if (nodeAllowed) {
          nodesAdmitted += cost;
          nc[1] += cost;
        }
        if (e.release()) {
          if (nodeAllowed) {
            releasedBy.computeIfAbsent(key, k -> new HashMap<>()).computeIfAbsent(w, k -> new HashMap<>())
                .merge(n, cost, Math::max);
            node.release(key, cost, d);
            nc[1] -= cost;
            nc[3] += cost;
          }
          if (exactAllowed) {
            exact.release(key, cost, x);
            ec[1] -= cost;
            ec[3] += cost;
          }
        } else if (nodeAllowed) {
          // over-admission of a kept admission, as the algorithm measures it
          double over = nc[2] * prevWeight + nc[1] - cap;
          double[] wk = worst.get(key);
          if (wk == null || wk[0] != w) {
            if (wk != null) {
              overOf(violations, counts, key, wk, bound, cap, window);
            }
            wk = new double[] {w, 0, 0, 0};
            worst.put(key, wk);
          }
          if (over > wk[1]) {
            wk[1] = over;
            wk[2] = nc[1];
            wk[3] = ec[1];
          }
          worstOver = Math.max(worstOver, over);
          if ((c.reservation() || c.batch() == 1) && over > 1e-9) {
            note(violations, counts, "over the limit in " + (c.batch() == 1 ? "exact" : "reservation") + " mode", key,
                relW, String.format(Locale.ROOT, "%.2f over at +%.3f ms node %d: nodes kept %d (prev %d), exact %d (prev %d)",
                    over, (now - w * window) / 1e6, n, nc[1], nc[2], ec[1], ec[2]));
          }
        }
        history.computeIfAbsent(key, k -> new HashMap<>()).put(w, new long[] {nc[1], 0});
      }
      for (Map.Entry<String, double[]> wk : worst.entrySet()) {
        overOf(violations, counts, wk.getKey(), wk.getValue(), bound, cap, window);
      }
    } finally {
      for (int i : live) {
        all.get(i).close();
      }
    }
    // every node closed (flushed): the store counts what the nodes kept, plus at most one request's
    // permits per node given back after the store had counted them (release's documented cost)
    if (c.batch() > 1 && !c.reservation()) {
      for (Map.Entry<String, Map<Long, long[]>> h : history.entrySet()) {
        long lastW = h.getValue().keySet().stream().mapToLong(Long::longValue).max().orElse(0);
        for (Map.Entry<Long, long[]> kw : h.getValue().entrySet()) {
          long w = kw.getKey();
          if (w < lastW - 1) {
            continue; // (the store keeps a key's last two windows)
          }
          long kept = kw.getValue()[0];
          long counted = store.count("probe", h.getKey(), w);
          long releasable = releasedBy.getOrDefault(h.getKey(), Map.of()).getOrDefault(w, Map.of()).values().stream()
              .mapToLong(Long::longValue).sum();
          long relW = w - Math.floorDiv(START, window);
          if (counted < kept) {
            note(violations, counts, "store counts less than admitted", h.getKey(), relW,
                "store " + counted + ", nodes kept " + kept);
          } else if (counted > kept + releasable) {
            note(violations, counts, "store counts more than admitted", h.getKey(), relW,
                "store " + counted + ", nodes kept " + kept + ", largest releases per node sum to " + releasable);
          }
        }
      }
    }
    return new Result(c, violations, counts, requests, nodesAdmitted, exactAdmitted, worstOver);
  }

  /**
   * Shrinks a case that shows violations of {@code type} (a prefix of the type's name): removes events,
   * in chunks and then one by one, while the case still shows one. Node count, settings and the seed
   * (which draws the sync phases and random routing) are kept.
   */
  static Case shrink(Case c, String type) {
    List<Event> events = ProbeShrink.shrink(c.events(), candidate -> run(new Case(c.seed(), c.limit(), c.nodes(),
        c.reservation(), c.batch(), c.sync(), c.heartbeatAtStart(), candidate, c.traffic() + " (shrunk)")).counts()
        .keySet().stream().anyMatch(t -> t.startsWith(type)));
    return new Case(c.seed(), c.limit(), c.nodes(), c.reservation(), c.batch(), c.sync(), c.heartbeatAtStart(),
        events, c.traffic() + " (shrunk)");
  }

  private static void overOf(List<Violation> violations, Map<String, Integer> counts, String key, double[] wk,
      double bound, long cap, long window) {
    if (wk[1] > bound + 1e-9) {
      note(violations, counts, "over-admission", key, (long) wk[0] - Math.floorDiv(START, window), String.format(
          Locale.ROOT, "%.2f permits over a limit of %d (bound %.2f): nodes kept %d in the window, exact %d",
          wk[1], cap, bound, (long) wk[2], (long) wk[3]));
    }
  }

  private static void note(List<Violation> violations, Map<String, Integer> counts, String type, String key, long window,
      String detail) {
    ProbeShrink.note(violations, counts, type, key, window, detail);
  }

  private static void advance(ManualTicker ticker, long at) {
    long d = at - ticker.read();
    if (d > 0) {
      ticker.advanceNanos(d);
    }
  }

  /** {window, kept, previous kept, released in window, released in previous} moved to window w. */
  private static long[] roll(long[] c, long w) {
    if (c.length < 5) {
      throw new IllegalStateException();
    }
    if (c[0] == w) {
      return c;
    }
    boolean next = c[0] == w - 1;
    c[2] = next ? c[1] : 0;
    c[4] = next ? c[3] : 0;
    c[1] = 0;
    c[3] = 0;
    c[0] = w;
    return c;
  }
}
