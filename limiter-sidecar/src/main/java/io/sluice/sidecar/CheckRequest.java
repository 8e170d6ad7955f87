package io.sluice.sidecar;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import io.sluice.node.RequestContext;
import java.io.IOException;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The body of {@code POST /check}, read strictly: one limit and a key, {@code {"key": "...", "cost": 1,
 * "limit": "api"}}; or a request for the rules, {@code {"identities": {"ip": "...", "api-key": "..."},
 * "plan": "pro", "method": "POST", "path": "/login", "cost": 1}} (any of those four fields makes it one).
 * The handler reads the common check with {@link FlatCheckReader} first, which leaves to this strict
 * parser every body it cannot read exactly as this one would: the strict parser is the definition,
 * and every refusal's message is its own.
 */
final class CheckRequest {
  private static final JsonFactory JSON = JsonFactory.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .build();

  final String key;
  /** 1 when the body names no cost. */
  final long cost;
  /** Null when the body names no limit. */
  final String limit;

  /** A request for the rules (identities, plan, method or path given); else one limit's key. */
  final boolean forRules;
  /** Null when not given (the rules' default plan). */
  final String plan;
  /** GET and / when not given. */
  final String method;
  final String path;
  /** Dimension, value: never null, may be empty. */
  final Map<String, String> identities;

  private CheckRequest(String key, long cost, String limit, boolean forRules, String plan, String method, String path,
      Map<String, String> identities) {
    this.key = key;
    this.cost = cost;
    this.limit = limit;
    this.forRules = forRules;
    this.plan = plan;
    this.method = method;
    this.path = path;
    this.identities = identities;
  }

  /** A check of one limit (or the only one, {@code limit} null) that the caller has checked already. */
  static CheckRequest forLimit(String key, long cost, String limit) {
    return new CheckRequest(key, cost, limit, false, null, null, null, Map.of());
  }

  /** The request as the rules see it. */
  RequestContext context() {
    RequestContext.Builder b = RequestContext.builder().plan(plan).endpoint(method, path);
    identities.forEach(b::identity);
    return b.build();
  }

  /**
   * Reads a body; a bad one throws a {@link BadRequest} naming the field. Unknown fields are errors
   * too, so that a misspelt {@code "kye"} is not silently a request without a key.
   */
  static CheckRequest parse(byte[] body, int maxKeyLength) {
    return parse(body, body.length, maxKeyLength);
  }

  /** {@link #parse(byte[], int)} of the first {@code length} bytes of {@code body}. */
  static CheckRequest parse(byte[] body, int length, int maxKeyLength) {
    if (length == 0) {
      throw new BadRequest(400, null, "body: empty; expected a JSON object like {\"key\":\"user-1\",\"cost\":1,\"limit\":\"api\"}");
    }
    Fields f = new Fields();
    try (JsonParser p = JSON.createParser(body, 0, length)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new BadRequest(400, null, "body: must be a JSON object like {\"key\":\"user-1\",\"cost\":1,\"limit\":\"api\"}");
      }
      JsonToken t;
      while ((t = p.nextToken()) != JsonToken.END_OBJECT) {
        if (t != JsonToken.FIELD_NAME) {
          throw new BadRequest(400, null, "body: malformed JSON object");
        }
        String field = p.currentName();
        f.read(p, field, p.nextToken(), maxKeyLength);
      }
      if (p.nextToken() != null) {
        throw new BadRequest(400, null, "body: unexpected content after the JSON object");
      }
    } catch (JsonProcessingException e) {
      throw new BadRequest(400, null, "body: malformed JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new BadRequest(400, null, "body: unreadable: " + e.getMessage());
    }
    return f.request(maxKeyLength);
  }

  /** A body's fields as read, before they are checked together. */
  private static final class Fields {
    String key;
    long cost = 1;
    boolean sawCost;
    String limit;
    String plan;
    String method;
    String path;
    Map<String, String> identities;

    /** Reads one field's value ({@code value}: its first token), each checked on its own. */
    void read(JsonParser p, String field, JsonToken value, int maxKeyLength) throws IOException {
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
        case "plan":
          plan = text(p, value, "plan", maxKeyLength);
          break;
        case "method":
          method = text(p, value, "method", 16);
          if (!method.matches("[A-Za-z]+")) {
            throw new BadRequest(400, "method", "method: must be an HTTP method, got \"" + method + "\"");
          }
          break;
        case "path":
          path = text(p, value, "path", 2048);
          if (!path.startsWith("/")) {
            throw new BadRequest(400, "path", "path: must start with '/', got \"" + path + "\"");
          }
          break;
        case "identities":
          identities = identities(p, value, maxKeyLength);
          break;
        default:
          throw new BadRequest(400, field, "body: unknown field \"" + field + "\" (expected key, cost, limit;"
              + " or identities, plan, method, path, cost)");
      }
    }

    /** The request the fields make together: for the rules, or for one limit and key. */
    CheckRequest request(int maxKeyLength) {
      if (sawCost && cost < 1) {
        throw new BadRequest(400, "cost", "cost: must be at least 1, got " + cost);
      }
      boolean forRules = plan != null || method != null || path != null || identities != null;
      if (forRules) {
        if (key != null || limit != null) {
          throw new BadRequest(400, key != null ? "key" : "limit", (key != null ? "key" : "limit")
              + ": a check is for one limit (key, limit) or for the rules (identities, plan, method, path), not both");
        }
        return new CheckRequest(null, cost, null, true, plan, method == null ? "GET" : method.toUpperCase(Locale.ROOT),
            path == null ? "/" : path, identities == null ? Map.of() : identities);
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
      return forLimit(key, cost, limit);
    }
  }

  /** A string field, at most {@code maxLength} characters of valid Unicode. */
  private static String text(JsonParser p, JsonToken value, String field, int maxLength) throws IOException {
    if (value != JsonToken.VALUE_STRING) {
      throw new BadRequest(400, field, field + ": must be a string, got " + describe(value));
    }
    String s = p.getText();
    if (s.length() > maxLength) {
      throw new BadRequest(400, field, field + ": longer than " + maxLength + " characters");
    }
    int lone = loneSurrogate(s);
    if (lone >= 0) {
      throw new BadRequest(400, field, field + ": not valid Unicode (a lone surrogate at character " + lone + ")");
    }
    return s;
  }

  /** {@code {"ip": "...", ...}}: at most 16 dimensions, each value a key of at most {@code maxKeyLength}. */
  private static Map<String, String> identities(JsonParser p, JsonToken value, int maxKeyLength) throws IOException {
    if (value != JsonToken.START_OBJECT) {
      throw new BadRequest(400, "identities", "identities: must be an object of strings like {\"ip\":\"10.0.0.7\"},"
          + " got " + describe(value));
    }
    Map<String, String> out = new HashMap<>();
    while (p.nextToken() != JsonToken.END_OBJECT) {
      String dimension = p.currentName();
      JsonToken v = p.nextToken();
      if (out.size() == 16) {
        throw new BadRequest(400, "identities", "identities: at most 16");
      }
      if (dimension.isEmpty() || dimension.length() > 64) {
        throw new BadRequest(400, "identities", "identities: a dimension's name must be 1 to 64 characters");
      }
      out.put(dimension, text(p, v, "identities." + dimension, maxKeyLength));
    }
    return out;
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
