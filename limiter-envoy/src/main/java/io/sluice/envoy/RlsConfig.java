package io.sluice.envoy;

import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.snakeyaml.engine.v2.common.ScalarStyle;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/**
 * Rate limit configuration in envoyproxy/ratelimit's file format: one YAML file per domain,
 *
 * <pre>{@code
 * domain: messaging
 * descriptors:
 *   - key: message_type
 *     value: marketing
 *     descriptors:
 *       - key: to_number
 *         rate_limit:
 *           unit: day
 *           requests_per_unit: 5
 *   - key: to_number
 *     rate_limit: {unit: day, requests_per_unit: 100, name: per_number}
 *     shadow_mode: false
 * }</pre>
 *
 * and how a request's descriptor finds its limit in it ({@link #match}), as the reference server
 * does: entry by entry, each matched at its level first by key and value, then by a value ending in
 * {@code *} (a prefix, in file order), then by the key alone; the limit is the one of the node the
 * descriptor's last entry reached (a descriptor longer or shorter than the path to a limit has
 * none).
 *
 * <p>Immutable. Errors are raised while loading, as an {@link IllegalArgumentException} whose message
 * starts with the file and line, then the field's path: {@code ratelimit.yaml:9:
 * descriptors[0].rate_limit.unit: must be second, minute, hour or day, got "fortnight"}.
 */
public final class RlsConfig {
  /** The fields a descriptor may have ({@code detailed_metric} is read and has no effect here). */
  private static final Set<String> DESCRIPTOR_FIELDS =
      Set.of("key", "value", "rate_limit", "descriptors", "shadow_mode", "detailed_metric");
  private static final Set<String> RATE_LIMIT_FIELDS =
      Set.of("unit", "requests_per_unit", "unlimited", "name", "replaces");
  private static final Set<String> ROOT_FIELDS = Set.of("domain", "descriptors");

  private final Map<String, Level> domains;
  private final List<RlsLimit> limits;
  /** The distinct rates of {@link #limits} (unlimited ones and those of 0 left out). */
  private final Set<RlsLimiters.Rate> rates;

  private RlsConfig(Map<String, Level> domains, List<RlsLimit> limits) {
    this.domains = domains;
    this.limits = limits;
    this.rates = limits.stream().filter(l -> !l.unlimited() && l.requestsPerUnit() > 0)
        .map(l -> new RlsLimiters.Rate(l.requestsPerUnit(), l.unit())).collect(Collectors.toUnmodifiableSet());
  }

  /** Whether a limit of this rate is in the files (a request's override of the same rate is one of theirs). */
  public boolean hasRate(long requestsPerUnit, RlsUnit unit) {
    return rates.contains(new RlsLimiters.Rate(requestsPerUnit, unit));
  }

  /** How many distinct rates (requests_per_unit per unit, above 0) the files have: the limiters they need. */
  public int distinctRates() {
    return rates.size();
  }

  /** The domains configured. */
  public Set<String> domains() {
    return Collections.unmodifiableSet(domains.keySet());
  }

  /** What the log says of a configuration loaded: its domains. */
  @Override
  public String toString() {
    return "domains " + domains();
  }

  /** Every rate limit of every file, unlimited ones included, in file order. */
  public List<RlsLimit> limits() {
    return limits;
  }

  /**
   * Reads configuration files: each path is a YAML file, or a directory whose {@code *.yaml} and
   * {@code *.yml} files (not those in its subdirectories) are read in name order. A domain may be
   * configured by one file only.
   *
   * @throws IllegalArgumentException naming the file (and line and field) of the first error
   */
  public static RlsConfig load(List<Path> paths) {
    return parse(read(paths));
  }

  /**
   * The texts of the files {@link #load} reads, by file name, in the order it reads them.
   *
   * @throws IllegalArgumentException naming a path that cannot be read or a directory without YAML files
   */
  public static Map<String, String> read(List<Path> paths) {
    if (paths == null || paths.isEmpty()) {
      throw new IllegalArgumentException("config: at least one file or directory is needed");
    }
    List<Path> files = new ArrayList<>();
    for (Path p : paths) {
      if (Files.isDirectory(p)) {
        try (Stream<Path> list = Files.list(p)) {
          List<Path> yaml = list.filter(f -> {
            String n = f.getFileName().toString().toLowerCase(Locale.ROOT);
            return Files.isRegularFile(f) && (n.endsWith(".yaml") || n.endsWith(".yml"));
          }).sorted().collect(Collectors.toList());
          if (yaml.isEmpty()) {
            throw new IllegalArgumentException(p + ": no *.yaml or *.yml file in this directory");
          }
          files.addAll(yaml);
        } catch (IOException e) {
          throw new IllegalArgumentException(p + ": cannot list the directory: " + e.getMessage(), e);
        }
      } else {
        files.add(p);
      }
    }
    Map<String, String> texts = new LinkedHashMap<>();
    for (Path f : files) {
      try {
        texts.put(f.toString(), Files.readString(f, StandardCharsets.UTF_8));
      } catch (IOException e) {
        throw new IllegalArgumentException(f + ": cannot read the file: " + e, e);
      }
    }
    return texts;
  }

