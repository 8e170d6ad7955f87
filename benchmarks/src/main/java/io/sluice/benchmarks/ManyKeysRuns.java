package io.sluice.benchmarks;

import static io.sluice.benchmarks.DistributedBenchmark.OA_NODES;
import static io.sluice.benchmarks.DistributedBenchmark.OA_WINDOW;
import static io.sluice.benchmarks.DistributedHarness.log;
import static io.sluice.benchmarks.DistributedHarness.storeCalls;
import static io.sluice.benchmarks.DistributedHarness.waitUntil;

import io.sluice.benchmarks.DistributedNodes.Impl;
import io.sluice.benchmarks.DistributedNodes.Node;
import io.sluice.benchmarks.DistributedNodes.Spec;
import io.sluice.node.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The many-keys part of {@link DistributedBenchmark}: sparse keys and small limits on
 * {@link DistributedBenchmark#OA_NODES} nodes, every implementation on the same seeded traffic
 * ({@link ManyKeysTraffic}), scored against the exact algorithm.
 */
final class ManyKeysRuns {
  /** Many-key runs: the length of each, in windows of {@link DistributedBenchmark#OA_WINDOW}. */
  static final int MANY_KEYS_WINDOWS = 3;
  /** A request decided this long after its time is counted as late (the node's thread fell behind). */
  static final long LATE_NANOS = 20_000_000L;

  /** One many-key run: an implementation on a profile's traffic, scored against the exact algorithm. */
  record ManyKeys(Impl impl, ManyKeysTraffic.Profile profile, ManyKeysTraffic.Score score, long late, long commands,
      long storeCalls, Map<String, Long> commandMix) {
    double commandsPer1000() {
      return score.requests() == 0 ? Double.NaN : commands * 1000.0 / score.requests();
    }

    double storeCallsPer1000() {
      return storeCalls < 0 || score.requests() == 0 ? Double.NaN : storeCalls * 1000.0 / score.requests();
    }
  }

  private final DistributedOptions o;
  private final DistributedHarness h;

  ManyKeysRuns(DistributedOptions o, DistributedHarness h) {
    this.o = o;
    this.h = h;
  }

  List<ManyKeys> manyKeys(String uri) throws InterruptedException {
    List<ManyKeys> out = new ArrayList<>();
    // (Sluice's token buckets last: scored against the exact bucket, see ManyKeysTraffic#scoreBucket)
    List<Impl> impls = new ArrayList<>(List.of(DistributedNodes.sluice(null), DistributedNodes.sluice(1L),
        DistributedNodes.bucket4j(true), DistributedNodes.bucket4j(false), DistributedNodes.sluiceBucket(100L),
        DistributedNodes.sluiceBucket(1L)));
    if (o.only != null) {
      impls.removeIf(i -> !o.only.matcher(i.label()).find());
    }
    long seed = 20_261_201L;
    for (ManyKeysTraffic.Profile p : ManyKeysTraffic.PROFILES) {
      ManyKeysTraffic traffic = ManyKeysTraffic.of(p, OA_NODES, OA_WINDOW.toNanos(), MANY_KEYS_WINDOWS, seed++);
      for (Impl impl : impls) {
        ManyKeys r = manyKeysRun(uri, impl, traffic);
        if (r != null) {
          out.add(r);
          ManyKeysTraffic.Score s = r.score();
          log(String.format(Locale.ROOT, "many keys %-14s %-50s %,d requests: admitted %.2f%% of exact, false denials"
              + " %.3f%% (below half %d), worst over %d (%d key-windows), %.0f cmds/1000, late %d", p.name(),
              impl.label(), s.requests(), s.admittedVsExactPercent(), s.falseDenialPercent(), s.falseDenialsBelowHalf(),
              s.worstOverPermits(), s.keyWindowsOver(), r.commandsPer1000(), r.late()));
        }
      }
    }
    return out;
  }

  /** One run: each node's thread decides its requests at their times, from a window edge on. */
  private ManyKeys manyKeysRun(String uri, Impl impl, ManyKeysTraffic traffic) throws InterruptedException {
    String prefix = "mk" + h.nextRun();
    String where = "many keys, " + traffic.profile.name() + ", " + impl.label();
    Spec spec = new Spec(traffic.profile.limit(), OA_WINDOW, true);
    List<Node> nodes = h.createNodes(uri, spec, impl, prefix, where);
    if (nodes == null) {
      return null;
    }
    long windowNanos = OA_WINDOW.toNanos();
    Decisions d = new Decisions(traffic, (Math.floorDiv(Ticker.system().read(), windowNanos) + 3) * windowNanos,
        windowNanos);
    Thread[] workers = new Thread[OA_NODES];
    for (int n = 0; n < OA_NODES; n++) {
      workers[n] = d.worker(nodes.get(n), n, prefix);
    }
    for (Thread w : workers) {
      w.start();
    }
    waitUntil(d.start - 50_000_000L);
    h.resetStats();
    long callsBefore = storeCalls(nodes);
    h.joinWorkers(workers, MANY_KEYS_WINDOWS * windowNanos, where);
    Map<String, Long> mix = h.commandStats();
    long callsAfter = storeCalls(nodes);
    long swallowed = 0;
    for (Node node : nodes) {
      swallowed += node.swallowedErrors();
    }
    h.closeNodes(nodes, where);
    h.reportFailures(d.thrown, swallowed, where);
    long lateTotal = 0;
    for (long l : d.late) {
      lateTotal += l;
    }
    long commands = mix.values().stream().mapToLong(Long::longValue).sum();
    long storeCalls = callsBefore < 0 || callsAfter < 0 ? -1 : callsAfter - callsBefore;
    ManyKeysTraffic.Score score = impl.family().equals(DistributedNodes.SLUICE_BUCKET)
        ? traffic.scoreBucket(d.allowed, d.decidedIn, d.decidedAtNanos) : traffic.score(d.allowed, d.decidedIn);
    return new ManyKeys(impl, traffic.profile, score, lateTotal, commands, storeCalls, mix);
  }

  /**
   * One run's decisions, per request: allowed or not, the window it was decided in and when; and per
   * node the requests it decided late.
   *
   * <p>Concurrency: each worker writes only the slots of its own requests and node; the driving thread
   * reads them after joining the workers.
   */
  private static final class Decisions {
    final ManyKeysTraffic traffic;
    final long start;
    final long windowNanos;
    final boolean[] allowed;
    final int[] decidedIn;
    final long[] decidedAtNanos;
    final long[] late = new long[OA_NODES];
    final Throwable[] thrown = new Throwable[OA_NODES];

    Decisions(ManyKeysTraffic traffic, long start, long windowNanos) {
      this.traffic = traffic;
      this.start = start;
      this.windowNanos = windowNanos;
      this.allowed = new boolean[traffic.requests.size()];
      this.decidedIn = new int[traffic.requests.size()];
      this.decidedAtNanos = new long[traffic.requests.size()];
    }

    /** Node {@code index}'s thread, deciding its requests at their times; not started. */
    Thread worker(Node node, int index, String prefix) {
      int[] mine = traffic.requestsOf(index);
      Thread t = new Thread(() -> {
        try {
          for (int i : mine) {
            ManyKeysTraffic.Request r = traffic.requests.get(i);
            long at = start + r.atNanos();
            waitUntil(at);
            long decidedAt = Ticker.system().read();
            allowed[i] = node.tryAcquire(ManyKeysTraffic.key(r.key()));
            decidedIn[i] = (int) Math.floorDiv(decidedAt - start, windowNanos);
            decidedAtNanos[i] = decidedAt - start;
            if (decidedAt - at > LATE_NANOS) {
              late[index]++;
            }
          }
        } catch (Throwable e) {
          thrown[index] = e;
        }
      }, "mk-" + prefix + "-" + index);
      t.setDaemon(true);
      return t;
    }
  }
}
