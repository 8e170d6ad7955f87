package io.sluice.envoy;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A command-line client built with {@code go install} (grpcurl, ghz, envoyproxy/ratelimit's
 * client_cmd), run as a process. The binary is looked for in this order: system property
 * ({@code grpcurl}, {@code ghz}, {@code ratelimit.client}), environment ({@code GRPCURL},
 * {@code GHZ}, {@code RATELIMIT_CLIENT}), the name on the PATH, then Go's bin folder ({@code $GOBIN},
 * {@code $GOPATH/bin}, {@code ~/go/bin}). As with toxiproxy-server in chaos-tests, a missing tool
 * fails the test rather than skipping it: {@code ./run-tests} installs them, and a skipped test would
 * look like a passed one in CI.
 */
enum GoTool {
  GRPCURL("grpcurl", "GRPCURL", "grpcurl", "github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4"),
  GHZ("ghz", "GHZ", "ghz", "github.com/bojand/ghz/cmd/ghz@v0.121.0"),
  RATELIMIT_CLIENT("ratelimit.client", "RATELIMIT_CLIENT", "client_cmd",
      "github.com/envoyproxy/ratelimit/src/client_cmd@v1.4.1-0.20260122083618-3fb702589d36");

  private final String property;
  private final String env;
  private final String binary;
  private final String module;

  GoTool(String property, String env, String binary, String module) {
    this.property = property;
    this.env = env;
    this.binary = binary;
    this.module = module;
  }

  /** The binary to run, or an error that says how to install it. */
  String path() {
    List<String> candidates = new ArrayList<>();
    String p = System.getProperty(property);
    if (p != null && !p.isBlank()) {
      candidates.add(p);
    }
    String e = System.getenv(env);
    if (e != null && !e.isBlank()) {
      candidates.add(e);
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (!dir.isEmpty()) {
        candidates.add(dir + File.separator + binary);
      }
    }
    String gobin = System.getenv("GOBIN");
    if (gobin != null && !gobin.isBlank()) {
      candidates.add(gobin + File.separator + binary);
    }
    String gopath = System.getenv("GOPATH");
    if (gopath != null && !gopath.isBlank()) {
      for (String dir : gopath.split(File.pathSeparator)) {
        candidates.add(dir + File.separator + "bin" + File.separator + binary);
      }
    }
    candidates.add(System.getProperty("user.home") + File.separator + "go" + File.separator + "bin" + File.separator
        + binary);
    for (String c : candidates) {
      File f = new File(c);
      if (f.isFile() && f.canExecute()) {
        return f.getPath();
      }
    }
    throw new IllegalStateException(binary + " not found (looked at " + candidates + "); run ./run-tests, which"
        + " installs it, or: go install " + module);
  }

  /** Runs the tool with these arguments; its exit code and its output (stdout and stderr together). */
  Result run(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(path());
    command.addAll(List.of(args));
    Path out = Files.createTempFile(binary + "-", ".out");
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
      // generous: a loaded CI machine, and ghz runs hundreds of calls
      if (!process.waitFor(120, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(String.join(" ", command) + ": no exit within 120 s; output: "
            + Files.readString(out, StandardCharsets.UTF_8));
      }
      return new Result(String.join(" ", command), process.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
    }
  }

  /** What a run printed, with the command, for the assertions' messages. */
  record Result(String command, int exitCode, String output) {
    /** The output when the tool succeeded; otherwise an error with the command and what it printed. */
    String ok() {
      if (exitCode != 0) {
        throw new AssertionError(command + " exited with " + exitCode + ":\n" + output);
      }
      return output;
    }
  }
}
