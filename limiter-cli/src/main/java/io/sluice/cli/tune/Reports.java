package io.sluice.cli.tune;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import io.sluice.node.Durations;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The table printed and the files written: results.csv, results.json, chart.svg, report.html. */
final class Reports {
  static final String CSV = "results.csv";
  static final String JSON = "results.json";
  static final String SVG = "chart.svg";
  static final String HTML = "report.html";

  private Reports() {
  }

  /** A number for people: two decimals below 10, one below 1,000, none above; "n/a" for NaN. */
  static String number(double v) {
    if (Double.isNaN(v)) {
      return "n/a";
    }
    double a = Math.abs(v);
    if (a < 10) {
      return String.format(Locale.ROOT, "%.2f", v);
    }
    if (a < 1_000) {
      return String.format(Locale.ROOT, "%.1f", v);
    }
    return String.format(Locale.ROOT, "%,.0f", v);
  }

  /** A small percentage for people: three decimals below 10 (0.1% is a gate), as {@link #number} above. */
  static String fine(double v) {
    if (Double.isNaN(v)) {
      return "n/a";
    }
    return Math.abs(v) < 10 ? String.format(Locale.ROOT, "%.3f", v) : number(v);
  }

  /** A percentage near 100 for people: two decimals ("99.85", not "99.8"). */
  static String ratio(double v) {
    return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.2f", v);
  }

