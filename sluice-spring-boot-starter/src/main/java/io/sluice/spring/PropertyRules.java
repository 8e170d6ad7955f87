package io.sluice.spring;

import io.sluice.node.Durations;
import io.sluice.node.RulesFile;
import io.sluice.spring.SluiceProperties.Endpoint;
import io.sluice.spring.SluiceProperties.LimitProperties;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.core.io.Resource;

/**
 * The limits and rules of {@code sluice.limits} and {@code sluice.rules}, read by the rules file's own
 * parser ({@link RulesFile}): each property becomes the line a rules file would hold for it, so that
 * the file and the properties mean the same (a limit keyed by one identity throughout, rules naming
 * limits that exist, path patterns), and each error the parser reports for a line is reported for the
 * property that line came from.
 */
final class PropertyRules {
  private static final Pattern LINE_ERROR = Pattern.compile("sluice:(\\d+): (.*)", Pattern.DOTALL);
  private static final Pattern FIELD = Pattern.compile("([a-z][A-Za-z.]*): (.*)", Pattern.DOTALL);

  private PropertyRules() {
  }

  /** The limits and rules the properties say; fails naming the property. */
  static RulesFile read(SluiceProperties properties) {
    return read(properties, AnnotatedEndpoints.none());
  }

  /**
   * The limits and rules the properties (or the rules file) say, and the endpoint rules of
   * {@link SluiceLimit} annotations; fails naming the property, or the annotated method.
   */
  static RulesFile read(SluiceProperties properties, AnnotatedEndpoints annotated) {
    SluiceProperties.RulesProperties rules = properties.getRules();
    boolean anyRule = !rules.getAlways().isEmpty() || !rules.getPlans().isEmpty() || !rules.getEndpoints().isEmpty()
        || rules.getDefaultPlan() != null;
    for (AnnotatedEndpoints.Endpoint endpoint : annotated.endpoints()) {
      word(endpoint.source(), endpoint.path());
      ruleText(endpoint.source(), List.of(endpoint.rule()));
    }
    if (properties.getRulesFile() != null) {
      if (!properties.getLimits().isEmpty() || anyRule) {
        throw new SluiceConfigurationException("sluice.rules-file",
            "set either sluice.rules-file or sluice.limits and sluice.rules, not both");
      }
      return readFile(properties.getRulesFile(), annotated);
    }
    if (properties.getLimits().isEmpty()) {
      throw new SluiceConfigurationException("sluice.limits", "no limits: set sluice.limits.<name>.limit and"
          + " .window and sluice.rules, or sluice.rules-file (sluice.enabled=false turns Sluice off)");
    }
    Lines lines = new Lines();
    for (Map.Entry<String, LimitProperties> e : properties.getLimits().entrySet()) {
      String path = "sluice.limits." + e.getKey();
      lines.addLimit(path, limitLine(e.getKey(), e.getValue(), path), e.getValue());
    }
    addRuleLines(lines, rules);
    for (AnnotatedEndpoints.Endpoint endpoint : annotated.endpoints()) {
      lines.add(endpoint.source(), endpoint.line());
    }
    if (!anyRule && annotated.endpoints().isEmpty()) {
      throw new SluiceConfigurationException("sluice.rules", "no rules, so no limit applies to any request: say which"
          + " limits a request meets, each keyed by an identity (e.g. sluice.rules.always: "
          + properties.getLimits().keySet().iterator().next() + " by ip)");
    }
    return lines.parse();
  }

