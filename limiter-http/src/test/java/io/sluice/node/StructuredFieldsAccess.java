package io.sluice.node;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Test-only bridge to limiter-node's package-private RFC 8941 parser {@link StructuredFields}
 * (shipped in its test-jar), so that the HTTP tests read header fields by meaning with the same parser.
 */
public final class StructuredFieldsAccess {
  private StructuredFieldsAccess() {
  }

  /** One list member: its bare item and parameters. */
  public static final class Member {
    public final Object value;
    public final Map<String, Object> params;

    Member(Object value, Map<String, Object> params) {
      this.value = value;
      this.params = Map.copyOf(params);
    }

    @Override
    public String toString() {
      return value + ";" + params;
    }
  }

  /** Parses a list of items with parameters; throws on anything RFC 8941 does not allow there. */
  public static List<Member> parseList(String field) {
    List<Member> out = new ArrayList<>();
    for (StructuredFields.Item i : StructuredFields.parseList(field)) {
      out.add(new Member(i.value, i.params));
    }
    return out;
  }
}
