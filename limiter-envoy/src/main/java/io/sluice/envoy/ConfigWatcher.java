package io.sluice.envoy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Reloads a configuration ({@code T}: the RLS descriptors, {@link RlsConfig}, or the RLQS rules,
 * {@link RlqsConfig}) when its files change, without a restart: every interval it reads the files
 * again (a directory's listing too, so files added, removed or swapped by a symlink, as Kubernetes
 * does with a ConfigMap, are seen), and when their text differs from what it last read, it parses
 * them and hands the new configuration on. A configuration with an error is not used: the last good
 * one stays, and the error (file, line, field) is logged and kept ({@link #lastError()}) until the
 * files change again.
 *
 * <p>Concurrency: {@link #checkNow} runs on the watcher's own timer thread and, in tests, on the
 * caller's; it is {@code synchronized}, which guards {@code lastTexts} (read and written only there).
 * {@code lastError} is volatile and the counters atomic, read by any thread; {@code apply} is called
 * under the monitor, so configurations are handed on one at a time and in order.
 */
final class ConfigWatcher<T> implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(ConfigWatcher.class.getName());

  private final String what;
  private final List<Path> paths;
  private final Function<List<Path>, Map<String, String>> read;
  private final Function<Map<String, String>, T> parse;
  private final Consumer<T> apply;
  /** A check of a parsed configuration before it is applied (the bound on distinct limits); null: it passes. */
  private final Function<T, String> check;
  private final ScheduledExecutorService timer;
  private final AtomicLong reloads = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private Map<String, String> lastTexts;
  private volatile String lastError;

  /**
   * @param what what the log calls the configuration ("configuration", "RLQS configuration")
   * @param read the files' texts by name (throws IllegalArgumentException naming a file it cannot read)
   * @param parse the configuration from the texts (throws IllegalArgumentException naming file, line and field)
   */
  ConfigWatcher(String what, List<Path> paths, Map<String, String> loadedTexts, long intervalMillis,
      Function<List<Path>, Map<String, String>> read, Function<Map<String, String>, T> parse, Consumer<T> apply,
      Function<T, String> check) {
    this.what = what;
    this.paths = List.copyOf(paths);
    this.read = read;
    this.parse = parse;
    this.apply = apply;
    this.check = check;
    this.lastTexts = loadedTexts;
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sluice-envoy-config");
      t.setDaemon(true);
      return t;
    });
    timer.scheduleWithFixedDelay(this::checkNow, intervalMillis, intervalMillis, TimeUnit.MILLISECONDS);
  }

  /** Reads the files once and applies them if they changed and are good; what the timer runs. */
  synchronized void checkNow() {
    try {
      Map<String, String> texts;
      try {
        texts = read.apply(paths);
      } catch (IllegalArgumentException e) {
        lastTexts = null; // read again and parse once the files can be read
        fail(e.getMessage(), null);
        return;
      }
      if (texts.equals(lastTexts)) {
        return;
      }
      T next;
      try {
        next = parse.apply(texts);
      } catch (IllegalArgumentException e) {
        fail(e.getMessage(), texts);
        return;
      }
      String refused = check == null ? null : check.apply(next);
      if (refused != null) {
        fail(refused, texts);
        return;
      }
      lastTexts = texts;
      apply.accept(next);
      lastError = null;
      reloads.incrementAndGet();
      LOG.log(System.Logger.Level.INFO, "sluice envoy: {0} reloaded: {1}", what, next);
    } catch (RuntimeException e) {
      fail(e.toString(), null);
    }
  }

  private void fail(String message, Map<String, String> texts) {
    if (texts != null) {
      lastTexts = texts; // the same broken files are not parsed (and logged) again every interval
    }
    if (!message.equals(lastError)) {
      LOG.log(System.Logger.Level.WARNING, "sluice envoy: {0} not reloaded, the last good one stays: {1}", what,
          message);
    }
    lastError = message;
    failures.incrementAndGet();
  }

  /** Configurations applied since start. */
  long reloads() {
    return reloads.get();
  }

  /** Attempts refused (an error in the files, or files that could not be read). */
  long failures() {
    return failures.get();
  }

  /** The error of the files as they are now, or null when they are in use. */
  String lastError() {
    return lastError;
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
