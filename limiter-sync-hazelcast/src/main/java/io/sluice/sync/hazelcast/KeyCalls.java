package io.sluice.sync.hazelcast;

import com.hazelcast.map.IMap;
import io.sluice.sync.spi.state.CounterEntry;
import io.sluice.sync.spi.state.EntryUpdate;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads of one {@link HazelcastCounterStore}: the call threads its exact, lease and claim calls
 * (and a flush of one key) block on, and the one thread its callbacks and the futures it hands to
 * callers complete on, never a Hazelcast one.
 *
 * <p>Concurrency: deciding threads, flushers and Hazelcast's threads call it at once. Its fields are
 * final: two thread pools (thread-safe, shut down once by {@link #shutdown()}, after which a task runs
 * where it is handed over) and the store's counters map (Hazelcast's, thread-safe).
 */
final class KeyCalls {
  /**
   * Most exact and lease calls one store makes at once: each holds a thread for a round trip, so this
   * many callers deciding at the same moment never wait for each other.
   */
  static final int KEY_CALL_THREADS = 32;
  private static final AtomicInteger THREADS = new AtomicInteger();
  static final Executor DIRECT = Runnable::run;

  private final IMap<byte[], CounterEntry> counters;
  /** One thread, started when needed and stopped after idling: see {@link #onCompletion}. */
  private final ThreadPoolExecutor callbackThread;
  /**
   * The exact and lease calls ({@link #onKey}): a new thread per call until there are
   * {@link #KEY_CALL_THREADS}, each stopped after 10 s without work; calls beyond them wait in line.
   */
  private final ThreadPoolExecutor keyCalls;
  final Executor callbacks = this::runCallback;

  KeyCalls(IMap<byte[], CounterEntry> counters, String mapPrefix) {
    this.counters = counters;
    this.callbackThread = new ThreadPoolExecutor(1, 1, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
      Thread t = new Thread(r, "sluice-hazelcast-" + mapPrefix + "-" + THREADS.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    this.callbackThread.allowCoreThreadTimeOut(true);
    this.keyCalls = new ThreadPoolExecutor(KEY_CALL_THREADS, KEY_CALL_THREADS, 10, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, "sluice-hazelcast-" + mapPrefix + "-call-" + THREADS.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    this.keyCalls.allowCoreThreadTimeOut(true);
  }

  /**
   * Runs a processor on one counter key: a blocking {@code executeOnKey} on one of this store's call
   * threads ({@link #keyCalls}), which completes the answer. Not {@code submitToKey}: Hazelcast wraps
   * the future it returns in one that completes through Hazelcast's default executor, which on a
   * machine with 2 cores or fewer starts a new thread per call; for a call per decision that cost 10
   * to 20 times the call itself (2 cores, embedded member, one caller: 170-550 us a decision against
   * 20-30 us). The answer completes on a thread of this store, never a Hazelcast one, so a caller's
   * continuation may call Hazelcast again. After {@link #shutdown()} the call runs on the caller's thread.
   */
  CompletableFuture<long[]> onKey(byte[] counterKey, EntryUpdate update) {
    HazelcastCounterStore.OnMember processor = new HazelcastCounterStore.OnMember(update);
    CompletableFuture<long[]> answer = new CompletableFuture<>();
    Runnable call = () -> {
      try {
        answer.complete(counters.executeOnKey(counterKey, processor));
      } catch (RuntimeException e) { // the store's error, a timeout, or a member shut down
        answer.completeExceptionally(e);
      }
    };
    try {
      keyCalls.execute(call);
    } catch (RejectedExecutionException closed) {
      call.run();
    }
    return answer;
  }

  /**
   * A plain future completed through {@code executor} when Hazelcast's completes. Hazelcast runs even
   * the non-async callbacks of its futures on its default executor: the common fork-join pool or,
   * where that has fewer than 2 threads (machines with 2 cores or fewer), a new thread per callback.
   * And a Hazelcast partition thread may not invoke a remote member ({@code IllegalThreadStateException}).
   * So continuations that call Hazelcast again, and the futures handed to callers, complete on this
   * store's callback thread ({@link #callbacks}, which never blocks); a future that only gathers
   * answers completes {@link #DIRECT}ly, on the Hazelcast thread that has the answer.
   */
  static <T> CompletableFuture<T> onCompletion(CompletionStage<T> stage, Executor executor) {
    CompletableFuture<T> f = new CompletableFuture<>();
    stage.whenCompleteAsync((value, error) -> {
      if (error == null) {
        f.complete(value);
      } else {
        f.completeExceptionally(error instanceof CompletionException && error.getCause() != null ? error.getCause() : error);
      }
    }, executor);
    return f;
  }

  /** Runs callbacks on the store's thread; after {@link #shutdown()}, where they are (only failures are left then). */
  private void runCallback(Runnable task) {
    try {
      callbackThread.execute(task);
    } catch (RejectedExecutionException closed) {
      task.run();
    }
  }

  /** Stops both pools: calls still in flight complete, later ones run on their callers' threads. */
  void shutdown() {
    callbackThread.shutdown();
    keyCalls.shutdown();
  }
}
