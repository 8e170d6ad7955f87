package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.internal.logging.InternalLoggerFactory;
import io.netty.util.internal.logging.Slf4JLoggerFactory;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** What the command line logs, and where: SLF4J's simple binding on standard error, at its levels. */
class LoggingTest {

  @Test
  void systemLoggerAndJulReachSlf4jFormattedAtTheConfiguredLevels() {
    Logging.toSlf4j();
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      // as StoreCalls logs a breaker's transition (System.Logger, MessageFormat placeholders)
      System.getLogger("io.sluice.sync.StoreCalls").log(System.Logger.Level.INFO,
          "sluice: circuit breaker {0}: {1}", "api", "State transition from CLOSED to OPEN");
      System.getLogger("io.sluice.sync.SyncedLimiter").log(System.Logger.Level.DEBUG, "sluice: not shown");
      java.util.logging.Logger library = java.util.logging.Logger.getLogger("io.grpc.internal.Example");
      library.info("a library's info: not shown");
      library.warning("a library's warning");
    } finally {
      System.setErr(err);
    }
    String log = captured.toString(StandardCharsets.UTF_8);
    assertThat(log).contains("INFO StoreCalls - sluice: circuit breaker api: State transition from CLOSED to OPEN")
        .contains("WARN Example - a library's warning")
        .doesNotContain("not shown");
  }

  @Test
  void hazelcastAndNettyLogThroughSlf4j() {
    Logging.toSlf4j();
    assertThat(System.getProperty("hazelcast.logging.type")).isEqualTo("slf4j");
    // Lettuce logs through Netty's logger, which picks SLF4J when a binding other than slf4j-nop is there
    assertThat(InternalLoggerFactory.getDefaultFactory()).isInstanceOf(Slf4JLoggerFactory.class);
  }
}
