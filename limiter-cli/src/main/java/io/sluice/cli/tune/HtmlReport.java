package io.sluice.cli.tune;

import io.sluice.node.Durations;

import java.util.List;
import java.util.Locale;

/** report.html: one self-contained page with the chart (inline SVG), the table and how to read them. */
final class HtmlReport {
  private HtmlReport() {
  }

  static String html(TuneResult t, String svg) {
    TuneConfig c = t.config();
    Row rec = t.recommendation().row();
    StringBuilder h = new StringBuilder();
    head(h);
    h.append("<h1>sluice tune</h1>\n");
    if (t.interrupted()) {
      h.append("<p><strong>Interrupted:</strong> ").append(t.rows().size() - 1).append(" of ").append(t.settingsPlanned())
          .append(" settings were measured.</p>\n");
    }
    h.append("<p>Command: <code>").append(esc(t.command())).append("</code><br>\n");
    h.append("Started ").append(esc(t.started())).append(", store: ").append(esc(t.store())).append("</p>\n");
    h.append("<p>").append(esc(String.format(Locale.ROOT,
        "Traffic: profile %s (%s), %,d requests over %d windows of %s, %s; limit %,d per %s"
            + " per key (%s window); seed %d.", c.profile().label, c.profile().description, t.traceRequests(), c.windows(),
        Durations.format(c.window()), c.routing(), c.limit(), Durations.format(c.window()), c.algorithm(), c.seed())))
        .append("</p>\n");
    recommendation(h, t, c, rec);
    chart(h, svg);
    table(h, t, rec);
    h.append("<h2>What the columns mean</h2>\n<ul>\n");
    items(h, Explain.columns());
    h.append("</ul>\n");
    if (!t.notes().isEmpty()) {
      h.append("<h2>Notes</h2>\n<ul>\n");
      items(h, t.notes());
      h.append("</ul>\n");
    }
    h.append("<p class=\"note\">Files: results.csv, results.json, chart.svg beside this page.</p>\n");
    h.append("</body>\n</html>\n");
    return h.toString();
  }

  private static void head(StringBuilder h) {
    h.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        .append("<title>sluice tune report</title>\n<style>\n")
        .append("body{font-family:sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}\n")
        .append("table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:4px 8px}\n")
        .append("td.n{text-align:right;font-variant-numeric:tabular-nums}tr.rec{background:#e8f5e9;font-weight:bold}\n")
        .append("code{background:#f4f4f4;padding:1px 4px}.note{color:#555}\n</style>\n</head>\n<body>\n");
  }

  private static void recommendation(StringBuilder h, TuneResult t, TuneConfig c, Row rec) {
    h.append("<h2>Recommendation</h2>\n<p><strong>").append(esc(t.recommendation().verdict())).append("</strong></p>\n");
    h.append("<h3>").append(rec == null ? "Instead" : "How to apply it").append("</h3>\n<ul>\n");
    for (String line : Apply.lines(t.recommendation(), c)) {
      h.append("<li>").append(code(line)).append("</li>\n");
    }
    h.append("</ul>\n");
    h.append("<p class=\"note\">Rule: ").append(esc(t.recommendation().rule())).append(".</p>\n");
    if (!t.recommendation().rejected().isEmpty()) {
      h.append("<h3>Settings that did not pass</h3>\n<ul>\n");
      items(h, t.recommendation().rejected());
      h.append("</ul>\n");
    }
  }

  private static void chart(StringBuilder h, String svg) {
    h.append("<h2>Error against store calls</h2>\n");
    h.append(svg.replaceFirst("<svg ", "<svg role=\"img\" aria-label=\"error vs store calls per 1,000 decisions\" "));
    h.append("<p class=\"note\">Each setting is two points at the same x: its worst over-admission (red circle) and its"
        + " worst under-admission (blue square), in % of the limit (under-admission over the key-windows where the"
        + " limit was reached). Right is more store calls, up is more error. Good settings sit low and to the left; the"
        + " dashed line is <code>--max-error</code>. The chart does not show false denials: a setting below the line"
        + " may still fail the false-denial gates (see the table).</p>\n");
  }

  private static void table(StringBuilder h, TuneResult t, Row rec) {
    h.append("<h2>Table</h2>\n<table>\n<tr>");
    for (String head : Reports.HEADERS) {
      h.append("<th>").append(esc(head)).append("</th>");
    }
    h.append("</tr>\n");
    List<String[]> cells = Reports.cells(t.rows(), rec);
    for (int i = 0; i < cells.size(); i++) {
      h.append(t.rows().get(i) == rec ? "<tr class=\"rec\">" : "<tr>");
      String[] line = cells.get(i);
      for (int col = 0; col < line.length; col++) {
        h.append(col == 0 ? "<td>" : "<td class=\"n\">").append(esc(line[col].trim())).append("</td>");
      }
      h.append("</tr>\n");
    }
    h.append("</table>\n");
  }

  /** Each line escaped, as a list item. */
  private static void items(StringBuilder h, List<String> lines) {
    for (String line : lines) {
      h.append("<li>").append(esc(line)).append("</li>\n");
    }
  }

  /** Escaped text with the builder calls and sidecar commands in it set as code. */
  static String code(String line) {
    StringBuilder out = new StringBuilder();
    java.util.regex.Matcher m = java.util.regex.Pattern
        .compile("(SyncedLimiter\\.builder\\(.*?\\.build\\(\\)|Limit\\.\\w+\\(.*?\\.build\\(\\)|sluice serve [^;]*?(?=[.;]?$|;)|--batch-sizes 1)")
        .matcher(line);
    int last = 0;
    while (m.find()) {
      out.append(esc(line.substring(last, m.start()))).append("<code>").append(esc(m.group())).append("</code>");
      last = m.end();
    }
    return out.append(esc(line.substring(last))).toString();
  }

  private static String esc(String s) {
    return Chart.esc(s);
  }
}
