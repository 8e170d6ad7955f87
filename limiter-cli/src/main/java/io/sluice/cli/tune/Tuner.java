package io.sluice.cli.tune;

import io.sluice.node.Durations;

import io.sluice.cli.Shutdown;
import io.sluice.cli.UserError;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/** Runs the sweep: the trace, the exact reference, every setting; then the table and the files. */
final class Tuner {
  static final long WARM_UP_NANOS = 2_000_000_000L;
  private final TuneConfig config;
  private final String command;
  private final PrintWriter out;
  private final PrintWriter err;
  private final Shutdown.Guard guard;
  private final boolean terminal;

  Tuner(TuneConfig config, String command, PrintWriter out, PrintWriter err, Shutdown.Guard guard, boolean terminal) {
    this.config = config;
    this.command = command;
    this.out = out;
    this.err = err;
    this.guard = guard;
    this.terminal = terminal;
  }

  /** Runs and reports; answers the result (rows measured so far when interrupted). */
  TuneResult run() throws InterruptedException {
    String started = ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
    Trace trace;
    try {
      trace = Trace.generate(config.profile(), config.limit(), config.demand(), config.keys(), config.nodes(),
          config.windows(), config.window().toNanos(), config.seed(), config.nodeWeights(), config.keyAffinity());
    } catch (IllegalArgumentException e) {
      throw new UserError(e.getMessage(), io.sluice.cli.Sluice.EXIT_USAGE);
    }
    List<Setting> settings = new ArrayList<>(config.settings());
    String run = "sluice-tune-" + UUID.randomUUID().toString().substring(0, 8);
    List<String> notes = new ArrayList<>();
    List<Row> rows = new ArrayList<>();
    String storeText;
    boolean interrupted = false;
    if (config.simulated()) {
      storeText = simulatedStoreText();
      interrupted = runSimulated(trace, settings, rows, notes, storeText);
    } else {
      if (config.redis() == null && !config.regional()) {
        err.println("starting an embedded Hazelcast member on 127.0.0.1 (a few seconds)...");
        err.flush();
      }
      OnStore measured = runOnStore(trace, settings, run, rows, notes);
      storeText = measured.store();
      interrupted = measured.interrupted();
    }
    // the reference first, then the settings from the smallest
    rows.sort((a, b) -> a.reference() != b.reference() ? (a.reference() ? -1 : 1) : a.setting().compareTo(b.setting()));
    addNotes(rows, notes);
    Recommender.Recommendation rec = Recommender.recommend(rows, config.maxErrorPct(), config.maxFalseDenialsPct());
    TuneResult result = new TuneResult(config, command, started, storeText, trace.size(), List.copyOf(rows), rec,
        List.copyOf(notes), interrupted, settings.size());
    print(result);
    try {
      List<Path> files = Reports.write(result);
      out.println();
      out.println("Wrote " + files.get(0).getParent() + "/: " + Reports.CSV + ", " + Reports.JSON + ", " + Reports.SVG
          + ", " + Reports.HTML + " (open report.html in a browser)");
    } catch (IOException e) {
      throw new UserError("--out " + config.out() + ": cannot write the report: " + e.getMessage());
    }
    out.flush();
    return result;
  }

  private String simulatedStoreText() {
    return "simulated (--simulate): one in-memory store keeping claims as the scripts do, round trip "
        + Durations.format(config.simulatedRoundTrip()) + ", simulated clock";
  }

  private void printHeader(Trace trace, String storeText) {
    out.printf(Locale.ROOT, "sluice tune: %s, %,d requests over %d windows of %s, %s, limit %,d per key per"
            + " window (%s), store: %s%n", config.profile().label, trace.size(), trace.windows,
        Durations.format(config.window()), config.routing(), config.limit(), config.algorithm(), storeText);
    out.flush();
  }

