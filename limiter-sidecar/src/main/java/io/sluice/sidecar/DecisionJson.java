package io.sluice.sidecar;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import io.sluice.node.Decision;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * A check's answer, {@code {"allowed":true,"outcome":"allowed","limit":"api","remaining":999,
 * "resetSeconds":60,"retryAfterSeconds":0}} (and {@code "limits":[...]} for the rules), written by
 * Jackson's streaming generator: no tree. The generator writes into a buffer of the thread's that is
 * used again, and the answer is a copy of it (it may still be in flight when the thread answers the
 * next request, so the answer itself cannot be that buffer).
 */
final class DecisionJson {
  private static final JsonFactory JSON = new JsonFactory();
  private static final ThreadLocal<ByteArrayBuilder> SCRATCH = ThreadLocal.withInitial(() -> new ByteArrayBuilder(256));

  private DecisionJson() {
  }

  /** The answer to a check of {@code d}; with its {@code parts} as {@code limits} for the rules. */
  static byte[] of(Decision d, boolean withParts) {
    ByteArrayBuilder out = SCRATCH.get();
    out.reset();
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      decision(g, d);
      g.writeNumberField("retryAfterSeconds", d.allowed() ? 0 : Math.max(1, d.retryAfterSeconds()));
      if (withParts) {
        g.writeArrayFieldStart("limits");
        for (Decision part : d.parts()) {
          g.writeStartObject();
          decision(g, part);
          g.writeEndObject();
        }
        g.writeEndArray();
      }
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e); // (a byte array does not fail)
    }
    return out.toByteArray();
  }

  private static void decision(JsonGenerator g, Decision d) throws IOException {
    g.writeBooleanField("allowed", d.allowed());
    g.writeStringField("outcome", d.outcome().tag());
    g.writeStringField("limit", d.limit().name());
    g.writeNumberField("remaining", d.remaining());
    g.writeNumberField("resetSeconds", d.resetSeconds());
  }
}
