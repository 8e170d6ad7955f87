package io.sluice.benchmarks;

import static io.sluice.benchmarks.DistributedBenchmark.OA_BURST;
import static io.sluice.benchmarks.DistributedBenchmark.OA_BURST_THREADS;
import static io.sluice.benchmarks.DistributedBenchmark.OA_DEMAND;
import static io.sluice.benchmarks.DistributedBenchmark.OA_LIMIT;
import static io.sluice.benchmarks.DistributedBenchmark.OA_NODES;
import static io.sluice.benchmarks.DistributedBenchmark.OA_WINDOW;
import static io.sluice.benchmarks.DistributedBenchmark.OA_WINDOWS;
import static io.sluice.benchmarks.DistributedBenchmark.THROUGHPUT_LIMIT;
import static io.sluice.benchmarks.DistributedBenchmark.THROUGHPUT_WINDOW;
import static io.sluice.benchmarks.DistributedHarness.log;
import static io.sluice.benchmarks.ManyKeysRuns.MANY_KEYS_WINDOWS;

import io.sluice.benchmarks.ManyKeysRuns.ManyKeys;
import io.sluice.benchmarks.OverAdmissionRuns.OverAdmission;
import io.sluice.benchmarks.ThroughputRuns.Case;
import io.sluice.benchmarks.ThroughputRuns.Cell;
import io.sluice.benchmarks.ThroughputRuns.KeyMode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The report of {@link DistributedBenchmark}: the markdown file ({@code --out}) with a section per
 * part that ran, the notes and failures, and the CSV file ({@code --csv}); and the table helpers
 * ({@link #header}) the other reports of the throughput cells share.
 */
final class DistributedReport {
  private final DistributedOptions o;
  private final DistributedHarness h;

  DistributedReport(DistributedOptions o, DistributedHarness h) {
    this.o = o;
    this.h = h;
  }

  void write(String redisVersion, List<Cell> cells, List<ManyKeyThroughput.Cell> manyKeyCells,
      List<OverAdmission> oas, List<ManyKeys> many) throws IOException {
    StringBuilder md = new StringBuilder();
    setup(md, redisVersion);

    if (!cells.isEmpty()) {
      throughput(md, cells);
    }

    ManyKeyThroughput.report(md, manyKeyCells, o.warmupSeconds, o.measureSeconds);

    if (!oas.isEmpty()) {
      overAdmission(md, oas);
    }

    if (!many.isEmpty()) {
      manyKeysReport(md, many);
    }

    if (!h.notes.isEmpty() || !h.failures.isEmpty() || !h.errors.isEmpty()) {
      md.append("\n## Notes and failures\n\n");
      for (String n : h.notes) {
        md.append("- note: ").append(n).append("\n");
      }
      for (String f : h.failures) {
        md.append("- FAILURE: ").append(f).append("\n");
      }
    }

    Path out = Path.of(o.out);
    if (out.getParent() != null) {
      Files.createDirectories(out.getParent());
    }
    Files.writeString(out, md.toString(), StandardCharsets.UTF_8);
    log("wrote " + out);
    writeCsv(cells, oas);
  }

  /** The title, and how the runs were made: machine, versions, durations, limits, how commands are counted. */
  private void setup(StringBuilder md, String redisVersion) throws IOException {
    Properties versions = new Properties();
    try (InputStream in = DistributedBenchmark.class.getResourceAsStream("/distributed-versions.properties")) {
      if (in != null) {
        versions.load(in);
      }
    }
    md.append("# Distributed decisions, side by side\n\n");
    md.append("Written by `benchmarks/run-distributed.sh` (`io.sluice.benchmarks.DistributedBenchmark`)")
        .append(o.quick ? ", QUICK smoke run" : "").append(", ")
        .append(ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME)).append(".\n\n");
    md.append("- machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, Java ")
        .append(System.getProperty("java.version")).append(" (").append(System.getProperty("java.vm.name"))
        .append("), redis-server ").append(redisVersion).append(" on loopback, started by the harness")
        .append(o.redis == null ? "" : " (no: given with --redis)").append("\n");
    md.append("- versions: Sluice ").append(versions.getProperty("sluice", "?"))
        .append(", Bucket4j `bucket4j_jdk17-lettuce` ").append(versions.getProperty("bucket4j", "?"))
        .append(", Redisson ").append(versions.getProperty("redisson", "?"))
        .append(", Lettuce ").append(versions.getProperty("lettuce", "?"))
        .append(", Netty ").append(versions.getProperty("netty", "?")).append("\n");
    md.append("- each cell: ").append(o.warmupSeconds).append(" s warm-up + ").append(o.measureSeconds)
        .append(" s measured; one node (one limiter, its own Redis connection), all threads calling "
            + "`tryAcquire` in a loop; a fresh node and fresh Redis keys per cell; before the first cell, one untimed "
            + "JVM warm-up pass over every implementation (2 threads, shared key)\n");
    md.append("- throughput limits: ").append(String.format(Locale.ROOT, "%,d", THROUGHPUT_LIMIT))
        .append(" per ").append(THROUGHPUT_WINDOW.toSeconds()).append(" s window per key, so that runs are "
            + "(nearly) all allowed: Sluice sliding window counter; Bucket4j capacity = limit, greedy refill of the "
            + "limit per window; Redisson `trySetRate(OVERALL, limit, window)`; denials below come from the "
            + "implementations' own mechanics, not from the limit (column *allowed %*)\n");
    md.append("- Bucket4j delaying: `Optimizations.delaying(new DelayParameters(")
        .append(DistributedNodes.BUCKET4J_DELAY_TOKENS).append(", ").append(DistributedNodes.BUCKET4J_DELAY_TIME.toMillis())
        .append(" ms))` (Sluice's default batch and sync interval); compare-and-swap `LettuceBasedProxyManager`, "
            + "one `BucketProxy` per key and node\n");
    md.append("- Redis commands: `INFO commandstats` (sum of `calls=` over every `cmdstat_*`, commands run inside "
        + "Lua scripts included), reset with `CONFIG RESETSTAT` before the measured interval; the harness's own "
        + "`INFO`/`CONFIG` calls are left out\n\n");
  }

  /** The throughput tables: decisions, allowed, the ratios to the peers, then the commands (see {@link #commands}). */
  private static void throughput(StringBuilder md, List<Cell> cells) {
    List<Case> cases = new ArrayList<>();
    Map<String, Map<Case, Cell>> byImpl = new LinkedHashMap<>();
    for (Cell c : cells) {
      if (!cases.contains(c.c())) {
        cases.add(c.c());
      }
      byImpl.computeIfAbsent(c.impl().label(), k -> new LinkedHashMap<>()).put(c.c(), c);
    }
    md.append("## Decisions per second, one node\n\n");
    table(md, cases, byImpl, cell -> String.format(Locale.ROOT, "%,.0f", cell.perSecond()));
    md.append("\n### Allowed decisions (% of all decisions in the cell)\n\n");
    table(md, cases, byImpl, cell -> String.format(Locale.ROOT, "%.1f%%", 100 * cell.allowedShare()));
    md.append("\n### Allowed decisions per second\n\n");
    table(md, cases, byImpl, cell -> String.format(Locale.ROOT, "%,.0f", cell.allowedPerSecond()));

    Map<Case, Cell> delaying = null;
    Map<Case, Cell> ceiling = null;
    for (Map.Entry<String, Map<Case, Cell>> e : byImpl.entrySet()) {
      if (e.getKey().startsWith("Bucket4j") && e.getKey().contains("delaying")) {
        delaying = e.getValue();
      }
      if (e.getKey().startsWith("Sluice in-process")) {
        ceiling = e.getValue();
      }
    }
    if (delaying != null) {
      md.append("\n## Ratios: Sluice / Bucket4j+delaying (target >= 2.0x in every case)\n\n");
      md.append("Decisions per second; in brackets, allowed decisions per second.\n\n");
      ratioTable(md, cases, byImpl, delaying, false);
    }
    if (ceiling != null) {
      md.append("\n## Ratios: Sluice over Redis / the same node in-process (target >= 80%)\n\n");
      md.append("Decisions per second; in brackets, allowed decisions per second.\n\n");
      ratioTable(md, cases, byImpl, ceiling, true);
    }
    ExactBaseline.report(md, cases, byImpl);
    commands(md, cases, byImpl);
    counters(md, cells);
    batchOneNote(md, byImpl);
  }

  /** Redis commands per 1,000 decisions and per 1,000 allowed, and the mix of commands per row. */
  private static void commands(StringBuilder md, List<Case> cases, Map<String, Map<Case, Cell>> byImpl) {
    md.append("\n## Redis commands per 1,000 decisions\n\n");
    md.append("Targets: Sluice default batching <= 20; peers per DESIGN.md: Bucket4j+delaying ~40, plain CAS ~4,000, "
        + "Redisson ~10,000.\n\n");
    table(md, cases, byImpl, cell -> cell.impl().usesRedis() || cell.commands() > 0
        ? String.format(Locale.ROOT, "%,.1f", cell.commandsPer1000()) : "-");
    md.append("\n### Redis commands per 1,000 allowed decisions\n\n");
    table(md, cases, byImpl, cell -> cell.impl().usesRedis() || cell.commands() > 0
        ? String.format(Locale.ROOT, "%,.1f", cell.commandsPer1000Allowed()) : "-");
    md.append("\n### Command mix (calls summed over all cells of a row, per 1,000 decisions)\n\n");
    md.append("| implementation | commands |\n|---|---|\n");
    for (Map.Entry<String, Map<Case, Cell>> e : byImpl.entrySet()) {
      Map<String, Long> total = new TreeMap<>();
      long decisions = 0;
      for (Cell c : e.getValue().values()) {
        decisions += c.decisions();
        c.commandMix().forEach((k, v) -> total.merge(k, v, Long::sum));
      }
      StringBuilder s = new StringBuilder();
      long d = decisions;
      total.entrySet().stream().sorted((a, b) -> Long.compare(b.getValue(), a.getValue())).forEach(x -> {
        if (s.length() > 0) {
          s.append(", ");
        }
        s.append(String.format(Locale.ROOT, "`%s` %.2f", x.getKey(), x.getValue() * 1000.0 / Math.max(1, d)));
      });
      md.append("| ").append(e.getKey()).append(" | ").append(s.length() == 0 ? "none" : s).append(" |\n");
    }
  }

  private static void counters(StringBuilder md, List<Cell> cells) {
    md.append("\n### Implementation counters at the end of each cell\n\n");
    md.append("| implementation | case | counters |\n|---|---|---|\n");
    for (Cell c : cells) {
      if (!c.stats().isEmpty()) {
        md.append("| ").append(c.impl().label()).append(" | ").append(c.c().label()).append(" | ")
            .append(c.stats()).append(" |\n");
      }
    }
  }

  private static void overAdmission(StringBuilder md, List<OverAdmission> oas) {
    md.append("\n## Over-admission: ").append(OA_NODES).append(" nodes, one key, demand ")
        .append(String.format(Locale.ROOT, "%.0fx", OA_DEMAND)).append(" the limit\n\n");
    md.append(String.format(Locale.ROOT, "Limit %,d per %d s window (fixed windows aligned to the epoch; Bucket4j: "
            + "a bucket of %,d tokens refilled whole at every window start, `refillIntervallyAligned`, so that an exact "
            + "bucket admits exactly the limit per window). %d limiter instances, each with its own Redis "
            + "connection, one paced thread each: %,d requests/s per node, evenly staggered, for %d windows starting "
            + "at a window edge (window 1 is the first budget). Rows *burst at window 1's edge* add the synchronized "
            + "burst: %d more threads per node, released together at window 1's first instant, deciding flat out "
            + "for %d ms. Admitted per window as %% of the limit; target for Sluice default batching: <= 100.5%% "
            + "in every window, at <= 20 store calls per 1,000 decisions (paced rows; Sluice's own count of its "
            + "store calls, flushes and node-registry heartbeats, during the measured windows).%n%n",
        OA_LIMIT, OA_WINDOW.toSeconds(), OA_LIMIT, OA_NODES,
        Math.round(OA_DEMAND * OA_LIMIT * 1e9 / OA_WINDOW.toNanos() / OA_NODES), OA_WINDOWS, OA_BURST_THREADS,
        OA_BURST.toMillis()));
    md.append("| implementation |");
    for (int w = 1; w <= OA_WINDOWS; w++) {
      md.append(" window ").append(w).append(" |");
    }
    md.append(" worst over-admission | store calls / 1,000 decisions | Redis commands / 1,000 decisions | requests per window | store's count (windows kept) |\n|---|");
    for (int w = 0; w < OA_WINDOWS + 5; w++) {
      md.append("---|");
    }
    md.append("\n");
    for (OverAdmission r : oas) {
      overAdmissionRow(md, r);
    }
    md.append("\nCommand mix and node counters:\n\n");
    for (OverAdmission r : oas) {
      md.append("- ").append(r.label()).append(": ").append(r.commandMix());
      if (!r.stats().isEmpty()) {
        md.append("; ").append(r.stats());
      }
      md.append("\n");
    }
  }

  /** One run's row: admitted per window, the worst, store calls and commands, requests, the store's counts. */
  private static void overAdmissionRow(StringBuilder md, OverAdmission r) {
    md.append("| ").append(r.label()).append(" |");
    double worst = Double.NEGATIVE_INFINITY;
    for (int w = 0; w < OA_WINDOWS; w++) {
      double pct = 100.0 * r.admitted()[w] / OA_LIMIT;
      worst = Math.max(worst, pct - 100);
      md.append(String.format(Locale.ROOT, " %,d (%.2f%%) |", r.admitted()[w], pct));
    }
    md.append(String.format(Locale.ROOT, " %+.2f%% of the limit | %s | %.1f |", worst,
        Double.isNaN(r.storeCallsPer1000()) ? "-" : String.format(Locale.ROOT, "%.1f", r.storeCallsPer1000()),
        r.commandsPer1000()));
    StringBuilder att = new StringBuilder();
    for (long a : r.attempts()) {
      att.append(att.length() == 0 ? "" : " / ").append(String.format(Locale.ROOT, "%,d", a));
    }
    md.append(' ').append(att).append(r.late() > 0 ? " (+" + r.late() + " late)" : "").append(" |");
    StringBuilder store = new StringBuilder();
    r.storeCounts().forEach((w, v) -> store.append(store.length() == 0 ? "" : ", ")
        .append("w").append(w + 1).append(w >= 0 && w < OA_WINDOWS ? "" : " (after the run)").append(String.format(Locale.ROOT, " %,d", v)));
    md.append(' ').append(store.length() == 0 ? "-" : store).append(" |\n");
  }

  private static void manyKeysReport(StringBuilder md, List<ManyKeys> many) {
    md.append("\n## Many keys: sparse keys and small limits, 4 nodes\n\n");
    md.append("Fixed windows of ").append(OA_WINDOW.toSeconds()).append(" s, ").append(MANY_KEYS_WINDOWS)
        .append(" windows from a window edge; ").append(OA_NODES).append(" nodes (one thread each, its own Redis"
            + " connection), each request sent to a random node at its time; every implementation gets the very same"
            + " requests (seeded). The exact algorithm decides them in schedule order, each in the window the node decided"
            + " it in: a request is admitted while its key's count in the window stays within the limit. *False denials*: requests the exact algorithm admitted"
            + " and the implementation denied, in % of all requests; *below half*: of those, the ones on a key-window"
            + " whose whole demand stays within half the limit. *Over*: permits admitted beyond the limit, per key and"
            + " window. *Late*: requests a node's thread decided more than 20 ms after their time (a loaded machine)."
            + " Sluice's token-bucket rows are another limit on the same traffic: a bucket of the limit refilled at"
            + " the limit per window (greedy), scored against the exact bucket deciding the same requests at the"
            + " moments the nodes decided them; *over* is then the deepest a key's admissions took the exact bucket"
            + " into debt (tokens spent it never had), in permits, and the key-windows in which that debt grew.\n\n");
    String profile = null;
    for (ManyKeys r : many) {
      if (!r.profile().name().equals(profile)) {
        md.append(profile == null ? "" : "\n").append("### ").append(r.profile().name()).append(": ")
            .append(r.profile().description()).append("\n\n");
        profile = r.profile().name();
        md.append("| implementation | requests | admitted vs exact | false denials | below half | worst over (permits)"
            + " | key-windows over / with requests | Redis commands / 1,000 decisions | store calls / 1,000 | late |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
      }
      ManyKeysTraffic.Score s = r.score();
      md.append(String.format(Locale.ROOT, "| %s | %,d | %.2f%% | %.3f%% | %,d | %,d | %,d / %,d | %,.0f | %s | %,d |\n",
          r.impl().label(), s.requests(), s.admittedVsExactPercent(), s.falseDenialPercent(), s.falseDenialsBelowHalf(),
          s.worstOverPermits(), s.keyWindowsOver(), s.keyWindows(), r.commandsPer1000(),
          Double.isNaN(r.storeCallsPer1000()) ? "-" : String.format(Locale.ROOT, "%,.0f", r.storeCallsPer1000()), r.late()));
    }
    md.append("\nCommand mix:\n\n");
    for (ManyKeys r : many) {
      md.append("- ").append(r.profile().name()).append(", ").append(r.impl().label()).append(": ")
          .append(r.commandMix()).append("\n");
    }
  }

  /** Says whether batch 1 ran as exact mode (one script call per decision) or through batching. */
  private static void batchOneNote(StringBuilder md, Map<String, Map<Case, Cell>> byImpl) {
    for (Map.Entry<String, Map<Case, Cell>> e : byImpl.entrySet()) {
      if (!e.getKey().contains("batch 1)")) {
        continue;
      }
      long evals = 0;
      long decisions = 0;
      for (Cell c : e.getValue().values()) {
        evals += c.commandMix().getOrDefault("evalsha", 0L) + c.commandMix().getOrDefault("eval", 0L);
        decisions += c.decisions();
      }
      double perDecision = decisions == 0 ? 0 : (double) evals / decisions;
      md.append(String.format(Locale.ROOT, "%nSluice batch 1 made %.3f script calls (EVALSHA/EVAL) per decision: %s.%n",
          perDecision, perDecision > 0.9 ? "exact mode, one store script per decision"
              : "NOT one per decision: batch 1 still went through batching"));
    }
  }

  private interface CellFormat {
    String format(Cell c);
  }

  /** A table's header row and alignment row: the first column, then one per case. */
  static void header(StringBuilder md, String first, List<Case> cases) {
    md.append("| ").append(first).append(" |");
    for (Case c : cases) {
      md.append(' ').append(c.label()).append(" |");
    }
    md.append("\n|---|");
    for (int i = 0; i < cases.size(); i++) {
      md.append("---:|");
    }
    md.append("\n");
  }

  private static void table(StringBuilder md, List<Case> cases, Map<String, Map<Case, Cell>> byImpl, CellFormat f) {
    header(md, "implementation", cases);
    for (Map.Entry<String, Map<Case, Cell>> e : byImpl.entrySet()) {
      md.append("| ").append(e.getKey()).append(" |");
      for (Case c : cases) {
        Cell cell = e.getValue().get(c);
        md.append(' ').append(cell == null ? "n/a" : f.format(cell)).append(" |");
      }
      md.append("\n");
    }
  }

  private static void ratioTable(StringBuilder md, List<Case> cases, Map<String, Map<Case, Cell>> byImpl,
      Map<Case, Cell> base, boolean percent) {
    header(md, "Sluice setting", cases);
    for (Map.Entry<String, Map<Case, Cell>> e : byImpl.entrySet()) {
      if (!e.getKey().startsWith("Sluice (")) {
        continue;
      }
      md.append("| ").append(e.getKey()).append(" |");
      for (Case c : cases) {
        Cell cell = e.getValue().get(c);
        Cell b = base.get(c);
        if (cell == null || b == null || b.perSecond() == 0) {
          md.append(" n/a |");
          continue;
        }
        double r = cell.perSecond() / b.perSecond();
        double ra = b.allowedPerSecond() == 0 ? Double.NaN : cell.allowedPerSecond() / b.allowedPerSecond();
        md.append(percent ? String.format(Locale.ROOT, " %.1f%% (%.1f%%) |", 100 * r, 100 * ra)
            : String.format(Locale.ROOT, " %.2fx (%.2fx) |", r, ra));
      }
      md.append("\n");
    }
  }

  private void writeCsv(List<Cell> cells, List<OverAdmission> oas) throws IOException {
    StringBuilder csv = new StringBuilder();
    csv.append("kind,implementation,setting,threads,keys,seconds,decisions,allowed,denied,decisions_per_s,"
        + "allowed_per_s,allowed_pct,redis_commands,commands_per_1000,command_mix,counters\n");
    for (Cell c : cells) {
      csv.append(String.format(Locale.ROOT, "throughput,%s,%s,%d,%s,%.3f,%d,%d,%d,%.0f,%.0f,%.2f,%d,%.2f,%s,%s%n",
          csv(c.impl().family()), csv(c.impl().setting()), c.c().threads(),
          c.c().keys() == KeyMode.SHARED ? "shared" : "per-thread", c.seconds(), c.decisions(), c.allowed(),
          c.denied(), c.perSecond(), c.allowedPerSecond(), 100 * c.allowedShare(), c.commands(),
          c.commandsPer1000(), csv(mixText(c.commandMix())), csv(c.stats())));
    }
    for (OverAdmission r : oas) {
      for (int w = 0; w < r.admitted().length; w++) {
        csv.append(String.format(Locale.ROOT, "%s,%s,%s,%d,window %d of limit %d,%.3f,%d,%d,%d,,,%.2f,%d,%.2f,%s,%s%n",
            r.burst() ? "over-admission-burst" : "over-admission",
            csv(r.impl().family()), csv(r.impl().setting()), OA_NODES, w + 1, OA_LIMIT,
            OA_WINDOW.toNanos() / 1e9, r.attempts()[w], r.admitted()[w], r.attempts()[w] - r.admitted()[w],
            100.0 * r.admitted()[w] / OA_LIMIT, r.commands(), r.commandsPer1000(), csv(mixText(r.commandMix())),
            csv(r.stats())));
      }
    }
    Path out = Path.of(o.csv);
    if (out.getParent() != null) {
      Files.createDirectories(out.getParent());
    }
    Files.writeString(out, csv.toString(), StandardCharsets.UTF_8);
    log("wrote " + out);
  }

  private static String mixText(Map<String, Long> mix) {
    StringBuilder s = new StringBuilder();
    mix.forEach((k, v) -> s.append(s.length() == 0 ? "" : ";").append(k).append('=').append(v));
    return s.toString();
  }

  private static String csv(String s) {
    if (s.contains(",") || s.contains("\"") || s.contains("\n")) {
      return '"' + s.replace("\"", "\"\"") + '"';
    }
    return s;
  }
}
