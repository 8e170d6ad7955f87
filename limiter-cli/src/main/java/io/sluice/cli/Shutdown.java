package io.sluice.cli;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Ctrl-C for long commands: the JVM's shutdown hook sets a flag that the running command polls,
 * then waits (bounded) until the command says it has written what it measured so far.
 *
 * <p>Concurrency: the flags are set by the JVM's shutdown-hook thread and read by the command's
 * thread, hence volatile; the latch hands "written" back the other way.
 */
public final class Shutdown {
  private static volatile boolean inProgress;

  private Shutdown() {
  }

  /**
   * For a command that closes its embedded Hazelcast member itself, from its own shutdown hook, after
   * its limiters flushed (serve, envoy): Hazelcast's hook must not stop the member alongside it, or
   * SIGTERM raced the last flush and lost it (found for the Spring Boot starter by review; the same
   * pattern here). A value the user set stands.
   */
  public static void ownEmbeddedMember() {
    if (System.getProperty("hazelcast.shutdownhook.enabled") == null) {
      System.setProperty("hazelcast.shutdownhook.enabled", "false");
    }
  }

  /** Whether the JVM is shutting down (Ctrl-C): System.exit must not be called then. */
  public static boolean inProgress() {
    return inProgress;
  }

  /**
   * A guard for one command run: {@link #requested()} turns true on Ctrl-C; {@link #close()} (at the
   * end of the command, reports written) lets the JVM finish exiting.
   */
  public static Guard install(long maxWaitMillis) {
    Guard g = new Guard(maxWaitMillis);
    try {
      Runtime.getRuntime().addShutdownHook(g.hook);
    } catch (IllegalStateException alreadyExiting) {
      g.stop = true;
    }
    return g;
  }

  public static final class Guard implements AutoCloseable {
    private final CountDownLatch done = new CountDownLatch(1);
    private final Thread hook;
    private volatile boolean stop;

    private Guard(long maxWaitMillis) {
      this.hook = new Thread(() -> {
        inProgress = true;
        stop = true;
        try {
          done.await(maxWaitMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "sluice-shutdown");
    }

    public boolean requested() {
      return stop;
    }

    /** For tests: behave as if Ctrl-C was pressed. */
    public void request() {
      stop = true;
    }

    @Override
    public void close() {
      done.countDown();
      if (!inProgress) {
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException exiting) {
          // the hook is running: it will see the latch
        }
      }
    }
  }
}
