package io.sluice.sync.spi;

/** The store cannot be reached or did not answer in time. */
public class StoreUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public StoreUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
