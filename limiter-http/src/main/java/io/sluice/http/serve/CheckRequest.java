package io.sluice.http.serve;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import java.io.IOException;

/** The body of {@code POST /check}: {@code {"key": "...", "cost": 1, "limit": "api"}}, read strictly. */
final class CheckRequest {
  private static final JsonFactory JSON = JsonFactory.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .build();

  final String key;
  /** 1 when the body names no cost. */
  final long cost;
  /** Null when the body names no limit. */
  final String limit;

  private CheckRequest(String key, long cost, String limit) {
    this.key = key;
    this.cost = cost;
    this.limit = limit;
  }

  /**
   * Reads a body; a bad one throws a {@link BadRequest} naming the field. Unknown fields are errors
   * too, so that a misspelt {@code "kye"} is not silently a request without a key.
   */
  static CheckRequest parse(byte[] body, int maxKeyLength) {
    if (body.length == 0) {
      throw new BadRequest(400, null, "body: empty; expected a JSON object like {\"key\":\"user-1\",\"cost\":1,\"limit\":\"api\"}");
    }
    String key = null;
    long cost = 1;
    boolean sawCost = false;
    String limit = null;
    try (JsonParser p = JSON.createParser(body)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new BadRequest(400, null, "body: must be a JSON object like {\"key\":\"user-1\",\"cost\":1,\"limit\":\"api\"}");
      }
      JsonToken t;
      while ((t = p.nextToken()) != JsonToken.END_OBJECT) {
        if (t != JsonToken.FIELD_NAME) {
          throw new BadRequest(400, null, "body: malformed JSON object");
        }
        String field = p.currentName();
        JsonToken value = p.nextToken();
        switch (field) {
          case "key":
            if (value != JsonToken.VALUE_STRING) {
              throw new BadRequest(400, "key", "key: must be a string, got " + describe(value));
            }
            key = p.getText();
            break;
          case "cost":
            if (value != JsonToken.VALUE_NUMBER_INT) {
              throw new BadRequest(400, "cost", "cost: must be a positive integer, got " + describe(value));
            }
            try {
              cost = p.getLongValue();
            } catch (InputCoercionException e) {
              throw new BadRequest(400, "cost", "cost: out of range");
            }
            sawCost = true;
            break;
          case "limit":
            if (value != JsonToken.VALUE_STRING) {
              throw new BadRequest(400, "limit", "limit: must be a string, got " + describe(value));
            }
            limit = p.getText();
            break;
          default:
            throw new BadRequest(400, field, "body: unknown field \"" + field + "\" (expected key, cost, limit)");
        }
      }
      if (p.nextToken() != null) {
        throw new BadRequest(400, null, "body: unexpected content after the JSON object");
      }
    } catch (JsonProcessingException e) {
      throw new BadRequest(400, null, "body: malformed JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new BadRequest(400, null, "body: unreadable: " + e.getMessage());
    }
    if (key == null) {
      throw new BadRequest(400, "key", "key: required");
    }
    if (key.isEmpty()) {
      throw new BadRequest(400, "key", "key: must not be empty");
    }
    if (key.length() > maxKeyLength) {
      throw new BadRequest(400, "key", "key: longer than " + maxKeyLength + " characters");
    }
    int lone = loneSurrogate(key);
    if (lone >= 0) {
      // JSON lets "\ud800" through; such a key has no UTF-8 form, and keys that differ only there
      // would be told apart by the store's encoding rules rather than by what the client meant
      throw new BadRequest(400, "key", "key: not valid Unicode (a lone surrogate \\u"
          + Integer.toHexString(key.charAt(lone)) + " at character " + lone + ")");
    }
    if (sawCost && cost < 1) {
      throw new BadRequest(400, "cost", "cost: must be at least 1, got " + cost);
    }
    return new CheckRequest(key, cost, limit);
  }

  /** The index of the first surrogate without its pair in {@code s}, or -1. */
  static int loneSurrogate(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return i;
      }
    }
    return -1;
  }

  private static String describe(JsonToken t) {
    if (t == null) {
      return "nothing";
    }
    switch (t) {
      case START_OBJECT:
        return "an object";
      case START_ARRAY:
        return "an array";
      case VALUE_STRING:
        return "a string";
      case VALUE_NUMBER_INT:
        return "an integer";
      case VALUE_NUMBER_FLOAT:
        return "a decimal number";
      case VALUE_TRUE:
      case VALUE_FALSE:
        return "a boolean";
      case VALUE_NULL:
        return "null";
      default:
        return t.asString() == null ? t.name() : t.asString();
    }
  }

  /** A request the sidecar refuses: the status, the field at fault (or null) and why. */
  static final class BadRequest extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final int status;
    final String field;

    BadRequest(int status, String field, String message) {
      super(message, null, false, false); // a client's mistake: no stack trace to fill
      this.status = status;
      this.field = field;
    }
  }
}
