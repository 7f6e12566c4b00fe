package io.atoll.runtime.internal.util;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * What guards a field, or what a method must hold (or run on) when called: {@code "this"} (the
 * object's monitor), the name of a lock field, or a thread such as {@code "the pod timer"}.
 * Documentation for readers; the methods that must run on a thread check it (see
 * {@link PodTimer#checkInTimer()}).
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.FIELD, ElementType.METHOD})
public @interface GuardedBy {

  /** The lock or thread. */
  String value();
}
