package io.sluice.node;

import java.util.ArrayList;
import java.util.List;

/**
 * A path pattern of segments: a literal, {@code *} or {@code {name}} for exactly one segment, and
 * {@code **} for any number of segments (zero included). {@code /api/{id}/items/**}.
 */
final class PathPattern {
  private final String text;
  private final String[] segments;

  private PathPattern(String text, String[] segments) {
    this.text = text;
    this.segments = segments;
  }

  static PathPattern parse(String pattern) {
    if (pattern == null || !pattern.startsWith("/")) {
      throw new IllegalArgumentException("pathPattern: must start with '/', got " + pattern);
    }
    String[] parts = split(pattern);
    for (String part : parts) {
      if (part.contains("**") && !part.equals("**")) {
        throw new IllegalArgumentException("pathPattern: '**' must be a whole segment, got " + pattern);
      }
      if (part.startsWith("{") != part.endsWith("}")) {
        throw new IllegalArgumentException("pathPattern: unbalanced braces in segment '" + part + "' of " + pattern);
      }
    }
    return new PathPattern(pattern, parts);
  }

  private static String[] split(String path) {
    List<String> out = new ArrayList<>();
    for (String s : path.split("/")) {
      if (!s.isEmpty()) {
        out.add(s);
      }
    }
    return out.toArray(new String[0]);
  }

  boolean matches(String path) {
    return path != null && match(0, split(path), 0);
  }

  private boolean match(int p, String[] path, int i) {
    if (p == segments.length) {
      return i == path.length;
    }
    String seg = segments[p];
    if (seg.equals("**")) {
      for (int k = i; k <= path.length; k++) {
        if (match(p + 1, path, k)) {
          return true;
        }
      }
      return false;
    }
    if (i == path.length) {
      return false;
    }
    boolean one = seg.equals("*") || (seg.startsWith("{") && seg.endsWith("}")) || seg.equals(path[i]);
    return one && match(p + 1, path, i + 1);
  }

  @Override
  public String toString() {
    return text;
  }
}
