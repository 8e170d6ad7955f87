package io.sluice.sidecar;

/**
 * The common check, {@code {"key":"user-1","limit":"api","cost":2}}, read straight from the body's
 * bytes: no parser object, no field-name strings, no tree; the key is the one string allocated (a
 * limit's name is the configured instance). It reads only what it can read exactly like
 * {@link CheckRequest}'s strict parser and would accept: a flat object of {@code key}, {@code limit}
 * and {@code cost}, each at most once, strings of printable ASCII without escapes, a cost written as
 * a plain positive integer, JSON whitespace. For anything else (escapes, other bytes, another field,
 * a duplicate, a value the strict parser refuses, a request for the rules, malformed JSON) it answers
 * null and the strict parser reads the body, so that every refusal keeps its message.
 */
final class FlatCheckReader {
  /** Costs of up to 18 digits: they fit a long without checking for overflow. */
  private static final int MAX_COST_DIGITS = 18;

  private final byte[][] names;
  private final String[] limits;
  private final int maxKeyLength;

  /**
   * @param limits the configured limits' names: a body naming one gets that very string
   * @param maxKeyLength the longest key accepted, in characters
   */
  FlatCheckReader(Iterable<String> limits, int maxKeyLength) {
    java.util.List<String> list = new java.util.ArrayList<>();
    limits.forEach(list::add);
    this.limits = list.toArray(new String[0]);
    this.names = new byte[this.limits.length][];
    for (int i = 0; i < this.limits.length; i++) {
      this.names[i] = this.limits[i].getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
    this.maxKeyLength = maxKeyLength;
  }

  /** The check in {@code body[0, length)}, or null when the strict parser must read it. */
  CheckRequest read(byte[] body, int length) {
    String key = null;
    String limit = null;
    long cost = 1;
    boolean sawCost = false;
    int i = skipSpace(body, 0, length);
    if (i == length || body[i] != '{') {
      return null;
    }
    i = skipSpace(body, i + 1, length);
    if (i < length && body[i] == '}') {
      return null; // {}: "key: required", the strict parser's to say
    }
    while (true) {
      // a field name: one of three, each at most once
      if (i == length || body[i] != '"') {
        return null;
      }
      int field = fieldName(body, i + 1, length);
      if (field < 0) {
        return null;
      }
      i = skipSpace(body, i + 1 + FIELD_LENGTHS[field] + 1, length);
      if (i == length || body[i] != ':') {
        return null;
      }
      i = skipSpace(body, i + 1, length);
      if (field == COST) {
        if (sawCost) {
          return null;
        }
        int start = i;
        if (i == length || body[i] < '1' || body[i] > '9') {
          return null; // 0, a sign, a leading zero, not a number: the strict parser's message
        }
        long value = 0;
        while (i < length && body[i] >= '0' && body[i] <= '9') {
          value = value * 10 + (body[i] - '0');
          i++;
        }
        if (i - start > MAX_COST_DIGITS || (i < length && (body[i] == '.' || body[i] == 'e' || body[i] == 'E'))) {
          return null;
        }
        cost = value;
        sawCost = true;
      } else {
        if (i == length || body[i] != '"') {
          return null;
        }
        int start = i + 1;
        int end = plainStringEnd(body, start, length);
        if (end < 0) {
          return null;
        }
        if (field == KEY) {
          if (key != null || end == start || end - start > maxKeyLength) {
            return null;
          }
          key = new String(body, start, end - start, java.nio.charset.StandardCharsets.ISO_8859_1);
        } else {
          if (limit != null) {
            return null;
          }
          limit = limitName(body, start, end);
        }
        i = end + 1;
      }
      i = skipSpace(body, i, length);
      if (i == length) {
        return null;
      }
      if (body[i] == '}') {
        break;
      }
      if (body[i] != ',') {
        return null;
      }
      i = skipSpace(body, i + 1, length);
    }
    if (skipSpace(body, i + 1, length) != length || key == null) {
      return null;
    }
    return CheckRequest.forLimit(key, cost, limit);
  }

  private static final int KEY = 0;
  private static final int LIMIT = 1;
  private static final int COST = 2;
  private static final byte[][] FIELDS = {{'k', 'e', 'y'}, {'l', 'i', 'm', 'i', 't'}, {'c', 'o', 's', 't'}};
  private static final int[] FIELD_LENGTHS = {3, 5, 4};

  /** Which field's name starts at {@code at} (after its quote) and is closed there, or -1. */
  private static int fieldName(byte[] b, int at, int length) {
    for (int f = 0; f < FIELDS.length; f++) {
      byte[] name = FIELDS[f];
      if (at + name.length < length && b[at + name.length] == '"' && regionEquals(b, at, name)) {
        return f;
      }
    }
    return -1;
  }

  /** The configured name spelt by {@code b[start, end)}, or a new string when it is none of them. */
  private String limitName(byte[] b, int start, int end) {
    for (int n = 0; n < names.length; n++) {
      if (names[n].length == end - start && regionEquals(b, start, names[n])) {
        return limits[n];
      }
    }
    return new String(b, start, end - start, java.nio.charset.StandardCharsets.ISO_8859_1);
  }

  private static boolean regionEquals(byte[] b, int at, byte[] expected) {
    for (int k = 0; k < expected.length; k++) {
      if (b[at + k] != expected[k]) {
        return false;
      }
    }
    return true;
  }

  /**
   * The index of the quote that closes a string starting at {@code at}, or -1 when the string is not
   * plain: an escape, a control character or a byte outside ASCII (JSON's and UTF-8's rules for those
   * are the strict parser's), or no closing quote.
   */
  private static int plainStringEnd(byte[] b, int at, int length) {
    for (int i = at; i < length; i++) {
      byte c = b[i];
      if (c == '"') {
        return i;
      }
      if (c == '\\' || c < 0x20 || c == 0x7f) { // (bytes above 0x7f are negative)
        return -1;
      }
    }
    return -1;
  }

  private static int skipSpace(byte[] b, int i, int length) {
    while (i < length && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')) {
      i++;
    }
    return i;
  }
}
