package io.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.node.RequestLimiter;
import io.sluice.sync.SyncedLimiter;
import io.sluice.sync.spi.CounterStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.blockhound.BlockHound;

/**
 * No event-loop thread blocks: Reactor's BlockHound instruments the JVM's blocking calls (park, sleep,
 * wait, blocking I/O) and reports each one made on a non-blocking thread (Reactor Netty's
 * {@code reactor-http-*} event loops, Reactor's parallel workers). The app decides every request
 * through a store whose answers come a millisecond later on its own thread, in exact mode (every
 * decision waits for a script) and in the approximate mode on cold keys (every first decision asks
 * for a claim). Through {@link SluiceWebFilter} as registered, nothing blocks; the same filter deciding
 * through the blocking {@code checkIfAnyApplies} is caught.
 *
 * <p>Runs in a JVM of its own (BlockHound's instrumentation cannot be undone): the surefire execution
 * {@code blockhound} of this module's pom, with {@code -XX:+AllowRedefinitionToAddDeleteMethods}.
 */
class SluiceWebFilterBlockingTest {
  /** Every blocking call BlockHound saw on a non-blocking thread: the thread and the call. */
  static final List<String> BLOCKED = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void installBlockHound() {
    BlockHound.builder()
        // Reactor Netty's event loops (its threads are named reactor-http-nio-N or reactor-http-epoll-N)
        .nonBlockingThreadPredicate(p -> p.or(t -> t.getName().startsWith("reactor-http-")))
        // Netty's own shutdown of an event loop sleeps between its checks for tasks left (when the app
        // closes, after every request): Netty 4.2's loop reaches it by a path Netty's integration misses
        .allowBlockingCallsInside("io.netty.util.concurrent.SingleThreadEventExecutor", "confirmShutdown")
        // and an event loop that has stopped tells its termination listeners through Netty's global
        // executor, whose queue lock it may meet taken (CI saw it park there once, as the thread ended)
        .allowBlockingCallsInside("io.netty.util.concurrent.GlobalEventExecutor", "addTask")
        // the test's stand-in for a networked store hands each answer to a thread of its own through a
        // ScheduledThreadPoolExecutor, whose queue lock an event loop may meet taken (CI saw it park there
        // once): the stand-in's doing, where Lettuce writes to its channel; Sluice's calls above it are
        // still watched
        .allowBlockingCallsInside("io.sluice.spring.LateStore", "late")
        // Spring's own cache of annotation metadata, which WebFlux consults as it invokes a handler for the
        // first time, may be met locked by another event loop doing the same (CI saw one park there once,
        // 2026-12-06, no Sluice frame in the 25 the callback prints: Sluice reads its annotations at
        // start-up, not per request)
        .allowBlockingCallsInside("org.springframework.core.annotation.AnnotationTypeMappings$Cache", "get")
        .blockingMethodCallback(m -> BLOCKED.add(Thread.currentThread().getName() + ": " + m + " at "
            + java.util.Arrays.stream(new Throwable().getStackTrace()).skip(2).limit(25).map(String::valueOf)
                .collect(java.util.stream.Collectors.joining("\n  "))))
        .install();
  }

  @Configuration(proxyBeanMethods = false)
  static class Store {
    @Bean(destroyMethod = "close")
    CounterStore lateStore() {
      return new LateStore();
    }
  }

  /** The filter as it would be, were it to decide through the blocking call. */
  @Configuration(proxyBeanMethods = false)
  static class BlockingFilter {
    @Bean
    SluiceWebFilter blockingSluiceWebFilter(RequestLimiter limiter, SluiceProperties properties) {
      return new SluiceWebFilter((request, cost) -> CompletableFuture.completedFuture(
          limiter.checkIfAnyApplies(request, cost)), properties.getFilter());
    }
  }

  private static final String[] LIMITS = {"--sluice.limits.api.limit=1000", "--sluice.limits.api.window=1m",
      "--sluice.limits.api.algorithm=fixed-window", "--sluice.rules.always=api by api-key",
      "--sluice.limits.orders.limit=2", "--sluice.limits.orders.window=1m"}; // (orders: ReactiveApp's @SluiceLimit)

  @Test
  void theFilterNeverBlocksAnEventLoopThreadInExactMode() throws Exception {
    assertNothingBlocks("--sluice.sync.batch-size=1");
  }

  @Test
  void theFilterNeverBlocksAnEventLoopThreadOnColdKeysThatAskForClaims() throws Exception {
    assertNothingBlocks("--sluice.sync.batch-size=100");
  }

  @Test
  void theBlockingPathIsCaught() throws Exception {
    BLOCKED.clear();
    try (ConfigurableApplicationContext app = ReactiveApp.start(new Class<?>[] {Store.class, BlockingFilter.class},
        with("--sluice.sync.batch-size=1"))) {
      assertThat(app.getBeansOfType(SluiceWebFilter.class)).containsOnlyKeys("blockingSluiceWebFilter");
      assertThat(drive(app)).containsOnly(200);
    }
    // the event loop waited for the store's answer: a park on a reactor-http thread
    assertThat(BLOCKED).isNotEmpty();
    assertThat(BLOCKED).anyMatch(b -> b.startsWith("reactor-http-") && b.contains("park"));
  }

  private void assertNothingBlocks(String mode) throws Exception {
    BLOCKED.clear();
    try (ConfigurableApplicationContext app = ReactiveApp.start(new Class<?>[] {Store.class}, with(mode))) {
      assertThat(drive(app)).containsOnly(200);
      SyncedLimiter api = SluiceAutoConfiguration.synced(app.getBean(RequestLimiter.class)).stream()
          .filter(l -> l.limit().name().equals("api")).findFirst().orElseThrow();
      // the decisions did wait for the store (else nothing here could have blocked)
      assertThat(api.waitedDecisions()).isGreaterThanOrEqualTo(20);
      // and the store answered each in time: none decided by the failure policy
      assertThat(api.storeFailures()).isZero();
      assertThat(api.fallbackDecisions()).isZero();
    }
    assertThat(BLOCKED).isEmpty();
  }

  /** 40 requests, 4 at a time, on 20 keys new to the limiter: the statuses. */
  private static List<Integer> drive(ConfigurableApplicationContext app) throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    String run = Long.toString(System.nanoTime());
    List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
    List<Integer> statuses = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ReactiveApp.port(app) + "/hello"))
          .timeout(Duration.ofSeconds(10)).header("X-API-Key", "key-" + run + "-" + (i % 20)).GET().build();
      sent.add(http.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
      if (sent.size() == 4) {
        for (CompletableFuture<HttpResponse<String>> r : sent) {
          statuses.add(r.get().statusCode());
        }
        sent.clear();
      }
    }
    return statuses;
  }

  private static String[] with(String mode) {
    String[] args = new String[LIMITS.length + 1];
    System.arraycopy(LIMITS, 0, args, 0, LIMITS.length);
    args[LIMITS.length] = mode;
    return args;
  }
}
