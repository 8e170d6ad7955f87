package io.sluice.sync.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class CallTimeoutsTest {
  private static final long MILLI = TimeUnit.MILLISECONDS.toNanos(1);

  @Test
  void aCallNeverAnsweredTimesOutAndTheStoresOwnFutureIsLeftAlone() {
    CompletableFuture<String> store = new CompletableFuture<>();
    CompletableFuture<String> timed = CallTimeouts.within(store, 20 * MILLI);
    // no bound on how late the timeout comes (a noisy machine), only that it comes, and how
    assertThatThrownBy(() -> timed.get(30, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(TimeoutException.class);
    assertThat(store).isNotDone();
  }

  @Test
  void anAnswerBeforeTheDeadlineIsPassedOnAndNeverTurnedIntoATimeout() throws Exception {
    List<CompletableFuture<Integer>> timed = new ArrayList<>();
    List<CompletableFuture<Integer>> stores = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      CompletableFuture<Integer> store = new CompletableFuture<>();
      stores.add(store);
      timed.add(CallTimeouts.within(store, TimeUnit.MINUTES.toNanos(10)));
    }
    for (int i = 0; i < stores.size(); i++) {
      stores.get(i).complete(i);
    }
    for (int i = 0; i < timed.size(); i++) {
      assertThat(timed.get(i).get(30, TimeUnit.SECONDS)).isEqualTo(i);
    }
  }

  @Test
  void callsWithDifferentTimeoutsTimeOutInTheirOwnOrderWhileTheOthersAreAnswered() throws Exception {
    CompletableFuture<String> longOne = CallTimeouts.within(new CompletableFuture<>(), TimeUnit.MINUTES.toNanos(10));
    CompletableFuture<String> answered = new CompletableFuture<>();
    CompletableFuture<String> answeredTimed = CallTimeouts.within(answered, 50 * MILLI);
    CompletableFuture<String> shortOne = CallTimeouts.within(new CompletableFuture<>(), MILLI);
    answered.complete("yes");
    assertThatThrownBy(() -> shortOne.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(TimeoutException.class);
    assertThat(answeredTimed.get(30, TimeUnit.SECONDS)).isEqualTo("yes");
    assertThat(longOne).isNotDone();
  }

  @Test
  void callsFromManyThreadsAllTimeOut() throws Exception {
    List<CompletableFuture<Object>> timed = java.util.Collections.synchronizedList(new ArrayList<>());
    Thread[] threads = new Thread[4];
    for (int t = 0; t < threads.length; t++) {
      threads[t] = new Thread(() -> {
        for (int i = 0; i < 2_000; i++) {
          timed.add(CallTimeouts.within(new CompletableFuture<>(), (i % 7) * MILLI));
        }
      });
      threads[t].start();
    }
    for (Thread thread : threads) {
      thread.join();
    }
    CompletableFuture.allOf(timed.stream().map(f -> f.exceptionally(e -> e)).toArray(CompletableFuture[]::new))
        .get(30, TimeUnit.SECONDS);
    assertThat(timed).hasSize(8_000).allMatch(CompletableFuture::isCompletedExceptionally);
  }
}
