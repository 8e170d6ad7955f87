package io.sluice.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A limit of {@code sluice.limits} (or of the rules file) on a Spring MVC handler method, or on every
 * handler method of a controller: at startup each becomes an endpoint rule for the method's mappings
 * ({@code endpoint GET /orders/{id} orders by api-key}), which the servlet filter enforces with the
 * other rules. {@code @SluiceLimit(value = "orders", by = "api-key")}.
 *
 * <p>Mappings are matched as the rules match paths: a segment with a variable or a wildcard inside it
 * ({@code file-{name}.txt}, {@code *.html}) matches any one segment, {@code {*rest}} any number.
 * The annotations are read into the rules the starter builds from {@code sluice.*}: an application that
 * defines its own {@code RulesFile} or {@code RequestLimiter} bean builds its rules itself, without them.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
@Repeatable(SluiceLimit.List.class)
public @interface SluiceLimit {

  /** The limit's name in {@code sluice.limits}. */
  String value();

  /** The identity it counts by: {@code ip}, {@code api-key}, {@code user}, {@code client}, or a custom one. */
  String by();

  /** Several limits on one method or controller. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target({ElementType.METHOD, ElementType.TYPE})
  @interface List {
    SluiceLimit[] value();
  }
}
