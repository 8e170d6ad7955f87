package io.sluice.sync.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One script of the repository's {@code lua/} folder, shipped as a resource, and its SHA-1. */
public final class LuaScript {
  private final String name;
  private final String body;
  private final String sha1;

  private LuaScript(String name, String body) {
    this.name = name;
    this.body = body;
    this.sha1 = sha1Hex(body);
  }

  /**
   * The script as Redis runs it: its name as {@code SCRIPT}, the shared helpers of
   * {@code prelude.lua} that it uses and those of its own companion {@code <name>_lib.lua} where it has
   * one (a long script's helpers, kept apart so that its file reads as its steps), then the script's
   * own file (Redis runs each script on its own, so shared code travels with every script).
   *
   * <p>Only the helpers the script names (and the helpers those name) go in: Redis runs the whole text
   * on every call, so each {@code local function} of the prelude is a closure made again per call, and
   * the unused ones cost the exact scripts about a microsecond of Redis's time per decision.
   */
  public static LuaScript load(String name) {
    return load(LuaScript.class, name);
  }

  /**
   * A script that another module ships beside {@code owner} (as {@code lua/<name>.lua} in owner's
   * package: the region coordinator's), with this jar's prelude, as {@link #load(String)} makes it.
   */
  public static LuaScript load(Class<?> owner, String name) {
    String own = read(owner, name);
    String lib = owner.getResource("lua/" + name + "_lib.lua") == null ? null : read(owner, name + "_lib");
    int mark = own.indexOf(HELPERS_MARK);
    String head = "";
    String rest = own;
    if (mark >= 0) {
      // (only a script with the mark has lines that run before the helpers: only there is the check read)
      head = own.substring(0, mark + 1);
      rest = own.substring(mark + HELPERS_MARK.length());
      String headCode = withoutCommentLines(head);
      for (String helper : helperNames(lib)) {
        if (mentions(headCode, helper)) {
          throw new IllegalStateException("lua/" + name + ".lua: the lines above '" + HELPERS_MARK.strip()
              + "' run before the helpers are made, and use " + helper);
        }
      }
    }
    return new LuaScript(name, "local SCRIPT = '" + name + "'\n" + head + preludeFor(own, lib) + "\n" + rest);
  }

  /**
   * A line of its own in a script: the helpers go in there rather than above the script's text. The
   * lines above it (code and whole-line comments) run first, with none of the helpers (nor the
   * prelude's constants) made yet: a usual case answered there costs no closure (fixed_window.lua's
   * admission in an open window: a fifth of its time in Redis went to making the eight helpers it
   * names).
   */
  static final String HELPERS_MARK = "\n-- @helpers\n";

  /** The names {@code prelude.lua} and {@code lib} (null: none) define. */
  private static List<String> helperNames(String lib) {
    List<String> names = new ArrayList<>();
    definitions(read("prelude"), names, new ArrayList<>());
    if (lib != null) {
      definitions(lib, names, new ArrayList<>());
    }
    return names;
  }

  /**
   * {@code text} without its lines that are comments whole ({@code --} first on the line). A comment
   * after code on its line, or a block comment's later lines, stay: a helper named there refuses the
   * script, which is the safe side (stripping from {@code --} to the line's end anywhere also stripped
   * a string's {@code '--'} and the code after it, and let a helper by).
   */
  private static String withoutCommentLines(String text) {
    return text.replaceAll("(?m)^[ \t]*--.*$", "");
  }

  /** A prelude definition's first line: {@code local NAME =} or {@code local function NAME(}, at the line's start. */
  private static final Pattern DEFINITION = Pattern.compile("^local (?:function )?([A-Za-z_][A-Za-z0-9_]*)",
      Pattern.MULTILINE);

  /**
   * {@code prelude.lua} with only the definitions {@code script} needs: its header (up to the first
   * definition), then each definition (with the comment lines right above it, up to the next one's)
   * whose name the script or another kept definition mentions, in the prelude's order; then, the same
   * way, those of the script's companion {@code lib} (null: none), whose own header is left out.
   */
  static String preludeFor(String script, String lib) {
    String prelude = read("prelude");
    List<String> names = new ArrayList<>();
    List<String> bodies = new ArrayList<>();
    int first = definitions(prelude, names, bodies);
    if (lib != null) {
      definitions(lib, names, bodies);
    }
    if (bodies.isEmpty()) {
      return prelude;
    }
    Set<Integer> kept = new LinkedHashSet<>();
    List<String> pending = new ArrayList<>(List.of(script));
    while (!pending.isEmpty()) {
      String text = pending.remove(pending.size() - 1);
      for (int i = 0; i < names.size(); i++) {
        if (!kept.contains(i) && mentions(text, names.get(i))) {
          kept.add(i);
          pending.add(bodies.get(i));
        }
      }
    }
    StringBuilder out = new StringBuilder(prelude.substring(0, first));
    for (int i = 0; i < bodies.size(); i++) {
      if (kept.contains(i)) {
        out.append(bodies.get(i));
      }
    }
    return out.toString();
  }

  /**
   * Adds {@code text}'s definitions, each with the comment lines right above it, to {@code names} and
   * {@code bodies}; returns where the first starts (the text's length where there is none).
   */
  private static int definitions(String text, List<String> names, List<String> bodies) {
    Matcher m = DEFINITION.matcher(text);
    List<Integer> starts = new ArrayList<>();
    while (m.find()) {
      starts.add(commentsBefore(text, m.start()));
      names.add(m.group(1));
    }
    for (int i = 0; i < starts.size(); i++) {
      bodies.add(text.substring(starts.get(i), i + 1 < starts.size() ? starts.get(i + 1) : text.length()));
    }
    return starts.isEmpty() ? text.length() : starts.get(0);
  }

  /** Where the comment lines right above the line starting at {@code line} start (no comment: {@code line}). */
  private static int commentsBefore(String text, int line) {
    int start = line;
    while (start > 0) {
      int previous = text.lastIndexOf('\n', start - 2) + 1;
      if (!text.startsWith("--", previous)) {
        break;
      }
      start = previous;
    }
    return start;
  }

  /** Whether {@code text} names {@code name} as a whole word (a call, a use; a comment counts too). */
  private static boolean mentions(String text, String name) {
    return Pattern.compile("(?<![A-Za-z0-9_])" + Pattern.quote(name) + "(?![A-Za-z0-9_])").matcher(text).find();
  }

  private static String read(String name) {
    return read(LuaScript.class, name);
  }

  private static String read(Class<?> owner, String name) {
    String resource = "lua/" + name + ".lua";
    try (InputStream in = owner.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("script " + resource + " is missing beside " + owner.getName() + " (its jar)");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("reading script " + resource, e);
    }
  }

  public String name() {
    return name;
  }

  public String body() {
    return body;
  }

  /** The digest EVALSHA takes: Redis's SHA-1 of the script text. */
  String sha1() {
    return sha1;
  }

  private static String sha1Hex(String text) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
      StringBuilder sb = new StringBuilder(40);
      for (byte b : digest) {
        sb.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
      }
      return sb.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required of every JVM", e);
    }
  }
}
