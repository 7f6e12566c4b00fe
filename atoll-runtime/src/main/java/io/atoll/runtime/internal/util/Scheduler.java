package io.atoll.runtime.internal.util;

/**
 * Runs a task later. A pod's rooms get one instead of a thread pool, so tests can run them on a
 * virtual clock. Implementations never throw when closed: the task is dropped.
 */
@FunctionalInterface
public interface Scheduler {

  /** Runs {@code task} after {@code delayNanos} (at once if not positive). */
  void schedule(Runnable task, long delayNanos);
}
