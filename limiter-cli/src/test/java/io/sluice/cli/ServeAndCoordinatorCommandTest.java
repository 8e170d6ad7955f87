package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.region.GlobalQuota;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The serve and coordinator subcommands: their options reach the code they run, bad ones fail in one line. */
class ServeAndCoordinatorCommandTest {
  private static SluiceBadInputTest.Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Sluice.execute(new PrintWriter(out), new PrintWriter(err), args);
    return new SluiceBadInputTest.Run(code, out.toString(), err.toString());
  }

  @Test
  void quotaSpecsParse() {
    GlobalQuota q = CoordinatorCommand.quota("api=6000/10s:tenant-*", "--quota", false);
    assertThat(q.sliding()).isFalse();
    assertThat(q.name()).isEqualTo("api");
    assertThat(q.quota()).isEqualTo(6000);
    assertThat(q.window()).isEqualTo(Duration.ofSeconds(10));
    assertThat(q.matches("tenant-7")).isTrue();
    assertThat(q.matches("other")).isFalse();
    assertThat(CoordinatorCommand.quota("all=100/1m", "--quota", false).matches("anything")).isTrue();
    GlobalQuota sliding = CoordinatorCommand.quota("api=6000/10s", "--sliding-quota", true);
    assertThat(sliding.sliding()).isTrue();
    assertThat(sliding.limit().algorithm()).isEqualTo(io.sluice.node.Algorithm.SLIDING_WINDOW_COUNTER);
    assertThat(sliding.limit().capacity()).isEqualTo(6000);
    GlobalQuota bucket = CoordinatorCommand.bucketQuota("api=6000/10s,600:tenant-*");
    assertThat(bucket.bucket()).isTrue();
    assertThat(bucket.burst()).isEqualTo(600);
    assertThat(bucket.matches("tenant-7")).isTrue();
    assertThat(bucket.limit().algorithm()).isEqualTo(io.sluice.node.Algorithm.TOKEN_BUCKET);
    assertThat(bucket.limit().capacity()).isEqualTo(600);
    assertThat(bucket.limit().refillTokens()).isEqualTo(6000);
    assertThat(bucket.limit().periodNanos()).isEqualTo(Duration.ofSeconds(10).toNanos());
    assertThat(CoordinatorCommand.bucketQuota("all=100/1m,5").matches("anything")).isTrue();
  }

  @Test
  void badCoordinatorOptionsNameTheProblem() {
    SluiceBadInputTest.Run r = run("coordinator", "--region", "eu=redis://127.0.0.1:1", "--quota", "api=600");
    assertThat(r.code()).isEqualTo(Sluice.EXIT_USAGE);
    assertThat(r.err().split("\\R")[0]).isEqualTo("sluice coordinator: --quota: expected NAME=G/WINDOW[:PATTERN], got api=600");
    r = run("coordinator", "--region", "eu=redis://127.0.0.1:1", "--region", "eu=redis://127.0.0.1:2",
        "--quota", "api=600/1s");
    assertThat(r.err().split("\\R")[0]).isEqualTo("sluice coordinator: regions: duplicate region name eu");
    r = run("coordinator", "--quota", "api=600/1s");
    assertThat(r.code()).isEqualTo(Sluice.EXIT_USAGE);
    assertThat(r.err()).contains("--region");
    r = run("coordinator", "--region", "eu=redis://127.0.0.1:1");
    assertThat(r.err().split("\\R")[0]).isEqualTo("sluice coordinator: --quota: give at least one quota"
        + " (--quota, --sliding-quota or --bucket-quota)");
    r = run("coordinator", "--region", "eu=redis://127.0.0.1:1", "--bucket-quota", "api=600/1s");
    assertThat(r.err().split("\\R")[0]).isEqualTo("sluice coordinator: --bucket-quota: expected"
        + " NAME=G/WINDOW,BURST[:PATTERN], got api=600/1s");
    r = run("coordinator", "--region", "eu=redis://127.0.0.1:1", "--bucket-quota", "api=600,60:x");
    assertThat(r.err().split("\\R")[0]).isEqualTo("sluice coordinator: --bucket-quota: expected"
        + " NAME=G/WINDOW,BURST[:PATTERN], got api=600,60:x");
    r = run("coordinator", "--region", "eu=redis://127.0.0.1:1", "--bucket-quota", "api=600/1s,0");
    assertThat(r.err().split("\\R")[0]).isEqualTo("sluice coordinator: burst: must be at least 1 permit, got 0"
        + " in quota api");
    r = run("coordinator", "--region", "eu=redis://127.0.0.1:1", "--sliding-quota", "api=600");
    assertThat(r.err().split("\\R")[0]).isEqualTo("sluice coordinator: --sliding-quota: expected"
        + " NAME=G/WINDOW[:PATTERN], got api=600");
    r = run("coordinator", "--region", "eu=redis://127.0.0.1:1", "--quota", "api=600/1s", "--smoothing", "0");
    assertThat(r.err().split("\\R")[0]).isEqualTo("sluice coordinator: smoothing: must be in (0, 1], got 0.0");
  }

  @Test
  void serveHandsItsOptionsToTheSidecar() {
    SluiceBadInputTest.Run r = run("serve", "--port", "not-a-port");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err().split("\\R")[0]).startsWith("sluice serve: ").contains("--port");
    assertThat(run("serve", "--help").out()).contains("--limit").contains("--redis");
    // checked before any store starts: a window shorter than two sync intervals
    r = run("serve", "--limit", "api=10/150ms", "--port", "0");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err().split("\\R")[0]).isEqualTo("sluice serve: --sync-interval: at most half the window of limit api"
        + " (150ms), got 100ms");
    assertThat(r.err()).doesNotContain("\tat ");
    r = run("serve", "--limit", "api=10/1m", "--bogus");
    assertThat(r.err().split("\\R")[0]).startsWith("sluice serve: Unknown option: '--bogus'");
    assertThat(run("help", "serve").out()).as("sluice help serve lists the options").contains("--limit=SPEC")
        .contains("--batch-size=N");
  }
}
