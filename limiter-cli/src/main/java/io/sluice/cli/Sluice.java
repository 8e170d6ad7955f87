package io.sluice.cli;

import io.sluice.cli.tune.TuneCommand;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * The {@code sluice} command line. Subcommands are listed in {@link Command#subcommands()} below:
 * a new one is a picocli {@code @Command} class that returns its exit code from {@code call()} and
 * throws {@link UserError} for anything the user can fix (printed as one line, no stack trace).
 *
 * <p>Exit codes: 0 done, 1 a user error found while running (an unreachable store), 2 bad options,
 * 130 stopped by Ctrl-C (after writing what was measured).
 */
@Command(name = "sluice",
    mixinStandardHelpOptions = true,
    versionProvider = Sluice.Version.class,
    description = "Sluice: distributed rate limiting with local batching and multi-region quotas.",
    subcommands = {TuneCommand.class, ServeCommand.class, EnvoyCommand.class, CoordinatorCommand.class, CommandLine.HelpCommand.class})
public final class Sluice implements Runnable {
  public static final int EXIT_USER_ERROR = 1;
  public static final int EXIT_USAGE = 2;
  public static final int EXIT_INTERRUPTED = 130;

  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    // no subcommand: the one-line error and the hint to --help, like any other usage error
    throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required (try: sluice tune)");
  }

  public static void main(String[] args) {
    Logging.toSlf4j();
    int code = execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
    if (!Shutdown.inProgress()) {
      System.exit(code);
    }
    // Ctrl-C: the JVM is already exiting; its shutdown hook waited for this thread to write the report
  }

  /** Runs the command line with these streams and answers the exit code (used by main and tests). */
  public static int execute(PrintWriter out, PrintWriter err, String... args) {
    CommandLine cl = new CommandLine(new Sluice());
    cl.setOut(out);
    cl.setErr(err);
    cl.setParameterExceptionHandler((ex, a) -> {
      CommandLine c = ex.getCommandLine();
      c.getErr().println(c.getCommandSpec().qualifiedName() + ": " + ex.getMessage());
      c.getErr().println("Try '" + c.getCommandSpec().qualifiedName() + " --help' for the options.");
      c.getErr().flush();
      return EXIT_USAGE;
    });
    cl.setExecutionExceptionHandler((ex, c, parsed) -> {
      if (ex instanceof UserError) {
        c.getErr().println(c.getCommandSpec().qualifiedName() + ": " + ex.getMessage());
        c.getErr().flush();
        return ((UserError) ex).exitCode();
      }
      throw ex; // a bug: picocli prints the stack trace
    });
    int code = cl.execute(args);
    out.flush();
    err.flush();
    return code;
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Sluice.class.getPackage().getImplementationVersion();
      return new String[] {"sluice " + (v == null ? "(development build)" : v)};
    }
  }
}