  /** A number for machines: plain, dot decimal, empty for NaN (CSV) . */
  static String plain(double v) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return "";
    }
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      return Long.toString((long) v);
    }
    return String.format(Locale.ROOT, "%.6g", v).replaceAll("(\\.\\d*?)0+(e|$)", "$1$2").replaceAll("\\.(e|$)", "$1");
  }

  static final String[] HEADERS = {"setting", "over limit %", "over worst %", "over mean %", "under worst %", "under mean %",
      "false denials %", "false denials < L/2", "swapped %", "admitted vs exact %", "store calls /1k", "p50 us",
      "p99 us", "decisions/s"};

  static List<String[]> cells(List<Row> rows, Row recommended) {
    List<String[]> out = new ArrayList<>();
    for (Row r : rows) {
      String label = (r == recommended ? "* " : "  ") + (r.reference() ? "exact model (reference)" : r.setting().label());
      out.add(new String[] {label, number(r.overLimitWorstPct()), number(r.overWorstPct()), number(r.overMeanPct()), number(r.underWorstPct()),
          number(r.underMeanPct()), fine(r.falseDenialsPct()), String.format(Locale.ROOT, "%,d", r.falseDenialsBelowHalf()),
          fine(r.swappedPct()), ratio(r.admittedPctOfExact()), number(r.storeCallsPer1000()), number(r.p50Micros()), number(r.p99Micros()),
          number(r.decisionsPerSecond())});
    }
    return out;
  }

  static String table(List<Row> rows, Row recommended) {
    List<String[]> cells = cells(rows, recommended);
    int[] width = new int[HEADERS.length];
    for (int c = 0; c < HEADERS.length; c++) {
      width[c] = HEADERS[c].length() + (c == 0 ? 2 : 0);
      for (String[] line : cells) {
        width[c] = Math.max(width[c], line[c].length());
      }
    }
    StringBuilder sb = new StringBuilder();
    appendLine(sb, width, c -> c == 0 ? "  " + HEADERS[0] : HEADERS[c]);
    appendLine(sb, width, c -> "-".repeat(width[c]));
    for (String[] line : cells) {
      appendLine(sb, width, c -> line[c]);
    }
    return sb.toString();
  }

  private static void appendLine(StringBuilder sb, int[] width, java.util.function.IntFunction<String> cell) {
    for (int c = 0; c < width.length; c++) {
      String v = cell.apply(c);
      if (c == 0) {
        sb.append(v).append(" ".repeat(width[c] - v.length()));
      } else {
        sb.append("  ").append(" ".repeat(width[c] - v.length())).append(v);
      }
    }
    sb.append('\n');
  }

  // ------------------------------------------------------------------ CSV

  static String csv(List<Row> rows, Row recommended) {
    StringBuilder sb = new StringBuilder();
    sb.append("batch_size,sync_interval_ms,mode,recommended,decisions,admitted,admitted_pct_of_exact,"
        + "over_worst_pct,over_mean_pct,under_worst_pct,under_mean_pct,contested_windows,"
        + "store_calls_per_1000,latency_p50_us,latency_p99_us,decisions_per_s,replay_lag_p99_ms,store_failures,"
        + "exact_admitted,false_denials,false_denials_pct,false_denials_below_half_limit,key_windows_below_half_limit,"
        + "swapped,swapped_pct,over_limit_worst_pct\n");
    for (Row r : rows) {
      sb.append(r.setting().batchSize()).append(',')
          .append(r.setting().syncInterval().toMillis()).append(',')
          .append(csvText(r.mode())).append(',')
          .append(r == recommended).append(',')
          .append(r.decisions()).append(',')
          .append(r.admitted()).append(',')
          .append(plain(r.admittedPctOfExact())).append(',')
          .append(plain(r.overWorstPct())).append(',')
          .append(plain(r.overMeanPct())).append(',')
          .append(plain(r.underWorstPct())).append(',')
          .append(plain(r.underMeanPct())).append(',')
          .append(r.contestedWindows()).append(',')
          .append(plain(r.storeCallsPer1000())).append(',')
          .append(plain(r.p50Micros())).append(',')
          .append(plain(r.p99Micros())).append(',')
          .append(plain(r.decisionsPerSecond())).append(',')
          .append(plain(r.lagP99Millis())).append(',')
          .append(r.storeFailures()).append(',')
          .append(r.exactAdmitted()).append(',')
          .append(r.falseDenials()).append(',')
          .append(plain(r.falseDenialsPct())).append(',')
          .append(r.falseDenialsBelowHalf()).append(',')
          .append(r.keyWindowsBelowHalf()).append(',')
          .append(r.swapped()).append(',')
          .append(plain(r.swappedPct())).append(',')
          .append(plain(r.overLimitWorstPct())).append('\n');
    }
    return sb.toString();
  }

  private static String csvText(String s) {
    return s.contains(",") || s.contains("\"") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
  }

  // ------------------------------------------------------------------ JSON

  static String json(TuneResult t) {
    Json j = new Json();
    j.open('{');
    j.field("tool").string("sluice tune");
    j.field("command").string(t.command());
    j.field("started").string(t.started());
    j.field("interrupted").bool(t.interrupted());
    j.field("settings_planned").number(t.settingsPlanned());
    j.field("store").string(t.store());
    TuneConfig c = t.config();
    parameters(j, t, c);
    j.field("rule").string(t.recommendation().rule());
    Row rec = recommendation(j, t, c);
    j.field("rows").open('[');
    for (Row r : t.rows()) {
      row(j, r, rec, c);
    }
    j.close(']');
    j.field("notes").open('[');
    for (String n : t.notes()) {
      j.string(n);
    }
    j.close(']');
    j.close('}');
    return j.toString() + "\n";
  }

  /** The run's parameters, as given or defaulted. */
  private static void parameters(Json j, TuneResult t, TuneConfig c) {
    j.field("parameters").open('{');
    j.field("profile").string(c.profile().label);
    j.field("nodes").number(c.nodes());
    j.field("limit").number(c.limit());
    j.field("window_ms").number(c.window().toMillis());
    j.field("duration_ms").number(c.duration().toMillis());
    j.field("windows").number(c.windows());
    j.field("algorithm").string(c.algorithm());
    j.field("demand").number(c.demand());
    j.field("keys").number(c.keys());
    j.field("seed").number(c.seed());
    j.field("max_error_pct").number(c.maxErrorPct());
    j.field("max_false_denials_pct").number(c.maxFalseDenialsPct());
    j.field("flat_out_ms").number(c.throughput().toMillis());
    j.field("requests_in_trace").number(t.traceRequests());
    j.field("key_affinity").bool(c.keyAffinity());
    if (c.simulated()) {
      j.field("simulated_round_trip_ms").number(c.simulatedRoundTrip().toNanos() / 1e6);
    }
    j.close('}');
  }

  /** The recommendation and how to apply it; the recommended row (null: none passes). */
  private static Row recommendation(Json j, TuneResult t, TuneConfig c) {
    j.field("recommendation").open('{');
    Row rec = t.recommendation().row();
    if (rec == null) {
      j.field("batch_size").nul();
      j.field("reservation").nul();
      j.field("sync_interval_ms").nul();
    } else {
      j.field("batch_size").number(rec.setting().batchSize());
      j.field("sync_interval_ms").number(rec.setting().syncInterval().toMillis());
      j.field("reservation").bool(rec.setting().reservation());
    }
    j.field("verdict").string(t.recommendation().verdict());
    j.field("rejected").open('[');
    for (String line : t.recommendation().rejected()) {
      j.string(line);
    }
    j.close(']');
    j.field("apply").open('{');
    j.field("limit").string(Apply.limit(c));
    if (rec == null) {
      j.field("builder").nul();
      j.field("serve").nul();
    } else {
      j.field("builder").string(Apply.builder(rec.setting(), c));
      j.field("serve").string(Apply.serve(rec.setting(), c));
    }
    j.field("text").open('[');
    for (String line : Apply.lines(t.recommendation(), c)) {
      j.string(line);
    }
    j.close(']');
    j.close('}');
    j.close('}');
    return rec;
  }

  /** One setting's row: its figures and its per-window errors. */
  private static void row(Json j, Row r, Row rec, TuneConfig c) {
    j.open('{');
    j.field("batch_size").number(r.setting().batchSize());
    j.field("sync_interval_ms").number(r.setting().syncInterval().toMillis());
    j.field("mode").string(r.mode());
    j.field("reference").bool(r.reference());
    j.field("recommended").bool(r == rec);
    j.field("decisions").number(r.decisions());
    j.field("admitted").number(r.admitted());
    j.field("admitted_pct_of_exact").number(r.admittedPctOfExact());
    j.field("over_limit_worst_pct").number(r.overLimitWorstPct());
    j.field("over_worst_pct").number(r.overWorstPct());
    j.field("over_mean_pct").number(r.overMeanPct());
    j.field("under_worst_pct").number(r.underWorstPct());
    j.field("under_mean_pct").number(r.underMeanPct());
    j.field("contested_windows").number(r.contestedWindows());
    j.field("exact_admitted").number(r.exactAdmitted());
    j.field("false_denials").number(r.falseDenials());
    j.field("false_denials_pct").number(r.falseDenialsPct());
    j.field("false_denials_below_half_limit").number(r.falseDenialsBelowHalf());
    j.field("key_windows_below_half_limit").number(r.keyWindowsBelowHalf());
    j.field("swapped").number(r.swapped());
    j.field("swapped_pct").number(r.swappedPct());
    j.field("passes").bool(!r.reference()
        && Recommender.passes(r, c.maxErrorPct(), c.maxFalseDenialsPct()));
    j.field("store_calls_per_1000").number(r.storeCallsPer1000());
    j.field("latency_p50_us").number(r.p50Micros());
    j.field("latency_p99_us").number(r.p99Micros());
    j.field("decisions_per_s").number(r.decisionsPerSecond());
    j.field("replay_lag_p99_ms").number(r.lagP99Millis());
    j.field("store_failures").number(r.storeFailures());
    j.field("over_by_window_pct").open('[');
    for (double v : r.overByWindowPct()) {
      j.number(v);
    }
    j.close(']');
    j.field("under_by_window_pct").open('[');
    for (double v : r.underByWindowPct()) {
      j.number(v);
    }
    j.close(']');
    j.close('}');
  }

  /**
   * The JSON report's writer: Jackson's generator, indented two spaces, behind the few calls the report
   * makes (a field, then its value; an array's elements one after another: the generator places the
   * commas); numbers in {@link #plain} form, NaN as null.
   */
  private static final class Json {
    private final StringWriter out = new StringWriter();
    private final JsonGenerator gen;

    Json() {
      try {
        gen = new JsonFactory().createGenerator(out);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      gen.setPrettyPrinter(new DefaultPrettyPrinter()
          .withObjectIndenter(new DefaultIndenter("  ", "\n"))
          .withArrayIndenter(new DefaultIndenter("  ", "\n"))
          .withSeparators(Separators.createDefaultInstance().withObjectFieldValueSpacing(Separators.Spacing.AFTER)));
    }

    Json open(char c) {
      return write(() -> {
        if (c == '{') {
          gen.writeStartObject();
        } else {
          gen.writeStartArray();
        }
      });
    }

    Json close(char c) {
      return write(() -> {
        if (c == '}') {
          gen.writeEndObject();
        } else {
          gen.writeEndArray();
        }
      });
    }

    Json field(String name) {
      return write(() -> gen.writeFieldName(name));
    }

    Json string(String s) {
      return write(() -> {
        if (s == null) {
          gen.writeNull();
        } else {
          gen.writeString(s);
        }
      });
    }

    Json number(double v) {
      String p = plain(v);
      return write(() -> {
        if (p.isEmpty()) {
          gen.writeNull();
        } else {
          gen.writeNumber(p);
        }
      });
    }

    Json bool(boolean b) {
      return write(() -> gen.writeBoolean(b));
    }

    Json nul() {
      return write(gen::writeNull);
    }

    private Json write(Step step) {
      try {
        step.run();
      } catch (IOException e) {
        throw new UncheckedIOException(e); // (a StringWriter does not fail)
      }
      return this;
    }

    private interface Step {
      void run() throws IOException;
    }

    @Override
    public String toString() {
      try {
        gen.flush();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return out.toString();
    }
  }

  // ------------------------------------------------------------------ files

  /** Writes the four files into the result's output directory; answers their paths. */
  static List<Path> write(TuneResult t) throws IOException {
    Path dir = t.config().out();
    Files.createDirectories(dir);
    Row rec = t.recommendation().row();
    String svg = Chart.svg(t.rows(), rec, t.config().maxErrorPct(), chartTitle(t));
    List<Path> files = List.of(dir.resolve(CSV), dir.resolve(JSON), dir.resolve(SVG), dir.resolve(HTML));
    Files.writeString(files.get(0), csv(t.rows(), rec), StandardCharsets.UTF_8);
    Files.writeString(files.get(1), json(t), StandardCharsets.UTF_8);
    Files.writeString(files.get(2), svg, StandardCharsets.UTF_8);
    Files.writeString(files.get(3), HtmlReport.html(t, svg), StandardCharsets.UTF_8);
    return files;
  }

  static String chartTitle(TuneResult t) {
    TuneConfig c = t.config();
    return String.format(Locale.ROOT, "%s, %d nodes%s, limit %,d per %s (%s window), demand %sx%s", c.profile().label,
        c.nodes(), c.keyAffinity() ? " (each key on one)" : "", c.limit(), Durations.format(c.window()), c.algorithm(),
        plain(c.demand()),
        c.simulated() ? ", simulated (round trip " + Durations.format(c.simulatedRoundTrip()) + ")" : "");
  }
}
