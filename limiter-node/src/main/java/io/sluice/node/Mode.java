package io.sluice.node;

/** What happens when a limit is exceeded. */
public enum Mode {
  /** Deny the request. */
  HARD,
  /** Allow it, count it as a soft breach and notify the listener. */
  SOFT,
  /** Decide and record as if enforced, never deny: the dry run used to roll a limit out. */
  SHADOW
}
