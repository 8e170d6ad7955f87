package io.sluice.sidecar;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import org.eclipse.jetty.io.Content;

/**
 * Reads a request body without a thread waiting on it. {@link #readAvailable()} takes what has come
 * (a small body usually comes with its headers: then that is all, and no callback, future or timer is
 * needed); {@link #readRest()} goes on as the rest comes, Jetty calling back. Reading ends with the
 * body, or with a {@link #failure()}: a {@link TooLarge} as soon as it passes the cap (the rest is not
 * read), or the source's. Completing {@link #readRest()}'s future from outside (a timeout) stops the
 * reading at its next chunk.
 */
final class BodyReader {
  /** The body passed the cap. */
  static final class TooLarge extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TooLarge() {
      super(null, null, false, false);
    }
  }

  private final Content.Source source;
  private final int max;
  private byte[] bytes;
  private int size;
  private boolean done;
  private Throwable failure;
  private CompletableFuture<BodyReader> rest;

  /**
   * @param declaredLength the request's Content-Length, -1 when it has none: the array is that long
   *     (at most {@code max}), so that a body read whole needs no second one
   */
  BodyReader(Content.Source source, int max, long declaredLength) {
    this.source = source;
    this.max = max;
    this.bytes = new byte[declaredLength >= 0 ? (int) Math.min(declaredLength, max) : 256];
  }

  /** Reads what has come, without waiting: true when reading is over (the body, or a failure). */
  boolean readAvailable() {
    while (!done) {
      Content.Chunk chunk = source.read();
      if (chunk == null) {
        return false;
      }
      if (Content.Chunk.isFailure(chunk)) {
        end(chunk.getFailure());
        break;
      }
      ByteBuffer buffer = chunk.getByteBuffer();
      int n = buffer.remaining();
      if (size + n > max) {
        chunk.release();
        end(new TooLarge());
        break;
      }
      if (size + n > bytes.length) {
        bytes = Arrays.copyOf(bytes, Math.min(max, Math.max(size + n, 2 * bytes.length)));
      }
      buffer.get(bytes, size, n);
      size += n;
      boolean last = chunk.isLast();
      chunk.release();
      if (last) {
        end(null);
      }
    }
    return true;
  }

  /** Reads the rest as it comes; the future completes with this reader when reading is over. */
  CompletableFuture<BodyReader> readRest() {
    rest = new CompletableFuture<>();
    run();
    return rest;
  }

  private void run() {
    if (rest.isDone()) {
      return; // timed out: stop here
    }
    if (readAvailable()) {
      rest.complete(this);
    } else {
      source.demand(this::run);
    }
  }

  private void end(Throwable cause) {
    done = true;
    failure = cause;
  }

  /** Why reading ended without the body ({@link TooLarge}, or the source's failure), or null. */
  Throwable failure() {
    return failure;
  }

  /** The body's bytes: the first {@link #size()} of this array. */
  byte[] bytes() {
    return bytes;
  }

  int size() {
    return size;
  }
}