  /** The lines of {@code sluice.rules}: always, then each plan, then each endpoint. */
  private static void addRuleLines(Lines lines, SluiceProperties.RulesProperties rules) {
    if (!rules.getAlways().isEmpty()) {
      lines.add("sluice.rules.always", "always " + ruleText("sluice.rules.always", rules.getAlways()));
    }
    String defaultPlan = rules.getDefaultPlan();
    if (defaultPlan != null && !rules.getPlans().containsKey(defaultPlan)) {
      throw new SluiceConfigurationException("sluice.rules.default-plan", "no plan \"" + defaultPlan
          + "\" in sluice.rules.plans (plans: " + String.join(", ", rules.getPlans().keySet()) + ")");
    }
    for (Map.Entry<String, List<String>> plan : rules.getPlans().entrySet()) {
      String path = "sluice.rules.plans." + plan.getKey();
      word(path, plan.getKey());
      lines.add(path, "plan " + plan.getKey() + (plan.getKey().equals(defaultPlan) ? " default " : " ")
          + ruleText(path, plan.getValue()));
    }
    for (int i = 0; i < rules.getEndpoints().size(); i++) {
      Endpoint endpoint = rules.getEndpoints().get(i);
      String path = "sluice.rules.endpoints[" + i + "]";
      if (endpoint.getPath() == null || endpoint.getPath().isBlank()) {
        throw new SluiceConfigurationException(path + ".path", "must be set (e.g. /login or /api/**)");
      }
      word(path + ".method", endpoint.getMethod());
      word(path + ".path", endpoint.getPath());
      lines.add(path, "endpoint " + endpoint.getMethod() + " " + endpoint.getPath() + " "
          + ruleText(path + ".rules", endpoint.getRules()));
    }
  }

  /**
   * The rules text the properties make, a line at a time, each line with the property it came from (and
   * a limit's line with the limit's properties), so that an error the parser reports for a line is
   * reported for its property.
   */
  private static final class Lines {
    private final List<String> lines = new ArrayList<>();
    private final List<String> sources = new ArrayList<>();
    private final List<LimitProperties> limitOfLine = new ArrayList<>();

    /** A rule line. */
    void add(String source, String line) {
      addLimit(source, line, null);
    }

    /** A limit's line, with the properties it came from ({@code limit}). */
    void addLimit(String source, String line, LimitProperties limit) {
      lines.add(line);
      sources.add(source);
      limitOfLine.add(limit);
    }

    RulesFile parse() {
      try {
        return RulesFile.parse(String.join("\n", lines), "sluice");
      } catch (IllegalArgumentException e) {
        throw error(e);
      }
    }

    /** The parser's error {@code e}, for the property its line came from. */
    private SluiceConfigurationException error(IllegalArgumentException e) {
      Matcher m = LINE_ERROR.matcher(String.valueOf(e.getMessage()));
      if (!m.matches()) {
        return new SluiceConfigurationException("sluice.rules", String.valueOf(e.getMessage()), e);
      }
      int line = Integer.parseInt(m.group(1)) - 1;
      String source = sources.get(line);
      String message = m.group(2);
      LimitProperties limit = limitOfLine.get(line);
      if (limit != null) {
        return limitError(source, limit, lines.get(line), message, e);
      }
      Matcher field = FIELD.matcher(message);
      if (field.matches() && field.group(1).equals("pathPattern")) {
        return new SluiceConfigurationException(source.startsWith("@") ? source : source + ".path", field.group(2), e);
      }
      if (field.matches() && field.group(1).equals("rule")) {
        return new SluiceConfigurationException(source.startsWith("sluice.rules.endpoints") ? source + ".rules" : source,
            field.group(2), e);
      }
      return new SluiceConfigurationException(source, message, e);
    }
  }

  /** {@code NAME = LIMIT/WINDOW, ALGORITHM, MODE[, burst=N]}, after the checks the text cannot carry. */
  private static String limitLine(String name, LimitProperties limit, String path) {
    word(path, name);
    if (limit.getLimit() == null) {
      throw new SluiceConfigurationException(path + ".limit", "must be set (permits per window)");
    }
    if (limit.getWindow() == null) {
      throw new SluiceConfigurationException(path + ".window", "must be set (e.g. 1m)");
    }
    Duration window;
    try {
      window = SluiceProperties.duration("window", limit.getWindow());
    } catch (IllegalArgumentException e) {
      throw SluiceConfigurationException.naming(path, e);
    }
    if (limit.getAlgorithm() == null) {
      throw new SluiceConfigurationException(path + ".algorithm", "must not be empty");
    }
    if (limit.getMode() == null) {
      throw new SluiceConfigurationException(path + ".mode", "must not be empty");
    }
    // (the text has no sign: what the limit's builder would say of a negative number, said here)
    if (limit.getLimit() < 0) {
      throw new SluiceConfigurationException(path + ".limit", "must be positive, got " + limit.getLimit());
    }
    if (limit.getBurst() != null && !limit.getAlgorithm().bucket()) {
      throw new SluiceConfigurationException(path + ".burst", "is a bucket's capacity; "
          + limit.getAlgorithm().spec() + " has none");
    }
    if (limit.getBurst() != null && limit.getBurst() < 0) {
      throw new SluiceConfigurationException(path + ".burst", "must be positive, got " + limit.getBurst());
    }
    return name + " = " + limit.getLimit() + "/" + Durations.format(window) + ", " + limit.getAlgorithm().spec() + ", "
        + limit.getMode().name().toLowerCase(Locale.ROOT) + (limit.getBurst() == null ? "" : ", burst=" + limit.getBurst());
  }