  /**
   * {@code --simulate}: every setting on simulated nodes (see {@link SimulatedReplay}); true when
   * interrupted.
   */
  private boolean runSimulated(Trace trace, List<Setting> settings, List<Row> rows, List<String> notes,
      String storeText) {
    printHeader(trace, storeText);
    Simulation sim = new Simulation(trace, config.sluiceLimit(), 0);
    Measurement reference = sim.model();
    rows.add(Comparison.compare(reference, reference, config.limit(), config.sliding()));
    SimulatedReplay replay = new SimulatedReplay(trace, config.sluiceLimit(), sim, config.simulatedRoundTrip());
    // (for the time left: about what runs of the setting took on 2 cores, per request and per node)
    long stepMillis = 500 + trace.size() / 10 + 5L * config.nodes();
    Progress progress = new Progress(err, terminal, settings.size(), stepMillis);
    for (int i = 0; i < settings.size(); i++) {
      if (guard.requested()) {
        return true;
      }
      Setting s = settings.get(i);
      progress.begin(i, s.label());
      SimulatedReplay.Result r = replay.run(s, config.seed(), guard::requested, progress);
      if (r == null) {
        progress.message("interrupted: writing what was measured so far");
        return true;
      }
      Row row = Comparison.compare(r.measurement(), r.measurement().exactAtSameMoments, config.limit(),
          config.sliding());
      rows.add(row);
      SimulatedReplay.Extra x = r.extra();
      progress.end(String.format(Locale.ROOT, "over the limit %s%% (%s%% against the exact run), under %s%% (worst),"
              + " false denials %s%%, %s store calls/1k, simulated in %.1f s", Reports.number(row.overLimitWorstPct()),
          Reports.number(row.overWorstPct()), Reports.number(row.underWorstPct()),
          Reports.fine(row.falseDenialsPct()), Reports.number(row.storeCallsPer1000()), x.wallNanos() / 1e9));
      notes.add(String.format(Locale.ROOT, "%s: %s of decisions asked the store (answered at once in the simulation,"
              + " each a wait of one round trip in a deployment); %,d decisions waited for a sync's answer on its way"
              + " (%s ms each on average); simulated in %.1f s of wall-clock time.", s.label(),
          Reports.fine(100.0 * x.waitedDecisions() / Math.max(1, row.decisions())) + "%", x.deferredDecisions(),
          Reports.number(x.deferredDecisions() == 0 ? 0 : x.deferredNanos() / 1e6 / x.deferredDecisions()),
          x.wallNanos() / 1e9));
    }
    return false;
  }

  /** What a replay on a real store ran on, and whether it was interrupted. */
  private record OnStore(String store, boolean interrupted) {
  }

  /** The replay on the wall clock against a real store. */
  private OnStore runOnStore(Trace trace, List<Setting> settings, String run, List<Row> rows, List<String> notes)
      throws InterruptedException {
    String storeText;
    boolean interrupted = false;
    try (Backend backend = config.regional() ? Backend.regions(config.regionRedis(), run)
        : config.redis() != null ? Backend.redis(config.redis(), run) : Backend.hazelcast(run)) {
      storeText = backend.describe();
      printHeader(trace, storeText);
      Simulation sim = new Simulation(trace, config.sluiceLimit(), config.throughput().toNanos());
      Measurement reference = sim.model();
      rows.add(Comparison.compare(reference, reference, config.limit(), config.sliding()));
      // both stores have the exact mode; only regions, whose shares are enforced in the approximate mode, lack it
      if (!backend.hasExactMode() && settings.stream().anyMatch(Setting::exact)) {
        settings.removeIf(Setting::exact);
        notes.add("Batch 1 (the exact mode) was not run: regions enforce their shares in the approximate mode only."
            + " Every setting is still compared with the exact algorithm on the global limit, run in-process.");
      }
      // the exact mode runs last, after the reservation mode: their decisions wait on the store (every one, or
      // each lease's), so a cold JVM would make them fall behind; the warm-up runs the approximate mode's first
      List<Setting> order = new ArrayList<>(settings);
      order.sort(java.util.Comparator.comparingInt(Setting::rank).reversed());
      long stepMillis = config.duration().toMillis() + config.throughput().toMillis() + config.window().toMillis() + 800;
      Progress progress = new Progress(err, terminal, order.size(), stepMillis);
      if (!order.isEmpty()) {
        progress.message("warming up (2 s, not measured)");
        sim.warmUp(order.get(0), backend, run + "-warm-up", WARM_UP_NANOS, guard::requested);
      }
      for (int i = 0; i < order.size(); i++) {
        if (guard.requested()) {
          interrupted = true;
          break;
        }
        Setting s = order.get(i);
        progress.begin(i, s.label());
        Measurement m = sim.run(s, backend, run + "-" + i, guard::requested, progress);
        if (m == null) {
          interrupted = true;
          progress.message("interrupted: writing what was measured so far");
          break;
        }
        Row row = Comparison.compare(m, m.exactAtSameMoments, config.limit(), config.sliding());
        rows.add(row);
        progress.end(String.format(Locale.ROOT, "over the limit %s%% (%s%% against the exact run), under %s%% (worst),"
                + " false denials %s%%, %s store calls/1k, p99 %s us", Reports.number(row.overLimitWorstPct()),
            Reports.number(row.overWorstPct()), Reports.number(row.underWorstPct()),
            Reports.fine(row.falseDenialsPct()), Reports.number(row.storeCallsPer1000()),
            Reports.number(row.p99Micros())));
      }
    }
    return new OnStore(storeText, interrupted);
  }

