package io.sluice.sync;

import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The node id a process gets when it names none: the one its deployment gives it, so that a process
 * restarted in place (a container restarted in its pod, a StatefulSet's pod) comes back as the same
 * node in the store's registry instead of as one more for a few seconds, and keeps its metrics' and
 * logs' name. In order: {@code SLUICE_NODE_ID}, {@code POD_NAME} (Kubernetes' downward API, by
 * convention), {@code HOSTNAME} as containers export it (the pod name in Kubernetes, the container id in
 * Docker; a login shell does not export it), else a random id per config.
 *
 * <p>Two processes that share such a name and a store (an application and a sidecar in one pod, two
 * services in one container) count as one node in the registry: give each its own
 * {@code SLUICE_NODE_ID}. Their claims and flushes stay apart whatever their ids (see
 * {@link SyncedLimiter#owner}).
 */
final class DeploymentNodeId {
  static final String[] VARIABLES = {"SLUICE_NODE_ID", "POD_NAME", "HOSTNAME"};
  private static final int MAX_LENGTH = 64;
  private static final String CHARACTERS = "A-Za-z0-9_.:-";
  /** A node id SyncConfig takes: 1 to 64 of these characters. */
  static final Pattern VALID = Pattern.compile("[" + CHARACTERS + "]{1," + MAX_LENGTH + "}");
  private static final Pattern INVALID_CHAR = Pattern.compile("[^" + CHARACTERS + "]");

  private DeploymentNodeId() {
  }

  /** The id the environment gives, made valid (characters outside [A-Za-z0-9_.:-] become '-'), or a random one. */
  static String of(Map<String, String> environment) {
    for (String name : VARIABLES) {
      String value = environment.get(name);
      if (value == null) {
        continue;
      }
      String id = INVALID_CHAR.matcher(value.strip()).replaceAll("-");
      if (id.length() > MAX_LENGTH) {
        id = id.substring(0, MAX_LENGTH);
      }
      if (!id.isEmpty()) {
        return id;
      }
    }
    return "node-" + UUID.randomUUID().toString().substring(0, 8);
  }
}
