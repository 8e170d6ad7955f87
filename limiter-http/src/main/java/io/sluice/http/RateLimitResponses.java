package io.sluice.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.sluice.node.Decision;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;

/**
 * The bodies {@link RateLimitFilter} answers with, for other HTTP stacks to answer the same (no
 * servlet class is needed to load this one): small JSON objects, {@code application/json}, UTF-8,
 * written by Jackson's streaming generator (a header's or identity's name is the client's text).
 */
public final class RateLimitResponses {
  private static final JsonFactory JSON = new JsonFactory();

  private RateLimitResponses() {
  }

  /** The 429's body: {@code {"error":"rate limited","limit":"api","retryAfterSeconds":12}}. */
  public static String denied(Decision decision) {
    return json(g -> {
      g.writeStringField("error", "rate limited");
      g.writeStringField("limit", decision.limit().name());
      g.writeNumberField("retryAfterSeconds", Math.max(1, decision.retryAfterSeconds()));
    });
  }

  /** The 400's body for an identity longer than the filter takes ({@code what}: the header or identity). */
  public static String tooLong(String what, int maxLength) {
    return json(g -> g.writeStringField("error", what + ": longer than " + maxLength + " characters"));
  }

  /** The 400's body for an authenticated user's name longer than the filter takes. */
  public static String userNameTooLong(int maxLength) {
    return json(g -> g.writeStringField("error", "user: name longer than " + maxLength + " characters"));
  }

  private static String json(Fields fields) {
    StringWriter out = new StringWriter(96);
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      fields.write(g);
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e); // (a StringWriter does not fail)
    }
    return out.toString();
  }

  @FunctionalInterface
  private interface Fields {
    void write(JsonGenerator g) throws IOException;
  }
}
