package io.sluice.spring;

/**
 * A Sluice setting the application context cannot start with; the message starts with the property's
 * path ({@code sluice.limits.api.limit: must be positive, got 0}).
 */
public class SluiceConfigurationException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String property;

  public SluiceConfigurationException(String property, String message, Throwable cause) {
    super(property + ": " + message, cause);
    this.property = property;
  }

  public SluiceConfigurationException(String property, String message) {
    this(property, message, null);
  }

  /** The property's path, e.g. {@code sluice.limits.api.limit}. */
  public String property() {
    return property;
  }

  /**
   * The library's own validation message, which starts with a field's name ({@code batchSize: must be at
   * least 1, got 0}), with the field turned into its property under {@code prefix}
   * ({@code sluice.sync.batch-size: must be at least 1, got 0}); a message that names no field gets the
   * prefix alone.
   */
  static SluiceConfigurationException naming(String prefix, IllegalArgumentException e) {
    return naming(prefix, e, java.util.Map.of(), "");
  }

  /**
   * As {@link #naming(String, IllegalArgumentException)}, with the fields whose property is named
   * otherwise ({@code uri} is {@code redis-uri}), and {@code suffix} added to the message.
   */
  static SluiceConfigurationException naming(String prefix, IllegalArgumentException e,
      java.util.Map<String, String> renamed, String suffix) {
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    int colon = message.indexOf(": ");
    if (colon > 0 && message.substring(0, colon).matches("[a-z][A-Za-z]*")) {
      String field = message.substring(0, colon);
      return new SluiceConfigurationException(prefix + "." + renamed.getOrDefault(field, kebab(field)),
          message.substring(colon + 2) + suffix, e);
    }
    return new SluiceConfigurationException(prefix, message + suffix, e);
  }

  /** {@code syncInterval} as a property name: {@code sync-interval}. */
  static String kebab(String camel) {
    return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
  }
}