  /** One file's text ({@code name} is what messages call it). */
  public static RlsConfig parse(String name, String yaml) {
    return parse(Map.of(name, yaml));
  }

  /** Several files' texts by name, each one domain. */
  public static RlsConfig parse(Map<String, String> files) {
    Map<String, Level> domains = new LinkedHashMap<>();
    Map<String, String> domainFiles = new HashMap<>();
    List<RlsLimit> limits = new ArrayList<>();
    for (Map.Entry<String, String> f : files.entrySet()) {
      FileParser p = new FileParser(f.getKey(), limits);
      String domain = p.parse(f.getValue());
      String other = domainFiles.putIfAbsent(domain, f.getKey());
      if (other != null) {
        throw new IllegalArgumentException(f.getKey() + ":" + p.domainLine + ": domain: \"" + domain
            + "\" is configured in " + other + " already");
      }
      domains.put(domain, p.root);
    }
    return new RlsConfig(domains, List.copyOf(limits));
  }

  /**
   * The limit a request's descriptor falls under in this domain, or null when none does (an unknown
   * domain, a path the files do not have, or a node without a {@code rate_limit}). The request's
   * own {@code limit} override is not looked at here.
   */
  public RlsLimit match(String domain, List<RateLimitDescriptor.Entry> entries) {
    Level level = domains.get(domain);
    if (level == null || entries.isEmpty()) {
      return null;
    }
    for (int i = 0; i < entries.size(); i++) {
      RateLimitDescriptor.Entry e = entries.get(i);
      Node node = level.find(e.getKey(), e.getValue());
      if (node == null) {
        return null;
      }
      if (i == entries.size() - 1) {
        return node.limit;
      }
      if (node.children.isEmpty()) {
        return null; // the request goes deeper than the configuration
      }
      level = node.children;
    }
    return null;
  }

  /** Whether this domain is configured. */
  public boolean hasDomain(String domain) {
    return domains.containsKey(domain);
  }

  /** One list of descriptors, indexed as the matching reads them. */
  static final class Level {
    /** key → value → node, for descriptors with a value that is not a wildcard. */
    final Map<String, Map<String, Node>> exact = new HashMap<>();
    /** Descriptors whose value ends in '*', in file order. */
    final List<Node> wildcards = new ArrayList<>();
    /** key → node, for descriptors without a value. */
    final Map<String, Node> keyOnly = new HashMap<>();

    boolean isEmpty() {
      return exact.isEmpty() && wildcards.isEmpty() && keyOnly.isEmpty();
    }

    Node find(String key, String value) {
      Map<String, Node> byValue = exact.get(key);
      Node n = byValue == null ? null : byValue.get(value);
      if (n != null) {
        return n;
      }
      for (Node w : wildcards) {
        if (w.key.equals(key) && value.startsWith(w.value.substring(0, w.value.length() - 1))) {
          return w;
        }
      }
      return keyOnly.get(key);
    }
  }

  /** One descriptor of a file. */
  static final class Node {
    final String key;
    /** Null: matches any value of the key. */
    final String value;
    final RlsLimit limit;
    final Level children;

    Node(String key, String value, RlsLimit limit, Level children) {
      this.key = key;
      this.value = value;
      this.limit = limit;
      this.children = children;
    }
  }

  /** Reads one file, remembering where each node was for the messages. */
  private static final class FileParser {
    private final String file;
    private final List<RlsLimit> limits;
    private Level root;
    private int domainLine = 1;

    FileParser(String file, List<RlsLimit> limits) {
      this.file = file;
      this.limits = limits;
    }

    String parse(String text) {
      org.snakeyaml.engine.v2.nodes.Node doc = YamlDocuments.compose(file, text);
      if (doc == null) {
        throw new IllegalArgumentException(file + ":1: domain: required (the file is empty)");
      }
      Map<String, NodeTuple> fields = mapping(doc, "", ROOT_FIELDS);
      NodeTuple domainField = fields.get("domain");
      if (domainField == null) {
        throw error(doc, "domain", "required");
      }
      domainLine = line(domainField.getValueNode());
      String domain = string(domainField.getValueNode(), "domain");
      if (domain == null || domain.isEmpty()) {
        throw error(domainField.getValueNode(), "domain", "must not be empty");
      }
      NodeTuple descriptors = fields.get("descriptors");
      root = descriptors == null ? new Level() : level(descriptors.getValueNode(), "descriptors");
      return domain;
    }

