package io.sluice.cli.tune;

import io.sluice.node.Durations;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The chart: error (% of the limit, worst window) against store calls per 1,000 decisions, one
 * labelled point per setting and error kind, x on a log scale (exact mode sits at about 1,000, large
 * batches near 1). Hand-written SVG 1.1: no library, no script, readable in any browser and on GitHub.
 */
final class Chart {
  static final int WIDTH = 760;
  static final int HEIGHT = 440;
  private static final int LEFT = 70;
  private static final int RIGHT = 30;
  private static final int TOP = 50;
  private static final int BOTTOM = 80;
  /** The error axis ends at this many times --max-error at most (see {@link #svg}). */
  static final double CAP = 5;

  private Chart() {
  }

  static String svg(List<Row> rows, Row recommended, double maxErrorPct, String title) {
    List<Row> points = new ArrayList<>();
    for (Row r : rows) {
      if (r.selectable() && r.storeCallsPer1000() > 0) {
        points.add(r);
      }
    }
    Axes a = Axes.of(points, maxErrorPct);
    StringBuilder s = new StringBuilder();
    s.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"").append(HEIGHT)
        .append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(HEIGHT)
        .append("\" font-family=\"sans-serif\" font-size=\"12\">\n");
    s.append("<title>").append(esc("sluice tune: error vs store calls, " + title)).append("</title>\n");
    s.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    s.append(text(LEFT, 22, "start", 15, "bold", "Error vs store calls across batch sizes"));
    s.append(text(LEFT, 40, "start", 12, "normal", title));
    grid(s, a);
    // the --max-error line
    double yMax = TOP + a.plotH - maxErrorPct / a.yTop * a.plotH;
    s.append(line(LEFT, yMax, LEFT + a.plotW, yMax, "#2e7d32", "6 4"));
    String maxLabel = "--max-error " + Reports.number(maxErrorPct) + "%";
    s.append(text(LEFT + a.plotW - 4, yMax - 5, "end", 11, "normal", maxLabel));
    // points: over-admission (red circles), under-admission (blue squares), labelled with the batch size;
    // labels are placed after all points, each where it covers no other label and no marker
    List<double[]> placed = new ArrayList<>();
    placed.add(new double[] {LEFT + a.plotW - 4 - maxLabel.length() * 6.2, yMax - 5, maxLabel.length() * 6.2, 12});
    double[][] at = markers(s, a, points, recommended, placed);
    s.append(labels(a, points, recommended, placed, at));
    legend(s);
    s.append("</svg>\n");
    return s.toString();
  }

  /** The plot's scales: x (store calls) on a log scale from 10^lo to 10^hi, y (error %) up to yTop. */
  private record Axes(double lo, double hi, boolean decades, double yTop, int plotW, int plotH) {
    static Axes of(List<Row> points, double maxErrorPct) {
      double minX = Double.MAX_VALUE;
      double maxX = 0;
      double maxY = maxErrorPct * 1.5;
      for (Row r : points) {
        minX = Math.min(minX, r.storeCallsPer1000());
        maxX = Math.max(maxX, r.storeCallsPer1000());
        // one stray window far above the rest would flatten every other point: the axis stops at five
        // times --max-error and such points are drawn on its top edge with their value
        maxY = Math.max(maxY, Math.min(r.worstErrorPct(), CAP * maxErrorPct));
      }
      if (points.isEmpty()) {
        minX = 1;
        maxX = 1_000;
      }
      // whole decades when the points span one or more; else a closer log range around them (points a
      // few percent apart would otherwise sit on top of each other)
      double lo = Math.floor(Math.log10(minX));
      double hi = Math.ceil(Math.log10(maxX));
      boolean decades = Math.log10(maxX) - Math.log10(minX) >= 0.7;
      if (!decades) {
        double span = Math.log10(maxX) - Math.log10(minX);
        double margin = Math.max(0.04, span * 0.3);
        lo = Math.log10(minX) - margin;
        hi = Math.log10(maxX) + margin;
      } else if (hi <= lo) {
        hi = lo + 1;
      }
      return new Axes(lo, hi, decades, niceCeiling(maxY * 1.1), WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    }

    double x(double storeCalls) {
      return LEFT + (Math.log10(storeCalls) - lo) / (hi - lo) * plotW;
    }
  }

  /** The grid, the axes and their labels. */
  private static void grid(StringBuilder s, Axes a) {
    double lo = a.lo;
    double hi = a.hi;
    int plotW = a.plotW;
    int plotH = a.plotH;
    if (a.decades) {
      for (int d = (int) lo; d <= (int) hi; d++) {
        double x = LEFT + (d - lo) / (hi - lo) * plotW;
        s.append(line(x, TOP, x, TOP + plotH, "#e0e0e0", null));
        s.append(text(x, TOP + plotH + 18, "middle", 12, "normal", decade(d)));
        if (d < (int) hi) {
          for (int m = 2; m < 10; m++) {
            double xm = LEFT + (d + Math.log10(m) - lo) / (hi - lo) * plotW;
            s.append(line(xm, TOP + plotH, xm, TOP + plotH + 4, "#999999", null));
          }
        }
      }
    } else {
      double from = Math.pow(10, lo);
      double to = Math.pow(10, hi);
      double step = niceStep((to - from) / 5);
      for (double v = Math.ceil(from / step) * step; v <= to; v += step) {
        double x = LEFT + (Math.log10(v) - lo) / (hi - lo) * plotW;
        s.append(line(x, TOP, x, TOP + plotH, "#e0e0e0", null));
        s.append(text(x, TOP + plotH + 18, "middle", 12, "normal",
            step >= 1 ? String.format(Locale.ROOT, "%,.0f", v) : Reports.plain(v)));
      }
    }
    int ticks = 5;
    for (int i = 0; i <= ticks; i++) {
      double v = a.yTop * i / ticks;
      double y = TOP + plotH - v / a.yTop * plotH;
      s.append(line(LEFT, y, LEFT + plotW, y, "#e0e0e0", null));
      s.append(text(LEFT - 8, y + 4, "end", 12, "normal", Reports.number(v) + "%"));
    }
    s.append(line(LEFT, TOP + plotH, LEFT + plotW, TOP + plotH, "#333333", null));
    s.append(line(LEFT, TOP, LEFT, TOP + plotH, "#333333", null));
    s.append(text(LEFT + plotW / 2.0, HEIGHT - 42, "middle", 12, "normal",
        "store calls per 1,000 decisions (log scale; fewer = less load on the store)"));
    s.append("<text x=\"16\" y=\"").append(TOP + plotH / 2).append("\" text-anchor=\"middle\" transform=\"rotate(-90 16 ")
        .append(TOP + plotH / 2).append(")\">").append(esc("error, % of the limit (worst window)")).append("</text>\n");
  }

  /** Each point's two markers; answers where they are ({x, y over, y under}) and notes the space they take. */
  private static double[][] markers(StringBuilder s, Axes a, List<Row> points, Row recommended, List<double[]> placed) {
    double[][] at = new double[points.size()][];
    for (int i = 0; i < points.size(); i++) {
      Row r = points.get(i);
      double x = a.x(r.storeCallsPer1000());
      double yo = TOP + a.plotH - Math.min(r.overWorstPct(), a.yTop) / a.yTop * a.plotH;
      double yu = TOP + a.plotH - Math.min(r.underWorstPct(), a.yTop) / a.yTop * a.plotH;
      at[i] = new double[] {x, yo, yu};
      double reach = r == recommended ? 11 : 6;
      placed.add(new double[] {x - reach, yo + reach, 2 * reach, 2 * reach});
      placed.add(new double[] {x - 6, yu + 6, 12, 12});
      s.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"#c62828\"/>\n", x, yo));
      s.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" fill=\"#1565c0\" fill-opacity=\"0.8\"/>\n",
          x - 4.5, yu - 4.5));
      if (r == recommended) {
        s.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"10\" fill=\"none\" stroke=\"#2e7d32\" stroke-width=\"2\"/>\n",
            x, yo));
      }
    }
    return at;
  }

  /** One label per setting, beside the higher of its two points, where it covers nothing placed before. */
  private static StringBuilder labels(Axes a, List<Row> points, Row recommended, List<double[]> placed, double[][] at) {
    StringBuilder labels = new StringBuilder();
    for (int i = 0; i < points.size(); i++) {
      Row r = points.get(i);
      String label = r.setting().exact() ? "exact" : (r.setting().reservation() ? "res b" : "b")
          + r.setting().batchSize()
          + (distinctIntervals(points) ? "/" + Durations.format(r.setting().syncInterval()) : "");
      String text = r == recommended ? label + " (recommended)" : label;
      if (r.overWorstPct() > a.yTop) {
        text += ": over " + Reports.number(r.overWorstPct()) + "%, off the chart";
      } else if (r.underWorstPct() > a.yTop) {
        text += ": under " + Reports.number(r.underWorstPct()) + "%, off the chart";
      }
      double x = at[i][0];
      double yl = Math.min(at[i][1], at[i][2]);
      double gap = r == recommended ? 13 : 8;
      labels.append(place(placed, x, yl, x + gap, yl + 4, gap, text, r == recommended ? "bold" : "normal"));
    }
    return labels;
  }

  private static void legend(StringBuilder s) {
    int ly = HEIGHT - 18;
    s.append(String.format(Locale.ROOT, "<circle cx=\"%d\" cy=\"%d\" r=\"5\" fill=\"#c62828\"/>\n", LEFT + 5, ly - 4));
    s.append(text(LEFT + 15, ly, "start", 12, "normal", "worst over-admission"));
    s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"9\" height=\"9\" fill=\"#1565c0\"/>\n", LEFT + 170, ly - 9));
    s.append(text(LEFT + 185, ly, "start", 12, "normal", "worst under-admission"));
    s.append(text(LEFT + 345, ly, "start", 12, "normal", "labels: b = batch size"));
  }

  /**
   * A label for the point (px, py) at (x, y) or, if that overlaps a label already placed, the nearest
   * free slot above or below, with a thin line back to its point when it had to move.
   */
  private static String place(List<double[]> placed, double px, double py, double x, double y, double gap,
      String body, String weight) {
    double w = body.length() * ("bold".equals(weight) ? 7.0 : 6.2);
    double h = 12;
    if (x + w > WIDTH - 4) {
      x = WIDTH - 4 - w;
    }
    double top = TOP + h;
    double bottom = HEIGHT - BOTTOM - 2;
    double at = Math.max(top, Math.min(bottom, y));
    double ax = x;
    double left = px - gap - w;
    // the spot on the right, then on the left of the point, then alternately above and below them
    search:
    for (int k = 0; k < 80; k++) {
      double offset = (k / 2 + 1) / 2 * (h + 1) * ((k / 2) % 2 == 1 ? -1 : 1);
      double cx = k % 2 == 0 ? x : left;
      double cy = y + offset;
      if (cy < top || cy > bottom || cx < LEFT + 2) {
        continue;
      }
      for (double[] p : placed) {
        if (cx < p[0] + p[2] && p[0] < cx + w && cy - h < p[1] && p[1] - p[3] < cy) {
          continue search;
        }
      }
      at = cy;
      ax = cx;
      break;
    }
    placed.add(new double[] {ax, at, w, h});
    boolean moved = Math.abs(at - y) > h;
    String leader = moved ? line(px + (ax < px ? -4 : 4), py, ax < px ? ax + w + 1 : ax - 1, at - 4, "#9e9e9e", null) : "";
    return leader + text(ax, at, "start", 11, weight, body);
  }

  private static boolean distinctIntervals(List<Row> rows) {
    return rows.stream().map(r -> r.setting().syncInterval()).distinct().count() > 1;
  }

  private static String decade(int d) {
    return d >= 0 ? String.format(Locale.ROOT, "%,d", (long) Math.pow(10, d)) : Reports.plain(Math.pow(10, d));
  }

  /** 1, 2 or 5 times a power of ten, at least v. */
  private static double niceStep(double v) {
    double p = Math.pow(10, Math.floor(Math.log10(v)));
    for (double m : new double[] {1, 2, 5, 10}) {
      if (m * p >= v) {
        return m * p;
      }
    }
    return 10 * p;
  }

  private static double niceCeiling(double v) {
    if (v <= 0) {
      return 1;
    }
    double p = Math.pow(10, Math.floor(Math.log10(v)));
    for (double m : new double[] {1, 2, 2.5, 5, 10}) {
      if (m * p >= v) {
        return m * p;
      }
    }
    return 10 * p;
  }

  private static String line(double x1, double y1, double x2, double y2, String color, String dash) {
    return String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"%s/>\n",
        x1, y1, x2, y2, color, dash == null ? "" : " stroke-dasharray=\"" + dash + "\"");
  }

  private static String text(double x, double y, String anchor, int size, String weight, String body) {
    return String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\" font-weight=\"%s\">%s</text>\n",
        x, y, anchor, size, weight, esc(body));
  }

  static String esc(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }
}
