package io.sluice.envoy;

import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Compose;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.Node;

/**
 * The YAML node tree of a configuration file (RLS and RLQS files alike), kept as nodes so that every
 * error can name its line; duplicate keys refused, and a file that is not YAML refused with its line.
 */
final class YamlDocuments {
  private YamlDocuments() {
  }

  /** The document's root node, or null for an empty file; {@code file} names it in errors. */
  static Node compose(String file, String text) {
    try {
      Compose compose = new Compose(LoadSettings.builder().setLabel(file).setAllowDuplicateKeys(false).build());
      return compose.composeString(text).orElse(null);
    } catch (MarkedYamlEngineException e) {
      int line = e.getProblemMark().map(m -> m.getLine() + 1).orElse(1);
      throw new IllegalArgumentException(file + ":" + line + ": not valid YAML: "
          + (e.getProblem() == null ? e.getMessage() : e.getProblem()), e);
    } catch (YamlEngineException e) {
      throw new IllegalArgumentException(file + ": not valid YAML: " + e.getMessage(), e);
    }
  }
}
