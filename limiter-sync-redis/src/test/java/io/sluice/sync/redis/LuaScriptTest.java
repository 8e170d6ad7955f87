package io.sluice.sync.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A script carries the prelude's helpers it names, and the helpers those name, and no other: Redis
 * runs the whole text per call, so an unused helper is a closure made for nothing on every decision.
 */
class LuaScriptTest {
  private static boolean defines(String body, String name) {
    return body.contains("local function " + name + "(") || body.contains("local " + name + " =");
  }

  @Test
  void aScriptCarriesTheHelpersItNamesAndTheirs() {
    String fixed = LuaScript.load("fixed_window").body();
    for (String used : List.of("fail", "int", "windowArgs", "digits", "ceildiv", "dropCountsBefore", "MAX_EXACT",
        "TTL_MARGIN_MS", "floordiv")) { // floordiv: through ceildiv
      assertThat(defines(fixed, used)).as(used).isTrue();
    }
    for (String unused : List.of("bucketAt", "writeBucket", "bucketArgs", "drained")) {
      assertThat(defines(fixed, unused)).as(unused).isFalse();
    }
    String gcra = LuaScript.load("gcra").body();
    for (String used : List.of("bucketArgs", "bucketAt", "writeBucket", "drained", "digits")) { // drained, digits: through the others
      assertThat(defines(gcra, used)).as(used).isTrue();
    }
    assertThat(defines(gcra, "dropCountsBefore")).isFalse();
  }

  /** A helper's own comment goes with it, and the script's text follows the helpers whole. */
  @Test
  void theTextIsTheNameTheHelpersAndTheScript() {
    String body = LuaScript.load("gcra").body();
    assertThat(body).startsWith("local SCRIPT = 'gcra'\n");
    assertThat(body).contains("-- x as Redis stores it");
    assertThat(body).doesNotContain("-- fixed_window.lua");
    assertThat(body.indexOf("local function bucketAt")).isLessThan(body.indexOf("-- gcra.lua:"));
  }

  /**
   * A script with the helpers' mark ({@code -- @helpers}, fixed_window.lua) runs the lines above it
   * first, before any helper is made: its usual case is answered there. Those lines may not use a
   * helper (nor a constant of the prelude): such a script is refused when loaded, by name.
   */
  @Test
  void theLinesAboveTheHelpersMarkRunBeforeTheHelpersAreMade() {
    String body = LuaScript.load("fixed_window").body();
    assertThat(body).startsWith("local SCRIPT = 'fixed_window'\n-- fixed_window.lua:");
    assertThat(body).doesNotContain("\n-- @helpers\n");
    int fastPath = body.indexOf("local taken");
    assertThat(fastPath).isPositive().isLessThan(body.indexOf("local function fail"));
    assertThat(body.indexOf("local MAX_EXACT")).isGreaterThan(fastPath);
    assertThat(body.indexOf("local function dropCountsBefore")).isLessThan(body.indexOf("if #KEYS ~= 1 then"));
    assertThatThrownBy(() -> LuaScript.load(LuaScriptTest.class, "head_uses_a_helper"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("lua/head_uses_a_helper.lua").hasMessageContaining("use digits");
    assertThatThrownBy(() -> LuaScript.load(LuaScriptTest.class, "head_hides_a_helper"))
        .as("a string's '--' is not a comment").isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("use digits");
  }

  /**
   * A script with a companion ({@code flush_lib.lua}) carries its helpers too, after the prelude's and
   * before its own text (they use the prelude's); the companion's header stays out, and a script
   * without one carries none of them.
   */
  @Test
  void aScriptsCompanionHelpersGoInAfterThePreludesAndBeforeItsText() {
    String flush = LuaScript.load("flush").body();
    for (String used : List.of("windowOf", "dropWindowsBefore", "firstWindowWrite", "claimAhead", "shareFor", "digits")) {
      assertThat(defines(flush, used)).as(used).isTrue();
    }
    assertThat(flush.indexOf("local function digits")).isLessThan(flush.indexOf("local function setWithSum"));
    assertThat(flush.indexOf("local function shareFor")).isLessThan(flush.indexOf("-- flush.lua:"));
    assertThat(flush).doesNotContain("-- flush_lib.lua:");
    assertThat(defines(LuaScript.load("fixed_window").body(), "windowOf")).isFalse();
  }
}