    private Level level(org.snakeyaml.engine.v2.nodes.Node node, String path) {
      Level level = new Level();
      if (isNull(node)) {
        return level;
      }
      if (!(node instanceof SequenceNode)) {
        throw error(node, path, "must be a list of descriptors");
      }
      List<org.snakeyaml.engine.v2.nodes.Node> items = ((SequenceNode) node).getValue();
      for (int i = 0; i < items.size(); i++) {
        String at = path + "[" + i + "]";
        org.snakeyaml.engine.v2.nodes.Node item = items.get(i);
        Map<String, NodeTuple> f = mapping(item, at, DESCRIPTOR_FIELDS);
        NodeTuple keyField = f.get("key");
        String key = keyField == null ? null : string(keyField.getValueNode(), at + ".key");
        if (key == null || key.isEmpty()) {
          throw error(keyField == null ? item : keyField.getValueNode(), at + ".key", "required, must not be empty");
        }
        NodeTuple valueField = f.get("value");
        String value = valueField == null ? null : string(valueField.getValueNode(), at + ".value");
        if (value != null && value.isEmpty()) {
          value = null; // as the reference server: an empty value is no value
        }
        boolean shadow = f.containsKey("shadow_mode") && bool(f.get("shadow_mode").getValueNode(), at + ".shadow_mode");
        if (f.containsKey("detailed_metric")) {
          bool(f.get("detailed_metric").getValueNode(), at + ".detailed_metric");
        }
        RlsLimit limit = null;
        NodeTuple rl = f.get("rate_limit");
        if (rl != null && !isNull(rl.getValueNode())) {
          limit = rateLimit(rl.getValueNode(), at + ".rate_limit", shadow);
          limits.add(limit);
        }
        NodeTuple nested = f.get("descriptors");
        Level children = nested == null ? new Level() : level(nested.getValueNode(), at + ".descriptors");
        Node n = new Node(key, value, limit, children);
        boolean duplicate;
        if (value == null) {
          duplicate = level.keyOnly.putIfAbsent(key, n) != null;
        } else if (value.endsWith("*")) {
          duplicate = level.wildcards.stream().anyMatch(w -> w.key.equals(n.key) && w.value.equals(n.value));
          if (!duplicate) {
            level.wildcards.add(n);
          }
        } else {
          duplicate = level.exact.computeIfAbsent(key, k -> new HashMap<>()).putIfAbsent(value, n) != null;
        }
        if (duplicate) {
          throw error(item, at, "duplicate descriptor: key \"" + key + "\""
              + (value == null ? " without a value" : " with value \"" + value + "\"")
              + " is in this list already");
        }
      }
      return level;
    }

    private RlsLimit rateLimit(org.snakeyaml.engine.v2.nodes.Node node, String path, boolean shadow) {
      Map<String, NodeTuple> f = mapping(node, path, RATE_LIMIT_FIELDS);
      boolean unlimited = f.containsKey("unlimited") && bool(f.get("unlimited").getValueNode(), path + ".unlimited");
      RlsUnit unit = unit(f, node, path, unlimited);
      long rpu = requestsPerUnit(f, node, path, unlimited);
      String name = null;
      if (f.containsKey("name")) {
        name = string(f.get("name").getValueNode(), path + ".name");
        if (name != null && name.isEmpty()) {
          name = null;
        }
      }
      List<String> replaces = replaces(f.get("replaces"), path, name);
      return new RlsLimit(unlimited ? 0 : rpu, unit, unlimited, shadow, name, replaces);
    }

    /** A rate limit's {@code unit}: null for an unlimited one, which must not have one. */
    private RlsUnit unit(Map<String, NodeTuple> f, org.snakeyaml.engine.v2.nodes.Node node, String path,
        boolean unlimited) {
      NodeTuple unitField = f.get("unit");
      String unitText = unitField == null ? null : string(unitField.getValueNode(), path + ".unit");
      RlsUnit unit = null;
      if (unlimited) {
        if (unitText != null && !unitText.isEmpty()) {
          throw error(unitField.getValueNode(), path + ".unit", "must not be given with unlimited: true");
        }
      } else {
        if (unitField == null) {
          throw error(node, path + ".unit", "required (" + RlsUnit.NAMES + "), or unlimited: true");
        }
        unit = RlsUnit.parse(unitText);
        if (unit == null) {
          throw error(unitField.getValueNode(), path + ".unit", "must be " + RlsUnit.NAMES + ", got \""
              + unitText + "\"");
        }
      }
      return unit;
    }

