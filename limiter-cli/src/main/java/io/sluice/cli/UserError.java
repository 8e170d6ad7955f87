package io.sluice.cli;

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

  public int exitCode() {
    return exitCode;
  }
}
