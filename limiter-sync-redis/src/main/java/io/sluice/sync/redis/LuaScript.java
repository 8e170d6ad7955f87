package io.sluice.sync.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

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
   * {@code prelude.lua}, then the script's own file (Redis runs each script on its own, so shared
   * code travels with every script).
   */
  public static LuaScript load(String name) {
    return new LuaScript(name, "local SCRIPT = '" + name + "'\n" + read("prelude") + "\n" + read(name));
  }

  private static String read(String name) {
    String resource = "lua/" + name + ".lua";
    try (InputStream in = LuaScript.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("script " + resource + " is missing from the limiter-sync-redis jar");
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
