package io.sluice.node;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small parser of RFC 8941 lists whose members are items (no inner lists) with parameters, enough
 * to check our fields by meaning rather than by string comparison. Strict: anything else throws.
 */
final class StructuredFields {
  static final class Item {
    final Object value;
    final Map<String, Object> params;

    Item(Object value, Map<String, Object> params) {
      this.value = value;
      this.params = params;
    }
  }

  private final String s;
  private int i;

  private StructuredFields(String s) {
    this.s = s;
  }

  static List<Item> parseList(String field) {
    StructuredFields p = new StructuredFields(field);
    List<Item> items = new ArrayList<>();
    p.skipSpaces();
    while (p.i < p.s.length()) {
      items.add(p.item());
      p.skipOws();
      if (p.i == p.s.length()) {
        break;
      }
      p.expect(',');
      p.skipOws();
      if (p.i == p.s.length()) {
        throw new IllegalArgumentException("trailing comma in " + field);
      }
    }
    return items;
  }

  private Item item() {
    Object value = bareItem();
    Map<String, Object> params = new LinkedHashMap<>();
    while (i < s.length() && s.charAt(i) == ';') {
      i++;
      skipSpaces();
      String key = key();
      Object v = Boolean.TRUE;
      if (i < s.length() && s.charAt(i) == '=') {
        i++;
        v = bareItem();
      }
      params.put(key, v);
    }
    return new Item(value, params);
  }

  private Object bareItem() {
    char c = s.charAt(i);
    if (c == '"') {
      StringBuilder sb = new StringBuilder();
      i++;
      while (true) {
        char d = s.charAt(i++);
        if (d == '\\') {
          sb.append(s.charAt(i++));
        } else if (d == '"') {
          return sb.toString();
        } else if (d < 0x20 || d > 0x7e) {
          throw new IllegalArgumentException("invalid character in string: " + s);
        } else {
          sb.append(d);
        }
      }
    }
    if (c == '-' || Character.isDigit(c)) {
      int start = i;
      if (c == '-') {
        i++;
      }
      while (i < s.length() && Character.isDigit(s.charAt(i))) {
        i++;
      }
      if (i < s.length() && s.charAt(i) == '.') {
        throw new IllegalArgumentException("decimals not expected: " + s);
      }
      String digits = s.substring(start, i);
      if (digits.replace("-", "").isEmpty() || digits.replace("-", "").length() > 15) {
        throw new IllegalArgumentException("integer out of range: " + s);
      }
      return Long.parseLong(digits);
    }
    if (Character.isLetter(c) || c == '*') {
      int start = i;
      while (i < s.length() && "!#$%&'*+-.^_`|~:/".indexOf(s.charAt(i)) >= 0 || i < s.length() && Character.isLetterOrDigit(s.charAt(i))) {
        i++;
      }
      return s.substring(start, i);
    }
    throw new IllegalArgumentException("unexpected '" + c + "' at " + i + " in " + s);
  }

  private String key() {
    int start = i;
    char c = s.charAt(i);
    if (!(Character.isLowerCase(c) || c == '*')) {
      throw new IllegalArgumentException("bad key at " + i + " in " + s);
    }
    while (i < s.length() && (Character.isLowerCase(s.charAt(i)) || Character.isDigit(s.charAt(i))
        || "_-.*".indexOf(s.charAt(i)) >= 0)) {
      i++;
    }
    return s.substring(start, i);
  }

  private void expect(char c) {
    if (i >= s.length() || s.charAt(i) != c) {
      throw new IllegalArgumentException("expected '" + c + "' at " + i + " in " + s);
    }
    i++;
  }

  private void skipSpaces() {
    while (i < s.length() && s.charAt(i) == ' ') {
      i++;
    }
  }

  private void skipOws() {
    while (i < s.length() && (s.charAt(i) == ' ' || s.charAt(i) == '\t')) {
      i++;
    }
  }
}