  /**
   * An error of a limit line ({@code limit "SPEC": capacity: must be positive, got 0}) for the property it
   * came from: the limit builder's fields are the limit's properties (a bucket's capacity is its burst, or
   * its limit when no burst is set; its refill is the limit per window).
   */
  private static SluiceConfigurationException limitError(String path, LimitProperties limit, String line,
      String message, IllegalArgumentException cause) {
    String prefix = "limit \"" + line + "\": ";
    String rest = message.startsWith(prefix) ? message.substring(prefix.length()) : message;
    Matcher field = FIELD.matcher(rest);
    if (!field.matches()) {
      return new SluiceConfigurationException(path, rest, cause);
    }
    String property;
    switch (field.group(1)) {
      case "capacity":
        property = limit.getBurst() != null ? "burst" : "limit";
        break;
      case "limit":
      case "refill.tokens":
        property = "limit";
        break;
      case "window":
      case "refill":
      case "refill.period":
        property = "window";
        break;
      case "duration":
        property = "window";
        break;
      default:
        return new SluiceConfigurationException(path, rest, cause);
    }
    return new SluiceConfigurationException(path + "." + property, field.group(2), cause);
  }

  /** The rules of one property as a rule line's text; each item {@code LIMIT by IDENTITY}. */
  private static String ruleText(String path, List<String> rules) {
    for (String rule : rules) {
      if (rule == null || rule.indexOf('\n') >= 0 || rule.indexOf('\r') >= 0 || rule.indexOf('#') >= 0) {
        throw new SluiceConfigurationException(path, "cannot read \"" + rule + "\" (LIMIT by IDENTITY, e.g. api by api-key)");
      }
    }
    return String.join(", ", rules);
  }

  /** A name, method or path that must stay one word of its line. */
  private static void word(String path, String text) {
    if (text == null || text.isEmpty() || !text.equals(text.strip()) || text.matches(".*[\\s#,].*")) {
      throw new SluiceConfigurationException(path, "must be one word without blanks, commas or #, got \"" + text + "\"");
    }
  }

  private static RulesFile readFile(Resource resource, AnnotatedEndpoints annotated) {
    String name = resource.getFilename() == null ? resource.getDescription() : resource.getFilename();
    String text;
    try (InputStream in = resource.getInputStream()) {
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new SluiceConfigurationException("sluice.rules-file", "cannot read " + resource.getDescription() + ": "
          + e.getMessage(), e);
    }
    // the annotations' endpoint rules after the file's lines: an error on one of them names the annotation
    String fileText = text.replaceFirst("^\uFEFF", "");
    int fileLines = fileText.split("\r\n|\r|\n", -1).length;
    StringBuilder all = new StringBuilder(fileText);
    for (AnnotatedEndpoints.Endpoint endpoint : annotated.endpoints()) {
      all.append('\n').append(endpoint.line());
    }
    RulesFile file;
    try {
      file = RulesFile.parse(all.toString(), name);
    } catch (IllegalArgumentException e) {
      Matcher m = Pattern.compile(Pattern.quote(name) + ":(\\d+): (?:rule: )?(.*)", Pattern.DOTALL)
          .matcher(String.valueOf(e.getMessage()));
      if (m.matches() && Integer.parseInt(m.group(1)) > fileLines) {
        AnnotatedEndpoints.Endpoint endpoint = annotated.endpoints().get(Integer.parseInt(m.group(1)) - fileLines - 1);
        throw new SluiceConfigurationException(endpoint.source(), m.group(2), e);
      }
      throw new SluiceConfigurationException("sluice.rules-file", e.getMessage(), e);
    }
    if (file.rules().isEmpty()) {
      throw new SluiceConfigurationException("sluice.rules-file", name + " has limits and no rules, so no limit"
          + " applies to any request (add rule lines: always, plan, endpoint)");
    }
    return file;
  }
}
