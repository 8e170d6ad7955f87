package io.sluice.cli;

import io.sluice.sidecar.SluiceServer;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * {@code sluice serve}: the HTTP sidecar of limiter-sidecar. Its options are the sidecar's own (see
 * {@code sluice serve --help}); they are handed to it unchanged, so both parse them one way.
 */
@Command(name = "serve",
    description = "Runs the HTTP check sidecar (POST /check, GET /health, GET /metrics) on limiter-sync"
        + " with Redis (--redis URI) or the embedded Hazelcast store. 'sluice serve --help' lists its options.")
public final class ServeCommand implements Callable<Integer> {
  @Unmatched
  List<String> args = new ArrayList<>();

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() throws InterruptedException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try {
      return SluiceServer.run(args.toArray(new String[0]), out, err);
    } finally {
      out.flush();
      err.flush();
    }
  }
}
