package io.atoll.manager;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Names what guards a field or a method: {@code "loop"} means the manager's serial executor
 * ({@link Loop}) — touch it only from a task running there. Methods so marked call
 * {@link Loop#checkOnLoop()} first where a wrong caller could slip through.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.FIELD, ElementType.METHOD, ElementType.TYPE})
@interface GuardedBy {
  /** The guard, e.g. {@code "loop"}. */
  String value();
}
