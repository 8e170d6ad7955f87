package io.sluice.envoy;

import io.sluice.node.Durations;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.snakeyaml.engine.v2.common.ScalarStyle;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/**
 * The quota service's (RLQS) configuration: which bucket ids get which limit, per domain, in one
 * YAML file whose {@code rate_limit} blocks are those of envoyproxy/ratelimit's files:
 *
 * <pre>{@code
 * assignment_period: 5s      # optional (5s): how long one share is leased for, and the longest TTL
 * abandon_after: 60s         # optional (60s): a bucket without requests this long is abandoned
 * domains:
 *   - domain: edge
 *     buckets:
 *       - bucket_id: {name: api, tenant: "*"}     # every key here in the id, with this value ("*": any)
 *         rate_limit: {unit: minute, requests_per_unit: 600}
 *         strategy: token_bucket                   # optional: token_bucket (default) or requests_per_time_unit
 *       - bucket_id: {name: health}
 *         rate_limit: {unlimited: true}
 *     default:                                     # optional: a bucket no rule matches
 *       rate_limit: {unit: second, requests_per_unit: 10}
 * }</pre>
 *
 * <p>A bucket id takes the first rule, in file order, whose every key is in the id with that value
 * (or any value for {@code "*"}); keys of the id the rule does not name do not matter. Each distinct
 * bucket id has a budget of its own. Without a rule or a default, a bucket is not limited
 * ({@code allow_all}, as RLS answers a descriptor without a limit).
 *
 * <p>Immutable. Errors are raised while loading, as an {@link IllegalArgumentException} whose message
 * starts with the file and line, then the field's path: {@code rlqs.yaml:7:
 * domains[0].buckets[0].rate_limit.unit: must be second, minute, hour or day, got "weekly"}.
 */
public final class RlqsConfig {
  public static final Duration DEFAULT_PERIOD = Duration.ofSeconds(5);
  public static final Duration DEFAULT_ABANDON_AFTER = Duration.ofSeconds(60);
  /** The shortest period: every stream's shares are leased again once a period. */
  static final Duration MIN_PERIOD = Duration.ofMillis(200);
  static final Duration MAX_PERIOD = Duration.ofHours(1);

  private static final Set<String> ROOT_FIELDS = Set.of("assignment_period", "abandon_after", "domains");
  private static final Set<String> DOMAIN_FIELDS = Set.of("domain", "buckets", "default");
  private static final Set<String> RULE_FIELDS = Set.of("bucket_id", "rate_limit", "strategy");
  private static final Set<String> DEFAULT_FIELDS = Set.of("rate_limit", "strategy");
  private static final Set<String> RATE_LIMIT_FIELDS = Set.of("unit", "requests_per_unit", "unlimited");

  /**
   * How Envoy is told to enforce a share. Envoy's {@code rate_limit_quota} filter enforces
   * {@code token_bucket} and the blanket rules; it logs {@code requests_per_time_unit} as not yet
   * supported and lets such a bucket's requests through, hence the default.
   */
  public enum Strategy {
    /** {@code token_bucket} (the default): {@code max_tokens} and {@code tokens_per_fill} the share, {@code fill_interval} the unit. */
    TOKEN_BUCKET,
    /** {@code requests_per_time_unit}: the share per the limit's unit, the algorithm left to the client. */
    REQUESTS_PER_TIME_UNIT
  }

  /**
   * One rule: the bucket id's keys and values it needs ({@code "*"}: any value), its limit and how
   * Envoy enforces a share of it.
   */
  public record Rule(Map<String, String> bucketId, RlsLimit limit, Strategy strategy) {
    public Rule {
      bucketId = Collections.unmodifiableMap(new TreeMap<>(bucketId));
    }

    boolean matches(Map<String, String> id) {
      for (Map.Entry<String, String> e : bucketId.entrySet()) {
        String v = id.get(e.getKey());
        if (v == null || !(e.getValue().equals("*") || e.getValue().equals(v))) {
          return false;
        }
      }
      return true;
    }
  }

  /** One domain's rules in file order and its default (null: none). */
  record Domain(List<Rule> rules, Rule fallback) {
  }

