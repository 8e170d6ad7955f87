package io.sluice.envoy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Reloads the configuration when its files change, without a restart: every interval it reads the
 * files again (a directory's listing too, so files added, removed or swapped by a symlink, as
 * Kubernetes does with a ConfigMap, are seen), and when their text differs from what it last read, it
 * parses them and hands the new configuration on. A configuration with an error is not used: the
 * last good one stays, and the error (file, line, field) is logged and kept ({@link #lastError()})
 * until the files change again.
 */
final class RlsConfigWatcher implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(RlsConfigWatcher.class.getName());

  private final List<Path> paths;
  private final Consumer<RlsConfig> apply;
  /** A check of a parsed configuration before it is applied (the bound on distinct limits); null: it passes. */
  private final java.util.function.Function<RlsConfig, String> check;
  private final ScheduledExecutorService timer;
  private final AtomicLong reloads = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private Map<String, String> lastTexts;
  private volatile String lastError;

  RlsConfigWatcher(List<Path> paths, Map<String, String> loadedTexts, long intervalMillis, Consumer<RlsConfig> apply,
      java.util.function.Function<RlsConfig, String> check) {
    this.paths = List.copyOf(paths);
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
        texts = RlsConfig.read(paths);
      } catch (IllegalArgumentException e) {
        lastTexts = null; // read again and parse once the files can be read
        fail(e.getMessage(), null);
        return;
      }
      if (texts.equals(lastTexts)) {
        return;
      }
      RlsConfig next;
      try {
        next = RlsConfig.parse(texts);
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
      LOG.log(System.Logger.Level.INFO, "sluice envoy: configuration reloaded: domains {0}", next.domains());
    } catch (RuntimeException e) {
      fail(e.toString(), null);
    }
  }

  private void fail(String message, Map<String, String> texts) {
    if (texts != null) {
      lastTexts = texts; // the same broken files are not parsed (and logged) again every interval
    }
    if (!message.equals(lastError)) {
      LOG.log(System.Logger.Level.WARNING, "sluice envoy: configuration not reloaded, the last good one stays: {0}",
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
