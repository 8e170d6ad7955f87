package io.sluice.cli;

import java.util.Map;

/**
 * A problem the user can fix (a store that cannot be reached, an option that does not fit the
 * others): printed as one line naming the problem, without a stack trace.
 */
public final class UserError extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int exitCode;

  public UserError(String message) {
    this(message, Sluice.EXIT_USER_ERROR);
  }

  public UserError(String message, int exitCode) {
    super(message, null, false, false);
    this.exitCode = exitCode;
  }

  /**
   * A bad option, its message put in the command line's terms: "batchSize: must be ..." as
   * "--batch-size: must be ..." where {@code options} names the field's option; any other message
   * (a file's "f.yaml:3: ...") as it is. Exits with {@link Sluice#EXIT_USAGE}.
   */
  static UserError usage(String message, Map<String, String> options) {
    int colon = message.indexOf(':');
    String option = colon > 0 ? options.get(message.substring(0, colon)) : null;
    return new UserError(option == null ? message : option + message.substring(colon), Sluice.EXIT_USAGE);
  }

  public int exitCode() {
    return exitCode;
  }
}
