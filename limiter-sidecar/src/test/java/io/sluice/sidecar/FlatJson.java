package io.sluice.sidecar;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** Reads the sidecar's answers (flat JSON objects; nested values are skipped) for the tests. */
final class FlatJson {
  private static final JsonFactory JSON = new JsonFactory();

  private FlatJson() {
  }

  static Map<String, Object> parse(String text) {
    Map<String, Object> out = new LinkedHashMap<>();
    try (JsonParser p = JSON.createParser(text)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new AssertionError("not a JSON object: " + text);
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken t = p.nextToken();
        switch (t) {
          case VALUE_STRING:
            out.put(name, p.getText());
            break;
          case VALUE_NUMBER_INT:
            out.put(name, p.getLongValue());
            break;
          case VALUE_TRUE:
          case VALUE_FALSE:
            out.put(name, p.getBooleanValue());
            break;
          case VALUE_NULL:
            out.put(name, null);
            break;
          default:
            p.skipChildren();
            out.put(name, "(nested)");
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("not JSON: " + text, e);
    }
    return out;
  }
}
