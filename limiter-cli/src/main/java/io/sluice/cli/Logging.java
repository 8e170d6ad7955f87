package io.sluice.cli;

import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * Where the command line's logging goes: everything to SLF4J, written by slf4j-simple to standard error
 * at the levels of {@code simplelogger.properties} (WARN for libraries; INFO for Sluice's own messages,
 * which say when a circuit breaker opens or closes and when the store lost its data).
 *
 * <ul>
 *   <li>{@code java.util.logging}, and with it {@link System.Logger} (which the JDK sends to
 *       java.util.logging): Sluice's limiters and stores, gRPC. {@link SLF4JBridgeHandler} replaces the
 *       console handler, and formats {@code {0}} placeholders as java.util.logging does.
 *   <li>Hazelcast: {@code hazelcast.logging.type=slf4j} (Hazelcast does not look for SLF4J on its own).
 *   <li>Lettuce and Netty: Netty's {@code InternalLoggerFactory} picks SLF4J by itself when a binding
 *       other than slf4j-nop is present.
 *   <li>Resilience4j, Jetty: SLF4J already.
 * </ul>
 *
 * <p>{@code -Dorg.slf4j.simpleLogger.defaultLogLevel=info} (or {@code .log.<logger>=debug}) on the
 * {@code java} command line changes a level.
 */
final class Logging {
  private Logging() {}

  /** Routes java.util.logging, System.Logger and Hazelcast to SLF4J; called once, by main. */
  static void toSlf4j() {
    if (System.getProperty("hazelcast.logging.type") == null) {
      System.setProperty("hazelcast.logging.type", "slf4j");
    }
    if (!SLF4JBridgeHandler.isInstalled()) {
      SLF4JBridgeHandler.removeHandlersForRootLogger();
      SLF4JBridgeHandler.install();
    }
  }
}
