package io.sluice.sidecar;

import io.sluice.node.Decision;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A check's answer, {@code {"allowed":true,"outcome":"allowed","limit":"api","remaining":999,
 * "resetSeconds":60,"retryAfterSeconds":0}} (and {@code "limits":[...]} for the rules), written
 * straight into bytes: no generator, no tree. The one allocation is the answer's own array; the
 * writing happens in a buffer of the thread's that is used again (the answer may still be in flight
 * when the thread answers the next request, so the answer itself cannot be that buffer).
 */
final class DecisionJson {
  private static final ThreadLocal<DecisionJson> SCRATCH = ThreadLocal.withInitial(DecisionJson::new);
  private static final byte[] HEX = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);

  private byte[] buffer = new byte[256];
  private int size;

  private DecisionJson() {
  }

  /** The answer to a check of {@code d}; with its {@code parts} as {@code limits} for the rules. */
  static byte[] of(Decision d, boolean withParts) {
    DecisionJson out = SCRATCH.get();
    out.size = 0;
    out.raw("{");
    out.decision(d);
    out.raw(",\"retryAfterSeconds\":").number(d.allowed() ? 0 : Math.max(1, d.retryAfterSeconds()));
    if (withParts) {
      out.raw(",\"limits\":[");
      boolean first = true;
      for (Decision part : d.parts()) {
        out.raw(first ? "{" : ",{");
        out.decision(part);
        out.raw("}");
        first = false;
      }
      out.raw("]");
    }
    out.raw("}");
    return Arrays.copyOf(out.buffer, out.size);
  }

  /** {@code s} as a JSON string, as an answer writes its strings (for the tests, which hold it to Jackson's). */
  static byte[] quoted(String s) {
    DecisionJson out = new DecisionJson();
    out.string(s);
    return Arrays.copyOf(out.buffer, out.size);
  }

  private void decision(Decision d) {
    raw("\"allowed\":").raw(d.allowed() ? "true" : "false");
    raw(",\"outcome\":").string(d.outcome().tag());
    raw(",\"limit\":").string(d.limit().name());
    raw(",\"remaining\":").number(d.remaining());
    raw(",\"resetSeconds\":").number(d.resetSeconds());
  }

  /** ASCII text as it is (the JSON punctuation and field names of this class). */
  private DecisionJson raw(String ascii) {
    ensure(ascii.length());
    for (int i = 0; i < ascii.length(); i++) {
      buffer[size++] = (byte) ascii.charAt(i);
    }
    return this;
  }

  private DecisionJson number(long value) {
    if (value == Long.MIN_VALUE) {
      return raw(Long.toString(value)); // (no negation for this one)
    }
    ensure(20);
    if (value < 0) {
      buffer[size++] = '-';
      value = -value;
    }
    int digits = 1;
    for (long v = value; v >= 10; v /= 10) {
      digits++;
    }
    for (int i = size + digits - 1; i >= size; i--) {
      buffer[i] = (byte) ('0' + value % 10);
      value /= 10;
    }
    size += digits;
    return this;
  }

  /**
   * A JSON string as Jackson's generator writes one: quote and backslash escaped, control characters
   * as short escapes (backslash and n) or six-character hex escapes, surrogates (the halves of
   * characters beyond the BMP) as hex escapes too, everything else as UTF-8.
   */
  private DecisionJson string(String s) {
    ensure(s.length() * 6 + 2); // the longest escape is six bytes; a character's UTF-8 at most three
    buffer[size++] = '"';
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        escaped(c);
      } else if (Character.isSurrogate(c)) {
        hexEscape(c);
      } else if (c < 0x800) {
        buffer[size++] = (byte) (0xc0 | (c >> 6));
        buffer[size++] = (byte) (0x80 | (c & 0x3f));
      } else {
        buffer[size++] = (byte) (0xe0 | (c >> 12));
        buffer[size++] = (byte) (0x80 | ((c >> 6) & 0x3f));
        buffer[size++] = (byte) (0x80 | (c & 0x3f));
      }
    }
    buffer[size++] = '"';
    return this;
  }

  private void hexEscape(char c) {
    buffer[size++] = '\\';
    buffer[size++] = 'u';
    buffer[size++] = HEX[c >> 12];
    buffer[size++] = HEX[(c >> 8) & 0xf];
    buffer[size++] = HEX[(c >> 4) & 0xf];
    buffer[size++] = HEX[c & 0xf];
  }

  private void escaped(char c) {
    switch (c) {
      case '"':
      case '\\':
        buffer[size++] = '\\';
        buffer[size++] = (byte) c;
        break;
      case '\n':
        buffer[size++] = '\\';
        buffer[size++] = 'n';
        break;
      case '\r':
        buffer[size++] = '\\';
        buffer[size++] = 'r';
        break;
      case '\t':
        buffer[size++] = '\\';
        buffer[size++] = 't';
        break;
      case '\b':
        buffer[size++] = '\\';
        buffer[size++] = 'b';
        break;
      case '\f':
        buffer[size++] = '\\';
        buffer[size++] = 'f';
        break;
      default:
        if (c < 0x20) {
          hexEscape(c);
        } else {
          buffer[size++] = (byte) c;
        }
    }
  }

  private void ensure(int more) {
    if (size + more > buffer.length) {
      buffer = Arrays.copyOf(buffer, Math.max(size + more, 2 * buffer.length));
    }
  }
}