    /** A rate limit's {@code requests_per_unit}, checked; 0 when it has none (only an unlimited one may). */
    private long requestsPerUnit(Map<String, NodeTuple> f, org.snakeyaml.engine.v2.nodes.Node node, String path,
        boolean unlimited) {
      long rpu = 0;
      NodeTuple rpuField = f.get("requests_per_unit");
      if (rpuField != null) {
        String text = string(rpuField.getValueNode(), path + ".requests_per_unit");
        try {
          rpu = Long.parseLong(text == null ? "" : text.trim());
        } catch (NumberFormatException e) {
          rpu = -1;
        }
        if (rpu < 0 || rpu > RlsLimit.MAX_REQUESTS_PER_UNIT) {
          throw error(rpuField.getValueNode(), path + ".requests_per_unit", "must be a whole number from 0 to "
              + RlsLimit.MAX_REQUESTS_PER_UNIT + ", got \"" + text + "\"");
        }
      } else if (!unlimited) {
        // the reference server reads a missing count as 0 (every request over the limit); we ask for it
        throw error(node, path + ".requests_per_unit", "required (0 refuses every request)");
      }
      return rpu;
    }

    /** The names in a rate limit's {@code replaces} ({@code rep} null: none), none of them its own {@code name}. */
    private List<String> replaces(NodeTuple rep, String path, String name) {
      List<String> replaces = new ArrayList<>();
      if (rep != null && !isNull(rep.getValueNode())) {
        if (!(rep.getValueNode() instanceof SequenceNode)) {
          throw error(rep.getValueNode(), path + ".replaces", "must be a list of {name: ...}");
        }
        List<org.snakeyaml.engine.v2.nodes.Node> items = ((SequenceNode) rep.getValueNode()).getValue();
        for (int i = 0; i < items.size(); i++) {
          String at = path + ".replaces[" + i + "]";
          Map<String, NodeTuple> r = mapping(items.get(i), at, Set.of("name"));
          String replaced = r.containsKey("name") ? string(r.get("name").getValueNode(), at + ".name") : null;
          if (replaced == null || replaced.isEmpty()) {
            throw error(items.get(i), at + ".name", "required, must not be empty");
          }
          if (replaced.equals(name)) {
            throw error(items.get(i), at + ".name", "a limit cannot replace itself (\"" + name + "\")");
          }
          replaces.add(replaced);
        }
      }
      return replaces;
    }

    /** The fields of a mapping by name, refusing unknown ones, duplicates and non-string keys. */
    private Map<String, NodeTuple> mapping(org.snakeyaml.engine.v2.nodes.Node node, String path, Set<String> known) {
      if (!(node instanceof MappingNode)) {
        throw error(node, path.isEmpty() ? "(top level)" : path, "must be a mapping (field: value)");
      }
      Map<String, NodeTuple> fields = new LinkedHashMap<>();
      Set<String> seen = new HashSet<>();
      for (NodeTuple t : ((MappingNode) node).getValue()) {
        org.snakeyaml.engine.v2.nodes.Node k = t.getKeyNode();
        if (!(k instanceof ScalarNode)) {
          throw error(k, path, "a field name must be a plain string");
        }
        String name = ((ScalarNode) k).getValue();
        String at = path.isEmpty() ? name : path + "." + name;
        if (!known.contains(name)) {
          throw error(k, at, "unknown field (known here: " + known.stream().sorted().collect(Collectors.joining(", "))
              + ")");
        }
        if (!seen.add(name)) {
          throw error(k, at, "given twice");
        }
        fields.put(name, t);
      }
      return fields;
    }

    /** A scalar's text; null for a null scalar; an error for a list or mapping. */
    private String string(org.snakeyaml.engine.v2.nodes.Node node, String path) {
      if (!(node instanceof ScalarNode)) {
        throw error(node, path, "must be a single value, not a list or mapping");
      }
      return isNull(node) ? null : ((ScalarNode) node).getValue();
    }

    private boolean bool(org.snakeyaml.engine.v2.nodes.Node node, String path) {
      String v = string(node, path);
      switch (v == null ? "" : v.trim().toLowerCase(Locale.ROOT)) {
        case "true":
        case "yes":
        case "on":
          return true;
        case "false":
        case "no":
        case "off":
          return false;
        default:
          throw error(node, path, "must be true or false, got \"" + v + "\"");
      }
    }

    private static boolean isNull(org.snakeyaml.engine.v2.nodes.Node node) {
      if (!(node instanceof ScalarNode)) {
        return false;
      }
      ScalarNode s = (ScalarNode) node;
      if (s.getScalarStyle() != ScalarStyle.PLAIN) {
        return false;
      }
      String v = s.getValue();
      return v.isEmpty() || v.equals("~") || v.equals("null") || v.equals("Null") || v.equals("NULL");
    }

    private int line(org.snakeyaml.engine.v2.nodes.Node node) {
      return node.getStartMark().map(Mark::getLine).orElse(0) + 1;
    }

    private IllegalArgumentException error(org.snakeyaml.engine.v2.nodes.Node node, String path, String message) {
      return new IllegalArgumentException(file + ":" + line(node) + ": " + path + ": " + message);
    }
  }
}
