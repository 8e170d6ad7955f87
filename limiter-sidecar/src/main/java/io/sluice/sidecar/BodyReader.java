package io.sluice.sidecar;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import org.eclipse.jetty.io.Content;

/**
 * Reads a request body without a thread waiting on it: chunks are copied as they come, and the
 * reader asks Jetty to call it back when more is there. The result is the body, or a {@link TooLarge}
 * as soon as it passes the cap (the rest is not read). Completing the result from outside (a timeout)
 * stops the reading at its next chunk.
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
  private final CompletableFuture<byte[]> result = new CompletableFuture<>();
  private byte[] bytes = new byte[256];
  private int size;

  private BodyReader(Content.Source source, int max) {
    this.source = source;
    this.max = max;
  }

  /** Starts reading {@code source}, at most {@code max} bytes. */
  static CompletableFuture<byte[]> read(Content.Source source, int max) {
    BodyReader reader = new BodyReader(source, max);
    reader.run();
    return reader.result;
  }

  private void run() {
    while (!result.isDone()) {
      Content.Chunk chunk = source.read();
      if (chunk == null) {
        source.demand(this::run);
        return;
      }
      if (Content.Chunk.isFailure(chunk)) {
        result.completeExceptionally(chunk.getFailure());
        return;
      }
      ByteBuffer buffer = chunk.getByteBuffer();
      int n = buffer.remaining();
      if (size + n > max) {
        chunk.release();
        result.completeExceptionally(new TooLarge());
        return;
      }
      if (size + n > bytes.length) {
        bytes = Arrays.copyOf(bytes, Math.min(max, Math.max(size + n, 2 * bytes.length)));
      }
      buffer.get(bytes, size, n);
      size += n;
      boolean last = chunk.isLast();
      chunk.release();
      if (last) {
        result.complete(Arrays.copyOf(bytes, size));
        return;
      }
    }
  }
}