  private final Duration period;
  private final Duration abandonAfter;
  private final Map<String, Domain> domains;

  private RlqsConfig(Duration period, Duration abandonAfter, Map<String, Domain> domains) {
    this.period = period;
    this.abandonAfter = abandonAfter;
    this.domains = Collections.unmodifiableMap(domains);
  }

  /** How long a share is leased for: assignments are renewed once a period and live to its end. */
  public Duration period() {
    return period;
  }

  /** How long a bucket may report no requests before the server abandons it. */
  public Duration abandonAfter() {
    return abandonAfter;
  }

  public Set<String> domains() {
    return domains.keySet();
  }

  public boolean hasDomain(String domain) {
    return domains.containsKey(domain);
  }

  /**
   * The rule a bucket id falls under in a configured domain: the first that matches, else the
   * domain's default, else null (not limited).
   */
  public Rule match(String domain, Map<String, String> bucketId) {
    Domain d = domains.get(domain);
    if (d == null) {
      return null;
    }
    for (Rule r : d.rules) {
      if (r.matches(bucketId)) {
        return r;
      }
    }
    return d.fallback;
  }

  /** Reads and parses a file. */
  public static RlqsConfig load(Path file) {
    return parse(read(List.of(file)));
  }

  /** The text of the file ({@code files} holds one), by its name, as {@link ConfigWatcher} reads it. */
  static Map<String, String> read(List<Path> files) {
    Path file = files.get(0);
    try {
      return Map.of(file.toString(), Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IllegalArgumentException(file + ": cannot read the file: " + e, e);
    }
  }

  /** The configuration of the one file {@link #read} gave. */
  static RlqsConfig parse(Map<String, String> texts) {
    Map.Entry<String, String> file = texts.entrySet().iterator().next();
    return parse(file.getKey(), file.getValue());
  }

  /** What the log says of a configuration loaded. */
  @Override
  public String toString() {
    return "domains " + domains() + ", period " + Durations.format(period) + ", abandon after "
        + Durations.format(abandonAfter);
  }

  /** One file's text ({@code name} is what messages call it). */
  public static RlqsConfig parse(String name, String yaml) {
    return new Parser(name).parse(yaml);
  }

  /** Reads one file, remembering where each node was for the messages. */
  private static final class Parser {
    private final String file;

    Parser(String file) {
      this.file = file;
    }

    RlqsConfig parse(String text) {
      Node doc = YamlDocuments.compose(file, text);
      if (doc == null) {
        throw new IllegalArgumentException(file + ":1: domains: required (the file is empty)");
      }
      Map<String, NodeTuple> f = mapping(doc, "", ROOT_FIELDS);
      Duration period = f.containsKey("assignment_period")
          ? duration(f.get("assignment_period").getValueNode(), "assignment_period") : DEFAULT_PERIOD;
      if (period.compareTo(MIN_PERIOD) < 0 || period.compareTo(MAX_PERIOD) > 0) {
        throw error(f.get("assignment_period").getValueNode(), "assignment_period",
            "must be from 200ms to 1h, got " + text(f.get("assignment_period").getValueNode()));
      }
      Duration abandon = f.containsKey("abandon_after")
          ? duration(f.get("abandon_after").getValueNode(), "abandon_after") : DEFAULT_ABANDON_AFTER;
      if (abandon.compareTo(period) < 0) {
        throw error(f.containsKey("abandon_after") ? f.get("abandon_after").getValueNode() : doc, "abandon_after",
            "must be at least assignment_period (" + period.toMillis() + "ms), got " + abandon.toMillis() + "ms");
      }
      NodeTuple ds = f.get("domains");
      if (ds == null || isNull(ds.getValueNode())) {
        throw error(doc, "domains", "required, a list of {domain, buckets, default}");
      }
      if (!(ds.getValueNode() instanceof SequenceNode)) {
        throw error(ds.getValueNode(), "domains", "must be a list of {domain, buckets, default}");
      }
      Map<String, Domain> domains = new LinkedHashMap<>();
      List<Node> items = ((SequenceNode) ds.getValueNode()).getValue();
      if (items.isEmpty()) {
        throw error(ds.getValueNode(), "domains", "must not be empty");
      }
      for (int i = 0; i < items.size(); i++) {
        domain(items.get(i), "domains[" + i + "]", domains);
      }
      return new RlqsConfig(period, abandon, domains);
    }

    /** Reads one item of {@code domains} into {@code domains}, refusing a name given above it. */
    private void domain(Node item, String at, Map<String, Domain> domains) {
      Map<String, NodeTuple> d = mapping(item, at, DOMAIN_FIELDS);
      NodeTuple nameField = d.get("domain");
      String name = nameField == null ? null : string(nameField.getValueNode(), at + ".domain");
      if (name == null || name.isEmpty()) {
        throw error(nameField == null ? item : nameField.getValueNode(), at + ".domain",
            "required, must not be empty");
      }
      if (domains.containsKey(name)) {
        throw error(nameField.getValueNode(), at + ".domain", "\"" + name + "\" is configured above already");
      }
      List<Rule> rules = new ArrayList<>();
      NodeTuple bs = d.get("buckets");
      if (bs != null && !isNull(bs.getValueNode())) {
        if (!(bs.getValueNode() instanceof SequenceNode)) {
          throw error(bs.getValueNode(), at + ".buckets", "must be a list of {bucket_id, rate_limit}");
        }
        List<Node> rs = ((SequenceNode) bs.getValueNode()).getValue();
        for (int j = 0; j < rs.size(); j++) {
          rules.add(rule(rs.get(j), at + ".buckets[" + j + "]", RULE_FIELDS));
        }
      }
      Rule fallback = d.containsKey("default") ? rule(d.get("default").getValueNode(), at + ".default", DEFAULT_FIELDS)
          : null;
      if (rules.isEmpty() && fallback == null) {
        throw error(item, at, "needs buckets, a default or both");
      }
      domains.put(name, new Domain(List.copyOf(rules), fallback));
    }

    private Rule rule(Node node, String path, Set<String> fields) {
      Map<String, NodeTuple> f = mapping(node, path, fields);
      Map<String, String> id = new LinkedHashMap<>();
      if (fields.contains("bucket_id")) {
        NodeTuple idField = f.get("bucket_id");
        if (idField == null) {
          throw error(node, path + ".bucket_id", "required, a mapping of the bucket id's keys to values (\"*\": any)");
        }
        Node idNode = idField.getValueNode();
        if (!(idNode instanceof MappingNode) || ((MappingNode) idNode).getValue().isEmpty()) {
          throw error(idNode, path + ".bucket_id", "must be a non-empty mapping of keys to values (\"*\": any)");
        }
        for (NodeTuple t : ((MappingNode) idNode).getValue()) {
          String key = string(t.getKeyNode(), path + ".bucket_id");
          if (key == null || key.isEmpty()) {
            throw error(t.getKeyNode(), path + ".bucket_id", "a key must not be empty");
          }
          String value = string(t.getValueNode(), path + ".bucket_id." + key);
          if (value == null || value.isEmpty()) {
            throw error(t.getValueNode(), path + ".bucket_id." + key, "must not be empty (\"*\" matches any value)");
          }
          id.put(key, value);
        }
      }
      NodeTuple rl = f.get("rate_limit");
      if (rl == null) {
        throw error(node, path + ".rate_limit", "required: {unit, requests_per_unit} or {unlimited: true}");
      }
      RlsLimit limit = rateLimit(rl.getValueNode(), path + ".rate_limit");
      Strategy strategy = Strategy.TOKEN_BUCKET;
      if (f.containsKey("strategy")) {
        String s = string(f.get("strategy").getValueNode(), path + ".strategy");
        try {
          strategy = Strategy.valueOf(s == null ? "" : s.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
          throw error(f.get("strategy").getValueNode(), path + ".strategy",
              "must be requests_per_time_unit or token_bucket, got \"" + s + "\"");
        }
      }
      return new Rule(id, limit, strategy);
    }

    private RlsLimit rateLimit(Node node, String path) {
      Map<String, NodeTuple> f = mapping(node, path, RATE_LIMIT_FIELDS);
      boolean unlimited = false;
      if (f.containsKey("unlimited")) {
        String v = string(f.get("unlimited").getValueNode(), path + ".unlimited");
        String b = v == null ? "" : v.trim().toLowerCase(Locale.ROOT);
        if (!b.equals("true") && !b.equals("false")) {
          throw error(f.get("unlimited").getValueNode(), path + ".unlimited", "must be true or false, got \"" + v + "\"");
        }
        unlimited = b.equals("true");
      }
      if (unlimited) {
        for (String other : List.of("unit", "requests_per_unit")) {
          if (f.containsKey(other)) {
            throw error(f.get(other).getValueNode(), path + "." + other, "must not be given with unlimited: true");
          }
        }
        return new RlsLimit(0, null, true, false, null, List.of());
      }
      NodeTuple unitField = f.get("unit");
      if (unitField == null) {
        throw error(node, path + ".unit", "required (" + RlsUnit.NAMES + "), or unlimited: true");
      }
      String unitText = string(unitField.getValueNode(), path + ".unit");
      RlsUnit unit = RlsUnit.parse(unitText);
      if (unit == null) {
        throw error(unitField.getValueNode(), path + ".unit", "must be " + RlsUnit.NAMES + ", got \"" + unitText + "\"");
      }
      NodeTuple rpuField = f.get("requests_per_unit");
      if (rpuField == null) {
        throw error(node, path + ".requests_per_unit", "required (0 denies every request)");
      }
      String text = string(rpuField.getValueNode(), path + ".requests_per_unit");
      long rpu;
      try {
        rpu = Long.parseLong(text == null ? "" : text.trim());
      } catch (NumberFormatException e) {
        rpu = -1;
      }
      if (rpu < 0 || rpu > RlsLimit.MAX_REQUESTS_PER_UNIT) {
        throw error(rpuField.getValueNode(), path + ".requests_per_unit", "must be a whole number from 0 to "
            + RlsLimit.MAX_REQUESTS_PER_UNIT + ", got \"" + text + "\"");
      }
      return new RlsLimit(rpu, unit, false, false, null, List.of());
    }

    private Duration duration(Node node, String path) {
      String text = string(node, path);
      try {
        return Durations.parse(text);
      } catch (IllegalArgumentException e) {
        throw error(node, path, "must be a duration such as 500ms, 5s, 1m or 1h, got \"" + text + "\"");
      }
    }

    private Map<String, NodeTuple> mapping(Node node, String path, Set<String> known) {
      if (!(node instanceof MappingNode)) {
        throw error(node, path.isEmpty() ? "(top level)" : path, "must be a mapping (field: value)");
      }
      Map<String, NodeTuple> fields = new LinkedHashMap<>();
      for (NodeTuple t : ((MappingNode) node).getValue()) {
        Node k = t.getKeyNode();
        if (!(k instanceof ScalarNode)) {
          throw error(k, path, "a field name must be a plain string");
        }
        String name = ((ScalarNode) k).getValue();
        String at = path.isEmpty() ? name : path + "." + name;
        if (!known.contains(name)) {
          throw error(k, at, "unknown field (known here: " + known.stream().sorted().collect(Collectors.joining(", "))
              + ")");
        }
        fields.put(name, t);
      }
      return fields;
    }

    private String string(Node node, String path) {
      if (!(node instanceof ScalarNode)) {
        throw error(node, path, "must be a single value, not a list or mapping");
      }
      return isNull(node) ? null : ((ScalarNode) node).getValue();
    }

    private static String text(Node node) {
      return node instanceof ScalarNode ? ((ScalarNode) node).getValue() : "?";
    }

    private static boolean isNull(Node node) {
      if (!(node instanceof ScalarNode)) {
        return false;
      }
      ScalarNode s = (ScalarNode) node;
      if (s.getScalarStyle() != ScalarStyle.PLAIN) {
        return false;
      }
      String v = s.getValue();
      return v.isEmpty() || v.equals("~") || v.equalsIgnoreCase("null");
    }

    private IllegalArgumentException error(Node node, String path, String message) {
      int line = node.getStartMark().map(Mark::getLine).orElse(0) + 1;
      return new IllegalArgumentException(file + ":" + line + ": " + path + ": " + message);
    }
  }
}