  private void addNotes(List<Row> rows, List<String> notes) {
    long windowMillis = config.window().toMillis();
    for (Row r : rows) {
      if (r.lagP99Millis() > windowMillis * 0.05) {
        notes.add(String.format(Locale.ROOT, "%s: the replay fell behind the trace (p99 %s ms late): this machine"
                + " could not keep the trace's pace. The error is still measured against the exact algorithm at the"
                + " moments the nodes decided, but latency and store calls come from a busy machine.",
            r.setting().label(), Reports.number(r.lagP99Millis())));
      }
      if (r.storeFailures() > 0) {
        notes.add(String.format(Locale.ROOT, "%s: %,d store calls failed or timed out (the fallback policy,"
            + " LOCAL_SHARE, decided meanwhile).", r.setting().label(), r.storeFailures()));
      }
    }
    notes.add("Store calls include each node's heartbeats to the node registry that were calls of their own (at most"
        + " one per second per node: a working node's beat rides on its next flush or claim call, an idle node"
        + " stops beating).");
    if (config.simulated()) {
      notes.add("Simulated (--simulate): the nodes are the real SyncedLimiter on a simulated clock, each node's syncs"
          + " on the timer and at a decision's request as its flusher thread would run them, each sync's store calls"
          + " applied half a round trip after they were sent (with the node's own times) and answered a round trip"
          + " after; the store is one in-memory store running the Hazelcast store's entry processors (flush.lua's"
          + " arithmetic). Not simulated: a decision that asks the store is answered at once (its round trip is"
          + " counted above, not waited), the machine's speed (no latency or decisions/s) and store failures. The"
          + " same options give the same figures.");
      return;
    }
    notes.add("The traffic is generated from --seed and replayed unchanged for every setting; the limiters run on"
        + " the real clock, so a repeated run differs by a little scheduling noise. Each setting is compared with the"
        + " exact algorithm deciding the same requests at the moments its nodes decided them, in the order they decided"
        + " them, on a simulated clock: per key and window (over, under) and request by request (false denials).");
  }

  private void print(TuneResult t) {
    out.println();
    if (t.interrupted()) {
      out.printf(Locale.ROOT, "Interrupted: %d of %d settings measured.%n%n", t.rows().size() - 1, t.settingsPlanned());
    }
    if (t.rows().isEmpty()) {
      out.println("Nothing was measured.");
      return;
    }
    out.print(Reports.table(t.rows(), t.recommendation().row()));
    out.println();
    out.println("over / under: permits admitted beyond / short of what the exact algorithm admits for the same requests at the"
        + " same moments, per key and window, in % of the limit (mean and under: the windows where the limit was reached).");
    out.println("false denials %: requests the exact algorithm admitted and the setting denied, in % of all requests, over"
        + " every key and window, less swaps; < L/2: how many of them in key-windows whose demand stayed below half the"
        + " limit (should be 0). swapped %: such denials the setting made up for in the same key-window by admitting a"
        + " request the exact algorithm denied (which requests, not how many). admitted vs exact %: what the setting"
        + " admitted in % of what the exact algorithm admitted.");
    out.println("store calls /1k: store calls per 1,000 decisions. p50/p99: one decision, microseconds.");
    out.println();
    out.println("Recommended: " + t.recommendation().verdict());
    for (String line : Apply.lines(t.recommendation(), t.config())) {
      out.println("  " + line);
    }
    out.println("Rule: " + t.recommendation().rule() + ".");
    if (!t.recommendation().rejected().isEmpty()) {
      out.println("Did not pass:");
      for (String line : t.recommendation().rejected()) {
        out.println("  " + line);
      }
    }
    for (String n : t.notes()) {
      out.println("Note: " + n);
    }
  }
}
