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
    int i = firstField(body, length);
    if (i < 0) {
      return null;
    }
    while (true) {
      // a field name: one of three, each at most once
      int field = i < length && body[i] == '"' ? fieldName(body, i + 1, length) : -1;
      int at = field < 0 ? -1 : valueStart(body, i + 1 + FIELD_LENGTHS[field] + 1, length);
      if (at < 0) {
        return null;
      }
      if (field == COST) {
        i = costEnd(body, at, length);
        if (sawCost || i < 0) {
          return null;
        }
        cost = digits(body, at, i);
        sawCost = true;
      } else {
        int end = stringEnd(body, at, length);
        if (end < 0) {
          return null;
        }
        if (field == KEY) {
          if (key != null || end == at + 1 || end - at - 1 > maxKeyLength) {
            return null;
          }
          key = new String(body, at + 1, end - at - 1, java.nio.charset.StandardCharsets.ISO_8859_1);
        } else {
          if (limit != null) {
            return null;
          }
          limit = limitName(body, at + 1, end);
        }
        i = end + 1;
      }
      i = skipSpace(body, i, length);
      if (i == length || body[i] != ',') {
        break;
      }
      i = skipSpace(body, i + 1, length);
    }
    if (!closesAt(body, i, length) || key == null) {
      return null;
    }
    return CheckRequest.forLimit(key, cost, limit);
  }

  /** Where the first field's name should start, after the object's brace; -1 for no object or {@code {}}. */
  private static int firstField(byte[] b, int length) {
    int i = skipSpace(b, 0, length);
    if (i == length || b[i] != '{') {
      return -1;
    }
    i = skipSpace(b, i + 1, length);
    if (i < length && b[i] == '}') {
      return -1; // {}: "key: required", the strict parser's to say
    }
    return i;
  }

  /** Where the value starts after the colon expected at {@code i} (after whitespace), or -1 without one. */
  private static int valueStart(byte[] b, int i, int length) {
    i = skipSpace(b, i, length);
    if (i == length || b[i] != ':') {
      return -1;
    }
    return skipSpace(b, i + 1, length);
  }

  /**
   * The end of a cost starting at {@code at}, or -1 when it is not a plain positive integer of at most
   * {@link #MAX_COST_DIGITS} digits.
   */
  private static int costEnd(byte[] b, int at, int length) {
    if (at == length || b[at] < '1' || b[at] > '9') {
      return -1; // 0, a sign, a leading zero, not a number: the strict parser's message
    }
    int i = at;
    while (i < length && b[i] >= '0' && b[i] <= '9') {
      i++;
    }
    if (i - at > MAX_COST_DIGITS || (i < length && (b[i] == '.' || b[i] == 'e' || b[i] == 'E'))) {
      return -1;
    }
    return i;
  }

  /** The number the digits {@code b[start, end)} spell (at most {@link #MAX_COST_DIGITS} of them). */
  private static long digits(byte[] b, int start, int end) {
    long value = 0;
    for (int i = start; i < end; i++) {
      value = value * 10 + (b[i] - '0');
    }
    return value;
  }

  /** The index of the quote that closes a plain string opened by a quote at {@code at}, or -1. */
  private static int stringEnd(byte[] b, int at, int length) {
    return at < length && b[at] == '"' ? plainStringEnd(b, at + 1, length) : -1;
  }

  /** Whether the object closes at {@code i} with nothing but whitespace after it. */
  private static boolean closesAt(byte[] b, int i, int length) {
    return i < length && b[i] == '}' && skipSpace(b, i + 1, length) == length;
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
