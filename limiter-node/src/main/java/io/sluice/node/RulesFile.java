package io.sluice.node;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Limits and the rules that apply them, as text: the sidecar's {@code --limits-file}, and for a Java
 * service the same file read into {@link Rules} for a {@link RequestLimiter} (and so the servlet
 * filter). One line each; blank lines and lines starting with {@code #} are skipped:
 * <pre>
 * # limits (see LimitSpec)
 * per-ip   = 1000/1m
 * free     = 1/1s, token-bucket, burst=60
 * pro      = 10/1s, token-bucket, burst=600
 * login    = 5/15m, fixed-window
 * new-rule = 100/1m, shadow
 *
 * # rules: which limits a request meets, each keyed by one of its identities
 * always                per-ip by ip, new-rule by api-key
 * plan free default     free by api-key
 * plan pro              pro by api-key
 * endpoint POST /login  login by ip
 * </pre>
 * {@code always} rules apply to every request, {@code plan NAME} rules to requests of that plan
 * ({@code default} marks the plan of requests that name none or an unknown one), {@code endpoint
 * METHOD PATH} rules to requests whose method ({@code *} for any) and path match (path patterns as in
 * {@link Rules}). A rule is {@code LIMIT by IDENTITY}; a request without that identity is not counted
 * by that limit, and a limit counts one identity throughout the file. A file of limits alone has no
 * rules ({@link #rules()} is empty). A {@code #} at a line's start or after a blank starts a comment;
 * a byte order mark and CR, LF or CRLF line ends are read alike.
 *
 * <p>Errors name the file, the line and the field ({@code limits.conf:7: rule: unknown limit "pr"}).
 */
public final class RulesFile {
  private static final Pattern LIMIT_LINE = Pattern.compile("[^=\\s]+\\s*=.*");
  private final List<Limit> limits;
  private final Rules rules;
  private final Set<String> identities;

  private RulesFile(List<Limit> limits, Rules rules, Set<String> identities) {
    this.limits = List.copyOf(limits);
    this.rules = rules;
    this.identities = Set.copyOf(identities);
  }

  /** Reads a file; an unreadable one fails with a message starting {@code limitsFile:}. */
  public static RulesFile read(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException("limitsFile: cannot read " + file + ": " + e.getMessage(), e);
    }
    return parse(text, file.toString());
  }

  /** Parses text; errors start with {@code source:line:}. */
  public static RulesFile parse(String text, String source) {
    // (a file saved with a byte order mark, or with any of the three line ends, reads the same)
    String[] lines = text.replaceFirst("^\uFEFF", "").split("\r\n|\r|\n", -1);
    Map<String, Limit> limits = new LinkedHashMap<>();
    List<Integer> ruleLines = new ArrayList<>();
    for (int i = 0; i < lines.length; i++) {
      String line = content(lines[i]);
      lines[i] = line;
      if (line.isEmpty()) {
        continue;
      }
      String first = line.split("\\s+", 2)[0].toLowerCase(Locale.ROOT);
      // NAME = ... is a limit whatever its name ("plan = 100/1m" too); a rule starts with a keyword
      boolean limitLine = LIMIT_LINE.matcher(line).matches();
      if (!limitLine && (first.equals("always") || first.equals("plan") || first.equals("endpoint"))) {
        ruleLines.add(i); // read once every limit is known: a rule may come before its limit
        continue;
      }
      try {
        Limit limit = LimitSpec.parse(line);
        if (limits.putIfAbsent(limit.name(), limit) != null) {
          throw new IllegalArgumentException("limit: \"" + limit.name() + "\" is defined twice");
        }
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(source + ":" + (i + 1) + ": " + e.getMessage(), e);
      }
    }
    if (ruleLines.isEmpty()) {
      return new RulesFile(new ArrayList<>(limits.values()), null, Set.of());
    }
    Rules.Builder rules = Rules.builder();
    String defaultPlan = null;
    // a limit counts one identity: the rules apply each limit once per request, so a second identity
    // for it would be dropped without a word
    Map<String, String> keyedBy = new HashMap<>();
    for (int i : ruleLines) {
      try {
        String plan = ruleLine(lines[i], limits, keyedBy, rules);
        if (plan != null) {
          if (defaultPlan != null) {
            throw new IllegalArgumentException("plan: two default plans, " + defaultPlan + " and " + plan);
          }
          defaultPlan = plan;
        }
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(source + ":" + (i + 1) + ": " + e.getMessage(), e);
      }
    }
    if (defaultPlan != null) {
      rules.defaultPlan(defaultPlan);
    }
    return new RulesFile(new ArrayList<>(limits.values()), rules.build(), new HashSet<>(keyedBy.values()));
  }

  /** A line without its comment ({@code #} at its start or after a blank) and outer blanks. */
  private static String content(String line) {
    String trimmed = line.strip();
    if (trimmed.startsWith("#")) {
      return "";
    }
    Matcher comment = TRAILING_COMMENT.matcher(trimmed);
    return comment.find() ? trimmed.substring(0, comment.start()).strip() : trimmed;
  }

  private static final Pattern TRAILING_COMMENT = Pattern.compile("\\s#");

  /** Every limit of the file, in the order written. */
  public List<Limit> limits() {
    return limits;
  }

  /** The rules, or empty for a file of limits alone. */
  public Optional<Rules> rules() {
    return Optional.ofNullable(rules);
  }

  /** The identities the rules key by ({@code ip}, {@code api-key}, ...); empty without rules. */
  public Set<String> identities() {
    return identities;
  }

  /** Adds one rule line to the builder; answers the plan it makes the default, or null. */
  private static String ruleLine(String line, Map<String, Limit> limits, Map<String, String> keyedBy,
      Rules.Builder rules) {
    String[] head = line.split("\\s+", 5);
    switch (head[0].toLowerCase(Locale.ROOT)) {
      case "always":
        rules.always(rulesOf(afterWords(line, 1), limits, keyedBy));
        return null;
      case "plan": {
        if (head.length < 2) {
          throw new IllegalArgumentException("plan: a name is needed (plan NAME [default] LIMIT by IDENTITY, ...)");
        }
        // "default" marks the default plan, unless it is a limit's name ("plan p default by ip")
        boolean isDefault = head.length > 2 && head[2].equalsIgnoreCase("default")
            && !(head.length > 3 && head[3].equalsIgnoreCase("by"));
        rules.plan(head[1], rulesOf(afterWords(line, isDefault ? 3 : 2), limits, keyedBy));
        return isDefault ? head[1] : null;
      }
      default: {
        if (head.length < 3) {
          throw new IllegalArgumentException("endpoint: a method and a path are needed (endpoint METHOD PATH"
              + " LIMIT by IDENTITY, ...)");
        }
        PathPattern.parse(head[2]); // a bad path is named before the rules after it are read
        rules.endpoint(head[1], head[2], rulesOf(afterWords(line, 3), limits, keyedBy));
        return null;
      }
    }
  }

  /** The text after the first {@code n} words of the line. */
  private static String afterWords(String line, int n) {
    String[] parts = line.split("\\s+", n + 1);
    return parts.length > n ? parts[n] : "";
  }

  /** {@code LIMIT by IDENTITY, ...}: at least one. */
  private static Rule[] rulesOf(String text, Map<String, Limit> limits, Map<String, String> keyedBy) {
    if (text.isBlank()) {
      throw new IllegalArgumentException("rule: at least one LIMIT by IDENTITY is needed");
    }
    List<Rule> out = new ArrayList<>();
    for (String part : text.split(",")) {
      String[] words = part.trim().split("\\s+");
      if (words.length != 3 || !words[1].equalsIgnoreCase("by")) {
        throw new IllegalArgumentException("rule: cannot read \"" + part.trim() + "\" (LIMIT by IDENTITY, e.g."
            + " api by api-key)");
      }
      Limit limit = limits.get(words[0]);
      if (limit == null) {
        throw new IllegalArgumentException("rule: unknown limit \"" + words[0] + "\" (defined: "
            + String.join(", ", limits.keySet()) + ")");
      }
      String before = keyedBy.putIfAbsent(limit.name(), words[2]);
      if (before != null && !before.equals(words[2])) {
        throw new IllegalArgumentException("rule: limit \"" + limit.name() + "\" is keyed by " + before
            + " in another rule; a limit counts one identity (define a second limit for " + words[2] + ")");
      }
      out.add(Rule.of(limit, words[2]));
    }
    return out.toArray(new Rule[0]);
  }
}
