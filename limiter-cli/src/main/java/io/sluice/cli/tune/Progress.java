package io.sluice.cli.tune;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * Progress on stderr: a bar redrawn in place when stderr is a terminal, otherwise one line when a
 * setting starts and one when it ends (logs and CI stay readable).
 */
final class Progress {
  private static final int BAR = 30;
  private final PrintWriter err;
  private final boolean terminal;
  private final int total;
  private final long stepMillis;
  private int index;
  private String label = "";
  private long lastDraw;
  private boolean drawn;

  Progress(PrintWriter err, boolean terminal, int total, long stepMillis) {
    this.err = err;
    this.terminal = terminal;
    this.total = total;
    this.stepMillis = stepMillis;
  }

  /** Whether stderr is (probably) a terminal: the JVM has a console. */
  static boolean terminal() {
    return System.console() != null && System.getenv("TERM") != null && !"dumb".equals(System.getenv("TERM"));
  }

  void begin(int i, String what) {
    index = i;
    label = what;
    if (terminal) {
      draw(0, true);
    } else {
      err.printf(Locale.ROOT, "[%d/%d] %s: replaying the trace%n", i + 1, total, what);
      err.flush();
    }
  }

  void replay(double fraction) {
    if (terminal) {
      draw(fraction, false);
    }
  }

  void end(String summary) {
    if (terminal) {
      clear();
    }
    err.printf(Locale.ROOT, "[%d/%d] %s: %s%n", index + 1, total, label, summary);
    err.flush();
  }

  void message(String line) {
    if (terminal) {
      clear();
    }
    err.println(line);
    err.flush();
  }

  private void draw(double fraction, boolean force) {
    long now = System.currentTimeMillis();
    if (!force && now - lastDraw < 200) {
      return;
    }
    lastDraw = now;
    double done = (index + fraction) / total;
    int filled = (int) Math.round(done * BAR);
    long leftSeconds = Math.round((total - index - fraction) * stepMillis / 1000.0);
    err.printf(Locale.ROOT, "\r[%s%s] %d/%d %-32s %3.0f%%  about %ds left ", "#".repeat(filled), ".".repeat(BAR - filled),
        index + 1, total, label.length() > 32 ? label.substring(0, 32) : label, done * 100, leftSeconds);
    err.flush();
    drawn = true;
  }

  private void clear() {
    if (drawn) {
      err.print("\r" + " ".repeat(BAR + 90) + "\r");
      drawn = false;
    }
  }
}
