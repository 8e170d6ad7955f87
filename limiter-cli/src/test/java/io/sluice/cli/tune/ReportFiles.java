package io.sluice.cli.tune;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;

/** Reads back what tune wrote and checks that the files agree with each other. */
final class ReportFiles {
  final List<Map<String, String>> csv;
  final JsonNode json;
  final Document svg;
  final String html;

  private ReportFiles(List<Map<String, String>> csv, JsonNode json, Document svg, String html) {
    this.csv = csv;
    this.json = json;
    this.svg = svg;
    this.html = html;
  }

  static ReportFiles read(Path dir) throws Exception {
    return new ReportFiles(csv(dir.resolve(Reports.CSV)), new ObjectMapper().readTree(dir.resolve(Reports.JSON).toFile()),
        xml(dir.resolve(Reports.SVG)), Files.readString(dir.resolve(Reports.HTML), StandardCharsets.UTF_8));
  }

  /** A CSV without quoted commas in the numeric columns: header, then one map per line. */
  static List<Map<String, String>> csv(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    String[] header = lines.get(0).split(",", -1);
    List<Map<String, String>> rows = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      List<String> cells = splitCsv(line);
      assertThat(cells).as("cells of: " + line).hasSize(header.length);
      Map<String, String> row = new HashMap<>();
      for (int i = 0; i < header.length; i++) {
        row.put(header[i], cells.get(i));
      }
      rows.add(row);
    }
    return rows;
  }

  private static List<String> splitCsv(String line) {
    List<String> out = new ArrayList<>();
    StringBuilder cell = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (quoted) {
        if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
          cell.append('"');
          i++;
        } else if (c == '"') {
          quoted = false;
        } else {
          cell.append(c);
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        out.add(cell.toString());
        cell.setLength(0);
      } else {
        cell.append(c);
      }
    }
    out.add(cell.toString());
    return out;
  }

  static Document xml(Path file) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(true);
    return f.newDocumentBuilder().parse(file.toFile());
  }

  /**
   * The files agree: the same rows in CSV and JSON, the recommendation is the largest setting that
   * passes every gate as written (worst errors within max error, false denials within max false
   * denials, none below half the limit), the SVG is an svg document with one point pair per
   * selectable row, and the HTML embeds the chart and the table.
   */
  void checkConsistent() {
    JsonNode rows = json.get("rows");
    assertThat(rows.size()).isEqualTo(csv.size());
    double maxError = json.get("parameters").get("max_error_pct").asDouble();
    double maxFalseDenials = json.get("parameters").get("max_false_denials_pct").asDouble();
    Map<String, String> expected = null;
    int selectable = 0;
    for (int i = 0; i < csv.size(); i++) {
      Map<String, String> c = csv.get(i);
      JsonNode j = rows.get(i);
      assertThat(Long.parseLong(c.get("batch_size"))).isEqualTo(j.get("batch_size").asLong());
      assertThat(Double.parseDouble(c.get("over_worst_pct"))).isEqualTo(j.get("over_worst_pct").asDouble());
      assertThat(Long.parseLong(c.get("decisions"))).isEqualTo(j.get("decisions").asLong()).isPositive();
      assertThat(Double.parseDouble(c.get("false_denials_pct"))).isEqualTo(j.get("false_denials_pct").asDouble());
      assertThat(Long.parseLong(c.get("false_denials"))).isEqualTo(j.get("false_denials").asLong())
          .isLessThanOrEqualTo(Long.parseLong(c.get("decisions")));
      assertThat(Long.parseLong(c.get("swapped"))).isEqualTo(j.get("swapped").asLong());
      assertThat(Long.parseLong(c.get("false_denials_below_half_limit")))
          .isEqualTo(j.get("false_denials_below_half_limit").asLong())
          .isLessThanOrEqualTo(Long.parseLong(c.get("false_denials")));
      boolean reference = j.get("reference").asBoolean();
      if (reference) {
        assertThat(c.get("store_calls_per_1000")).isEmpty();
        continue;
      }
      selectable++;
      assertThat(Double.parseDouble(c.get("store_calls_per_1000"))).isPositive();
      // (the gate reads over-admission as the setting's own count over the limit where that is measured,
      // else against the exact run: Recommender.gatedOver)
      String overLimit = c.get("over_limit_worst_pct");
      double over = overLimit == null || overLimit.isEmpty() ? Double.parseDouble(c.get("over_worst_pct"))
          : Double.parseDouble(overLimit);
      double worst = Math.max(over, Double.parseDouble(c.get("under_worst_pct")));
      boolean passes = worst <= maxError && Double.parseDouble(c.get("false_denials_pct")) <= maxFalseDenials
          && Long.parseLong(c.get("false_denials_below_half_limit")) == 0;
      assertThat(j.get("passes").asBoolean()).isEqualTo(passes);
      if (passes && (expected == null || larger(c, expected))) {
        expected = c;
      }
    }
    JsonNode rec = json.get("recommendation");
    if (expected == null) {
      assertThat(rec.get("batch_size").isNull()).isTrue();
      for (Map<String, String> c : csv) {
        assertThat(c.get("recommended")).isEqualTo("false");
      }
    } else {
      assertThat(rec.get("batch_size").asLong()).isEqualTo(Long.parseLong(expected.get("batch_size")));
      assertThat(rec.get("sync_interval_ms").asLong()).isEqualTo(Long.parseLong(expected.get("sync_interval_ms")));
      assertThat(expected.get("recommended")).isEqualTo("true");
      assertThat(csv.stream().filter(c -> c.get("recommended").equals("true")).count()).isEqualTo(1);
    }
    assertThat(json.get("rule").asText()).contains("largest setting");
    assertThat(svg.getDocumentElement().getLocalName()).isEqualTo("svg");
    assertThat(svg.getDocumentElement().getNamespaceURI()).isEqualTo("http://www.w3.org/2000/svg");
    // per selectable row: one circle (over-admission) and one square; plus the legend's
    int circles = svg.getElementsByTagNameNS("*", "circle").getLength();
    assertThat(circles).isBetween(selectable + 1, selectable + 2);
    assertThat(html).contains("<svg").contains("</svg>").contains("<table>").contains(json.get("rule").asText()
        .substring(0, 40));
    assertThat(html.indexOf("<svg")).isLessThan(html.indexOf("</svg>"));
  }

  private static boolean larger(Map<String, String> a, Map<String, String> b) {
    int c = Long.compare(Long.parseLong(a.get("batch_size")), Long.parseLong(b.get("batch_size")));
    return c != 0 ? c > 0 : Long.parseLong(a.get("sync_interval_ms")) > Long.parseLong(b.get("sync_interval_ms"));
  }
}
